package hooks

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/backups"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/users"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A converged cluster is synced again and again with the same parent, and admitting it and
// rendering its children (typed objects → JSON → stored form) is most of a sync's cost. The
// parent cache remembers, per parent — keyed by its exact JSON bytes, which are everything
// admission and rendering read — the admitted cluster, its pod-template hashes, its children as
// encoded JSON for the last few replica counts, partitions and template generations, the
// members it declares for the last observed size, and its backup-agent and user-access Secret
// children for the last data. All are pure functions of their key
// (topology.Admit, PodTemplateHashes, DesiredChildren, Declare), so removing the cache changes
// nothing but speed (TestParentCacheChangesNothingButSpeed). A parent that fails admission is not
// remembered.

// Bounds: a parent holds a few KiB and its children some tens of KiB, so a full cache is a few
// MiB. Past the bound an arbitrary parent is forgotten, which degrades gracefully (unlike LRU)
// when more clusters than the bound are synced in turn.
const (
	maxCachedParents       = 128
	maxRenderingsPerParent = 4
)

type parentCache struct {
	mu      sync.Mutex
	limit   int // parents remembered; 0 remembers none
	parents map[string]*admittedParent
	// agentImage is every admitted cluster's backup-agent image (Config.AgentImage).
	agentImage string
}

func newParentCache(limit int, agentImage string) *parentCache {
	return &parentCache{limit: limit, parents: map[string]*admittedParent{}, agentImage: agentImage}
}

// admittedParent is an admitted cluster and what has been rendered from it.
type admittedParent struct {
	cluster *topology.Cluster
	// agentImage is the hook's own backup-agent image (Config.AgentImage): a new cluster's pin.
	agentImage string

	mu           sync.Mutex
	hashesDone   bool
	hashesFor    hashInput // what the hashes are for
	hashes       [2]string // coordinators, data; "?" when they could not be computed
	renderings   map[rendering][]byte
	declared     *topology.Declared
	declaredFor  topology.Replicas
	agentSecret  backups.AgentSecret // the backup-agent Secret agentChild is for
	agentChild   []byte
	accessSecret users.Access // the user-access Secret accessChild is for
	accessChild  []byte
}

// rendering is everything DesiredChildren, RenderHibernation and RenderMain read besides
// the cluster.
type rendering struct {
	replicas    topology.Replicas
	partitions  topology.Partitions
	generations topology.TemplateGenerations
	window      int32 // the hibernation window, when windowed
	windowed    bool
	mainPod     string // the MAIN's pod, which its budget protects and -rw selects (topology.RenderMain); "" for none
	heldPod     string // the pod the observed MAIN's budget selects, which <cluster>-data leaves out; "" for none
	// restart is the certificate restart stamp of the pod templates
	// (topology.AnnotationCertificateRestart), record the rotation's record on the StatefulSets.
	restart string
	record  topology.CertificateRecord
	// agent is the backup agent's pin (its image in the data pods' template), records what the
	// StatefulSets record of their templates (topology.RenderTemplateRecords).
	agent   topology.AgentPin
	records [2]topology.TemplateRecord
}

// hashInput is what the pod-template hashes depend on besides the cluster: the certificate
// restart stamp and the backup agent's image.
type hashInput struct {
	restart, agentImage string
}

// admit returns the admitted parent for raw, admitting it (decodeParent) unless it is cached.
func (pc *parentCache) admit(raw []byte) (*admittedParent, error) {
	pc.mu.Lock()
	p := pc.parents[string(raw)]
	pc.mu.Unlock()
	if p != nil {
		return p, nil
	}
	cluster, err := decodeParent(raw)
	if err != nil {
		return nil, err
	}
	p = &admittedParent{cluster: cluster, agentImage: pc.agentImage}
	if pc.limit <= 0 {
		return p, nil
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if old := pc.parents[string(raw)]; old != nil {
		return old, nil // admitted meanwhile by a concurrent sync
	}
	if len(pc.parents) >= pc.limit {
		for k := range pc.parents {
			delete(pc.parents, k)
			break
		}
	}
	pc.parents[string(raw)] = p
	return p, nil
}

// templateHashes are topology.PodTemplateHashes of the cluster with the certificate restart
// stamp restart and the backup agent's image agentImage (coordinators first), "?" for both when
// they cannot be computed (a hash that cannot be computed counts as a change, which holds every
// pod).
func (p *admittedParent) templateHashes(restart, agentImage string) [2]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in := (hashInput{restart, agentImage}); !p.hashesDone || p.hashesFor != in {
		c, d, err := topology.PodTemplateHashes(p.cluster.WithCertificateRestart(restart).WithAgentImage(agentImage))
		if err != nil {
			c, d = "?", "?"
		}
		p.hashes, p.hashesDone, p.hashesFor = [2]string{c, d}, true, in
	}
	return p.hashes
}

// declare is the cluster's topology.Declared for current, remembered for the last current: the
// planner only reads a Declared, so syncs may share one; its lists are clipped, so that even an
// append to one copies rather than writes into the shared array.
func (p *admittedParent) declare(current topology.Replicas) topology.Declared {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.declared == nil || p.declaredFor != current {
		d := p.cluster.Declare(current)
		d.Coordinators, d.DataInstances = slices.Clip(d.Coordinators), slices.Clip(d.DataInstances)
		d.RetiringCoordinators, d.RetiringDataInstances = slices.Clip(d.RetiringCoordinators), slices.Clip(d.RetiringDataInstances)
		p.declared, p.declaredFor = &d, current
	}
	return *p.declared
}

// children is the JSON array of topology.DesiredChildren for r, shaped by
// topology.RenderHibernation and topology.RenderMain (the budgets and, with a MAIN, the -rw
// Service).
func (p *admittedParent) children(r rendering) ([]byte, error) {
	p.mu.Lock()
	raw, ok := p.renderings[r]
	p.mu.Unlock()
	if ok {
		return raw, nil
	}
	c := p.cluster.WithCertificateRestart(r.restart).WithAgentImage(r.agent.Image)
	children, err := topology.DesiredChildren(c, r.replicas, r.partitions, r.generations)
	if err != nil {
		return nil, err
	}
	topology.RenderCertificateRecord(p.cluster, children, r.record)
	topology.RenderTemplateRecords(p.cluster, children, r.records, r.agent)
	var window *int32
	if r.windowed {
		window = &r.window
	}
	if err := topology.RenderHibernation(p.cluster, children, window); err != nil {
		return nil, err
	}
	if children, err = topology.RenderMain(p.cluster, children, r.mainPod, r.heldPod); err != nil {
		return nil, err
	}
	if raw, err = json.Marshal(children); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.renderings == nil || len(p.renderings) >= maxRenderingsPerParent {
		p.renderings = map[rendering][]byte{}
	}
	p.renderings[r] = raw
	return raw, nil
}

// agentSecretChild is backups.AgentSecretChild for s (nil for s without data), remembered for
// the last s: the Secret is the same pass after pass.
func (p *admittedParent) agentSecretChild(s backups.AgentSecret) ([]byte, error) {
	if s.Data == nil {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.agentChild == nil || !maps.Equal(p.agentSecret.Data, s.Data) || !maps.Equal(p.agentSecret.Annotations, s.Annotations) {
		raw, err := backups.AgentSecretChild(p.cluster, s)
		if err != nil {
			return nil, err
		}
		p.agentSecret, p.agentChild = backups.AgentSecret{Data: maps.Clone(s.Data), Annotations: maps.Clone(s.Annotations)}, raw
	}
	return p.agentChild, nil
}

// userAccessChild is the user-access Secret child of s as JSON (nil for s without data: a
// cluster without spec.auth), remembered for the last s: the Secret is the same pass after pass.
func (p *admittedParent) userAccessChild(s users.Access) ([]byte, error) {
	if s.Data == nil {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.accessChild == nil || !maps.Equal(p.accessSecret.Data, s.Data) || !maps.Equal(p.accessSecret.Annotations, s.Annotations) {
		secret, err := topology.UserAccessSecret(p.cluster, s.Data, s.Annotations)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(secret)
		if err != nil {
			return nil, err
		}
		p.accessSecret, p.accessChild = users.Access{Data: maps.Clone(s.Data), Annotations: maps.Clone(s.Annotations)}, raw
	}
	return p.accessChild, nil
}

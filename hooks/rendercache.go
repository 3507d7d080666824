package hooks

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/users"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A converged cluster is synced again and again with the same parent, and admitting it and
// rendering its children (typed objects → JSON → stored form) is most of a sync's cost. The
// parent cache remembers, per parent — keyed by its exact JSON bytes, which are everything
// admission and rendering read — the admitted cluster, its pod-template hashes, its children as
// encoded JSON for the last few replica counts, partitions and template generations, the
// members it declares for the last observed size. All are pure functions of their key
// (topology.Admit, PodTemplateHashes, Render, Declare), so removing the cache changes nothing but
// speed (TestParentCacheChangesNothingButSpeed). A parent that fails admission is not remembered.
//
// Each memo is kept because the converged sync needs it: measured alternately in one run against
// the bare JSON round trip of the same bytes (docs/performance.md), a converged 3/2 sync costs
// 0.8–0.9 of it with all of them and 3.9 without the admitted parent, 2.6 without the encoded
// children, 1.5 without the hashes and the declared members. The generated Secret children are
// rendered every sync: remembering them saved no measurable CPU.

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

	mu          sync.Mutex
	hashesDone  bool
	hashesFor   hashInput // what the hashes are for
	hashes      [2]string // coordinators, data; "?" when they could not be computed
	renderings  map[renderKey][]byte
	declared    *topology.Declared
	declaredFor topology.Replicas
}

// renderKey is a topology.Rendering as a map key: the hibernation window by value.
type renderKey struct {
	rendering topology.Rendering // its Window nil
	window    int32
	windowed  bool
}

func keyOf(r topology.Rendering) renderKey {
	k := renderKey{rendering: r}
	if r.Window != nil {
		k.window, k.windowed = *r.Window, true
		k.rendering.Window = nil
	}
	return k
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
		c, d, err := topology.PodTemplateHashes(p.cluster, restart, agentImage)
		if err != nil {
			c, d = "?", "?"
		}
		p.hashes, p.hashesDone, p.hashesFor = [2]string{c, d}, true, in
	}
	return p.hashes
}

// declare is the cluster's topology.Declared for span, remembered for the last span: the
// planner only reads a Declared, so syncs may share one; its lists are clipped, so that even an
// append to one copies rather than writes into the shared array.
func (p *admittedParent) declare(span topology.Replicas) topology.Declared {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.declared == nil || p.declaredFor != span {
		d := p.cluster.Declare(span)
		d.Coordinators, d.DataInstances = slices.Clip(d.Coordinators), slices.Clip(d.DataInstances)
		d.RetiringCoordinators, d.RetiringDataInstances = slices.Clip(d.RetiringCoordinators), slices.Clip(d.RetiringDataInstances)
		p.declared, p.declaredFor = &d, span
	}
	return *p.declared
}

// children is the JSON array of topology.Render for r.
func (p *admittedParent) children(r topology.Rendering) ([]byte, error) {
	key := keyOf(r)
	p.mu.Lock()
	raw, ok := p.renderings[key]
	p.mu.Unlock()
	if ok {
		return raw, nil
	}
	children, err := topology.Render(p.cluster, r)
	if err != nil {
		return nil, err
	}
	if raw, err = json.Marshal(children); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.renderings == nil || len(p.renderings) >= maxRenderingsPerParent {
		p.renderings = map[renderKey][]byte{}
	}
	p.renderings[key] = raw
	return raw, nil
}

// agentSecretChild is backupcontroller.AgentSecretChild for s (nil for s without data).
func (p *admittedParent) agentSecretChild(s backupcontroller.AgentSecret) ([]byte, error) {
	if s.Data == nil {
		return nil, nil
	}
	return backupcontroller.AgentSecretChild(p.cluster, s)
}

// userAccessChild is the user-access Secret child of s as JSON (nil for s without data: a
// cluster without spec.auth).
func (p *admittedParent) userAccessChild(s users.Access) ([]byte, error) {
	if s.Data == nil {
		return nil, nil
	}
	secret, err := topology.UserAccessSecret(p.cluster, s.Data, s.Annotations)
	if err != nil {
		return nil, err
	}
	return json.Marshal(secret)
}

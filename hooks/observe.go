package hooks

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/clustersecrets"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// observation is what a sync request says about the cluster's Kubernetes objects, read in one
// walk of its StatefulSets, Pods and Secrets; every stage of the pass reads it.
type observation struct {
	// span is how many ordinals of each role may hold a pod or a registered member, the upper
	// end of its retiring range: the observed StatefulSet's
	// spec.replicas (the hook's own prior output), raised to its status.replicas and to one past
	// the highest ordinal of a pod that still exists. A cache that lags behind a shrink can thus
	// only widen the range, never hide a pod whose member may still be registered.
	span topology.Replicas
	// returned is the observed StatefulSets' spec.replicas alone: what returning nothing new
	// means.
	returned topology.Replicas
	// reconciled: each role's StatefulSet controller has acted on its spec (observedGeneration,
	// replicas and readyReplicas all equal to spec); coordinators first.
	reconciled [2]bool
	ready      map[string]bool // pod name → Ready and not terminating
	// clusterTLS are the pods whose memgraph container runs with intra-cluster TLS
	// (topology.ArgClusterCertFile), by name: what RELOAD INTRA_CLUSTER TLS can reload there,
	// whatever the spec now asks.
	clusterTLS map[string]bool
	// podNodes are the pods' spec.nodeName (pod name → node; absent while unscheduled), nodes
	// the Nodes among the related objects, and mainBudgetPod the pod the observed <cluster>-main
	// PodDisruptionBudget selects: what the drain stage and the MAIN's budget read.
	podNodes      map[string]string
	nodes         []planner.Node
	mainBudgetPod string
	// sets are each role's StatefulSet and pods as the rollout reads them (Span and
	// TemplateChanging are filled in by rolloutWorkloads), hashes the pod-template hash the hook
	// rendered into each set last; coordinators first.
	sets   [2]planner.RolloutSet
	hashes [2]string
	// certificates are the StatefulSets' records of a certificate rotation
	// (topology.CertificateRecord); coordinators first.
	certificates [2]topology.CertificateRecord
	// records are the StatefulSets' records of what their pod templates were rendered from, and
	// stamps the stamps those templates carry; agent is the backup agent's pin on the data
	// StatefulSet; coordinators first.
	records [2]topology.TemplateRecord
	stamps  [2]topology.TemplateStamps
	agent   topology.AgentPin
	window  *int32               // the data StatefulSet's hibernation window (spec.ordinals.start)
	tls     clustersecrets.Trust // from the spec.tls Secret among the related objects
	auth    clustersecrets.Auth  // from the spec.auth Secret among the related objects
	ignored topology.Warnings    // evidence beyond a role's ceiling
	// restore is where spec.bootstrap.fromBackup's backup is (nil when the spec restores nothing).
	restore *backupcontroller.RestoreSource
	// backupCopies are what the backup-agent Secret carries for the cluster's backups
	// (backupcontroller.CopyAccess; nil without spec.backup.destination).
	backupCopies *backupcontroller.Copied
	// problems are why the cluster's pods cannot start (topology.PodProblems), missingSecrets the
	// Secrets the spec names that are not among the related objects (topology.MissingSecrets).
	problems       []topology.PodProblem
	missingSecrets []topology.MissingSecret
	// frozen are, while paused, the StatefulSets, Services, PodDisruptionBudgets and Secrets in
	// the parent's namespace as observed, by type then key: the children a paused pass returns.
	frozen []map[string]any
	// external is what spec.externalAccess's addresses come from (readExternalAccess); empty
	// without it.
	external topology.ExternalObservation
	// agentSecret is the data (base64 values) of the backup-agent Secret child when it exists
	// and is complete (topology.BackupAgentSecretComplete); otherwise the shell generates it
	// (ensureAgentSecret) before rendering.
	agentSecret map[string]string
}

// observe reads the StatefulSets among the children, the Pods and the spec's Secrets among the
// related objects, and, while paused, the children to return as observed. Objects in other
// namespaces are ignored. Every size they state is evidence bounded by the role's ceiling
// (v1alpha1.MaxCoordinators, v1alpha1.MaxDataInstances): a StatefulSet's replicas or a pod ordinal
// beyond it cannot describe a member the hook declared, so it is ignored with a warning, and
// nothing is ever allocated in proportion to it.
func observe(req *syncRequest, c *topology.Cluster) (observation, error) {
	o := observation{ready: map[string]bool{}, podNodes: map[string]string{}, clusterTLS: map[string]bool{}}
	rs := topology.RoleSets(c.Name())
	sets, err := wire.Entries(req.Children, "children", wire.StatefulSetKey)
	if err != nil {
		return o, err
	}
	for _, e := range sets {
		for i, r := range rs {
			if e.Obj.Metadata.In(c.Namespace()) && e.Obj.Metadata.Name == r.Set {
				if err := o.readSet(i, r, e.Obj, wire.EntryPath("children", wire.StatefulSetKey, e.Key)); err != nil {
					return o, err
				}
			}
		}
	}
	pods, err := wire.Entries(req.Related, "related", wire.PodKey)
	if err != nil {
		return o, err
	}
	var podStates []topology.PodObservation
	for _, e := range pods {
		if e.Obj.Metadata.In(c.Namespace()) {
			if err := o.readPod(rs, e.Obj, wire.EntryPath("related", wire.PodKey, e.Key)); err != nil {
				return o, err
			}
			podStates = append(podStates, podObservation(e.Obj, o.ready[e.Obj.Metadata.Name]))
		}
	}
	o.problems = topology.PodProblems(podStates)
	if o.tls, o.auth, err = clustersecrets.Read(req.Related, c); err != nil {
		return o, err
	}
	if o.missingSecrets, err = clustersecrets.Missing(req.Related, c); err != nil {
		return o, err
	}
	if err := o.readNodesAndBudget(req, c); err != nil {
		return o, err
	}
	if err := o.readExternalAccess(req, c); err != nil {
		return o, err
	}
	if o.agentSecret, err = backupcontroller.ObservedAgentSecret(req.Children, c); err != nil {
		return o, err
	}
	if o.restore, o.backupCopies, err = backupcontroller.ObserveCluster(req.Related, c, o.tls.CAPEM, o.tls.Problem, o.auth.Creds, o.auth.Problem); err != nil {
		return o, err
	}
	if paused, _ := c.Paused(); paused {
		o.frozen, err = observedChildren(req, c.Namespace())
	}
	return o, err
}

// readSet reads role i's StatefulSet: spec.replicas (the API server's default 1 when absent),
// status.replicas and readyReplicas, the generations, the revisions and the hook's annotations.
// A replica count beyond the role's ceiling is ignored with a warning, and a StatefulSet
// reporting one is not reconciled.
func (o *observation) readSet(i int, r topology.RoleSet, s *wire.Object, path string) error {
	for _, n := range []struct {
		field    string
		value    int64
		limit    int64
		optional bool
	}{
		{"spec.replicas", deref(s.Spec.Replicas), math.MaxInt32, true},
		{"spec.ordinals.start", deref(s.Spec.Ordinals.Start), math.MaxInt32, true},
		{"status.replicas", int64(s.Status.Replicas), math.MaxInt32, false},
		{"status.readyReplicas", int64(s.Status.ReadyReplicas), math.MaxInt32, false},
		{"metadata.generation", s.Metadata.Generation, math.MaxInt64, false},
		{"status.observedGeneration", s.Status.ObservedGeneration, math.MaxInt64, false},
	} {
		if n.value < 0 {
			return wire.Badf("%s.%s must be an integer between 0 and %d, got %d", path, n.field, n.limit, n.value)
		}
	}
	want, have, trusted := int32(1), s.Status.Replicas, true
	if s.Spec.Replicas != nil {
		want = *s.Spec.Replicas
	}
	if want > r.Ceiling {
		o.ignored.Addf("StatefulSet %s: spec.replicas %d is %s", r.Set, want, r.Beyond())
		want, trusted = 0, false
	}
	if have > r.Ceiling {
		o.ignored.Addf("StatefulSet %s: status.replicas %d is %s", r.Set, have, r.Beyond())
		have, trusted = 0, false
	}
	*role32(&o.returned, i), *role32(&o.span, i) = want, max(want, have)
	o.reconciled[i] = trusted && s.Status.ObservedGeneration >= s.Metadata.Generation && have == want && s.Status.ReadyReplicas == want
	a := s.Metadata.Annotations
	o.certificates[i] = topology.CertificateRecord{Restart: a.CertificateRestart, Seen: a.CertificateSeen, Reloaded: a.CertificateReloaded}
	o.records[i] = topology.ReadTemplateRecord(a.SpecGeneration, a.HookRelease, a.TemplateChange)
	stamps := s.Spec.Template.Metadata.Annotations
	o.stamps[i] = topology.TemplateStamps{RestartedAt: stamps.RestartedAt, CertificateRestart: stamps.CertificateRestart}
	if i == 1 {
		o.agent = topology.ReadAgentPin(a.AgentImage, a.AgentProtocol)
	}
	o.hashes[i], o.sets[i] = s.Metadata.Annotations.TemplateHash, planner.RolloutSet{
		Exists: true, Generation: s.Metadata.Generation, ObservedGeneration: s.Status.ObservedGeneration,
		UpdateRevision: s.Status.UpdateRevision, CurrentRevision: s.Status.CurrentRevision,
	}
	// The hook's own record; anything but a positive integer reads as unknown.
	if n, err := strconv.ParseInt(s.Metadata.Annotations.TemplateGeneration, 10, 64); err == nil && n > 0 {
		o.sets[i].TemplateGeneration = n
	}
	if i == 1 {
		o.window = s.Spec.Ordinals.Start
	}
	return nil
}

// readPod reads a pod's readiness (condition Ready=True and not being deleted), the replica
// count its ordinal needs, and for a pod of a role within its ceiling what the rollout reads: its
// revision label, deletion, creationTimestamp, the memgraph container's image and whether it
// runs with intra-cluster TLS.
func (o *observation) readPod(rs [2]topology.RoleSet, p *wire.Object, path string) error {
	var created metav1.Time
	if at := p.Metadata.CreationTimestamp; at != "" {
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return wire.Badf("%s.metadata.creationTimestamp must be an RFC 3339 time, got the string %q", path, v1alpha1.Clip(at))
		}
		created = metav1.NewTime(t)
	}
	name, terminating := p.Metadata.Name, p.Metadata.DeletionTimestamp != ""
	ready := false
	for _, cond := range p.Status.Conditions {
		if cond.Type == "Ready" {
			ready = cond.Status == "True" && !terminating
			break
		}
	}
	image, clusterTLS := "", false
	for _, c := range p.Spec.Containers {
		if c.Name == topology.ContainerName {
			image = c.Image
			clusterTLS = slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, topology.ArgClusterCertFile) })
			break
		}
	}
	o.ready[name] = ready
	if clusterTLS {
		o.clusterTLS[name] = true
	}
	if p.Spec.NodeName != "" {
		o.podNodes[name] = p.Spec.NodeName
	}
	for i, r := range rs {
		*role32(&o.span, i) = max(*role32(&o.span, i), r.OrdinalBound(name, &o.ignored))
		if index, ok := r.PodIndex(name); ok {
			o.sets[i].Pods = append(o.sets[i].Pods, planner.RolloutPod{Index: index, Ready: ready,
				Terminating: terminating, Revision: p.Metadata.Labels.Revision, Created: created, Image: image,
				Node: p.Spec.NodeName, ClusterTLS: clusterTLS})
		}
	}
	return nil
}

func deref(n *int32) int64 {
	if n == nil {
		return 0
	}
	return int64(*n)
}

// role32 is role i's count (coordinators first).
func role32(r *topology.Replicas, i int) *int32 {
	if i == 0 {
		return &r.Coordinators
	}
	return &r.DataInstances
}

// observedChildren are the StatefulSets, Services and PodDisruptionBudgets in namespace as
// observed, by type then key, each frozen (topology.FrozenChild) from its bytes as sent, which
// the decode kept for a parent that may be paused (syncRequest): a paused cluster's children are
// neither changed nor deleted, and a child that does not exist is not created.
func observedChildren(req *syncRequest, namespace string) ([]map[string]any, error) {
	out := []map[string]any{}
	for _, typeKey := range []string{wire.StatefulSetKey, wire.ServiceKey, wire.BudgetKey, wire.SecretKey} {
		children, err := wire.Entries(req.Children, "children", typeKey)
		if err != nil {
			return nil, err
		}
		for _, e := range children {
			if !e.Obj.Metadata.In(namespace) {
				continue
			}
			raw, kept := req.childBytes.bytes[typeKey][e.Key]
			if !kept { // only a parent sent twice, not paused before the children and paused after them, leaves none
				return nil, wire.Badf(`request body has more than one "parent", and the children follow one that is not paused: `+
					"%s cannot be returned as observed", wire.EntryPath("children", typeKey, e.Key))
			}
			var child map[string]any
			if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &child); err != nil {
				return nil, err
			}
			frozen, err := topology.FrozenChild(child)
			if err != nil {
				return nil, err
			}
			out = append(out, frozen)
		}
	}
	return out, nil
}

// rolloutWorkloads is what the rollout needs from this request: each set as observed, with the
// pods it has or had (span), knowing whether the children this sync returns change its pod
// template (the hashes topology.Render will annotate, admittedParent.templateHashes).
func (o *observation) rolloutWorkloads(c *topology.Cluster, desired [2]string, now time.Time) *planner.Workloads {
	allowDowngrade, _ := c.AllowDowngrade() // an ambiguous value is no permission; status says so
	sets, provenance := o.sets, o.provenance(c)
	for i := range sets {
		sets[i].Span = *role32(&o.span, i)
		sets[i].TemplateChanging = sets[i].Exists && o.hashes[i] != desired[i]
		sets[i].Provenance = provenance[i]
		sets[i].Pods = append([]planner.RolloutPod(nil), sets[i].Pods...)
	}
	return &planner.Workloads{Coordinators: sets[0], Data: sets[1], Now: metav1.NewTime(now),
		StepTimeout: metav1.Duration{Duration: time.Duration(c.StepTimeoutSeconds()) * time.Second},
		Image:       c.Image(), AllowDowngrade: allowDowngrade, ClusterTLS: c.IntraClusterTLS()}
}

// certificateRecord is the certificate rotation's record on the observed StatefulSets: the
// coordinators' unless it is empty. Its Restart is the stamp the pod templates carry
// (topology.AnnotationCertificateRestart).
func (o *observation) certificateRecord() topology.CertificateRecord {
	if o.certificates[0] != (topology.CertificateRecord{}) {
		return o.certificates[0]
	}
	return o.certificates[1]
}

// readNodesAndBudget reads what drains need: the Nodes among the related objects
// (cluster-scoped, keyed by name; only metadata.name, spec.unschedulable and spec.taints[].key),
// and the pod the observed <cluster>-main PodDisruptionBudget selects.
func (o *observation) readNodesAndBudget(req *syncRequest, c *topology.Cluster) error {
	nodes, err := wire.Entries(req.Related, "related", wire.NodeKey)
	if err != nil {
		return err
	}
	o.nodes = make([]planner.Node, 0, len(nodes))
	for _, e := range nodes {
		n := planner.Node{Name: e.Obj.Metadata.Name, Unschedulable: e.Obj.Spec.Unschedulable}
		for _, t := range e.Obj.Spec.Taints {
			n.TaintKeys = append(n.TaintKeys, t.Key)
		}
		o.nodes = append(o.nodes, n)
	}
	budgets, err := wire.Entries(req.Children, "children", wire.BudgetKey)
	if err != nil {
		return err
	}
	for _, e := range budgets {
		if e.Obj.Metadata.In(c.Namespace()) && e.Obj.Metadata.Name == topology.MainBudgetName(c.Name()) {
			o.mainBudgetPod = e.Obj.Spec.Selector.MatchLabels.PodName
		}
	}
	return nil
}

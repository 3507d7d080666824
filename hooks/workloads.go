package hooks

import (
	"math"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const (
	statefulSetKey = "StatefulSet.apps/v1"
	serviceKey     = "Service.v1"
	podKey         = "Pod.v1"
)

// workloads is what the request tells us about the cluster's Kubernetes objects.
type workloads struct {
	// current is the upper end of each role's retiring range: the observed StatefulSet's
	// spec.replicas (the hook's own prior output), raised to its status.replicas and to one past
	// the highest ordinal of a pod that still exists. A cache that lags behind a shrink can thus
	// only widen the range, never hide a pod whose member may still be registered.
	current topology.Replicas
	// specReplicas is the observed StatefulSets' spec.replicas alone: what returning nothing new
	// means.
	specReplicas topology.Replicas
	// settled is whether each StatefulSet's controller has caught up with its spec
	// (observedGeneration, replicas and readyReplicas all equal to spec).
	settledCoordinators, settledData bool
	readyPods                        map[string]bool // pod name → Ready and not terminating
	tls                              boltTrust       // from the spec.tls Secret among the related objects
	auth                             memgraphAuth    // from the spec.auth Secret among the related objects
	ignored                          warnings        // evidence beyond a role's ceiling
	ops                              dayOps          // what pause and hibernation read
	// rollout is what each role's StatefulSet and pods say about its rollout (coordinators
	// first).
	rollout [2]rolloutEvidence
}

// rolloutWorkloads is what the rollout needs from this request: each set as observed, knowing
// whether the children this sync returns change its pod template (the hashes DesiredChildren
// will annotate, admittedParent.templateHashes).
func (w workloads) rolloutWorkloads(c *topology.Cluster, coordinatorHash, dataHash string, now time.Time) *planner.Workloads {
	return &planner.Workloads{
		Coordinators: w.rollout[0].rolloutSet(w.current.Coordinators, coordinatorHash),
		Data:         w.rollout[1].rolloutSet(w.current.DataInstances, dataHash),
		Now:          metav1.NewTime(now),
		StepTimeout:  metav1.Duration{Duration: time.Duration(c.StepTimeoutSeconds()) * time.Second},
		Image:        c.Image(),
		// An ambiguous value is no permission (topology.Cluster.AllowDowngrade); status says so.
		AllowDowngrade: allowDowngrade(c),
	}
}

func allowDowngrade(c *topology.Cluster) bool {
	allowed, _ := c.AllowDowngrade()
	return allowed
}

// observeWorkloads reads the StatefulSets among the children and the Pods among the related
// objects. Objects in other namespaces are ignored. Every size they state is evidence bounded by
// the role's ceiling (topology.MaxCoordinators, topology.MaxDataInstances): a StatefulSet's
// replicas or a pod ordinal beyond it cannot describe a member the hook declared, so it is
// ignored with a warning, and nothing is ever allocated in proportion to it.
func observeWorkloads(req *syncRequest, cluster, namespace string) (workloads, error) {
	w := workloads{readyPods: map[string]bool{}}
	coordinators, data := roles(cluster)[0], roles(cluster)[1]
	sets, err := objectsOf(req.Children, statefulSetKey, "children")
	if err != nil {
		return w, err
	}
	for _, e := range sets {
		if ns := metaString(e.obj, "namespace"); ns != "" && ns != namespace {
			continue
		}
		var r role
		switch metaString(e.obj, "name") {
		case coordinators.set:
			r = coordinators
		case data.set:
			r = data
		default:
			continue
		}
		st, err := statefulSetState(e.obj, "", r, &w.ignored)
		if err != nil {
			return w, e.named("children", statefulSetKey, err, func(path string) error {
				_, err := statefulSetState(e.obj, path, r, &warnings{})
				return err
			})
		}
		if r == coordinators {
			w.specReplicas.Coordinators, w.current.Coordinators, w.settledCoordinators = st.spec, st.current, st.settled
		} else {
			w.specReplicas.DataInstances, w.current.DataInstances, w.settledData = st.spec, st.current, st.settled
		}
	}
	pods, err := req.podEntries()
	if err != nil {
		return w, err
	}
	for _, p := range pods {
		if ns := p.facts.namespace; ns != "" && ns != namespace {
			continue
		}
		if p.readyErr != nil {
			return w, p.readyError()
		}
		name := p.facts.name
		w.readyPods[name] = p.facts.ready
		w.current.Coordinators = max(w.current.Coordinators, ordinalBound(name, coordinators, &w.ignored))
		w.current.DataInstances = max(w.current.DataInstances, ordinalBound(name, data, &w.ignored))
	}
	return w, nil
}

// ordinalBound is the replica count the role's StatefulSet needs to hold pod: its ordinal minus
// the set's first ordinal, plus one; 0 for a pod of another set, and 0 with a warning for an
// ordinal beyond the role's ceiling.
func ordinalBound(pod string, r role, ignored *warnings) int32 {
	n, ok := topology.PodOrdinal(r.set, pod)
	if !ok {
		return 0
	}
	if n > int(r.ceiling)+r.first-1 {
		ignored.addf("Pod %s: ordinal %s is %s", topology.Clip(pod), topology.Clip(strings.TrimPrefix(pod, r.set+"-")), r.beyond())
		return 0
	}
	if n < r.first {
		return 0
	}
	return int32(n - r.first + 1)
}

// setState is what one of the cluster's StatefulSets says.
type setState struct {
	spec    int32 // spec.replicas: what returning nothing new means (0 when ignored)
	current int32 // the larger of spec and status replicas
	settled bool  // the StatefulSet controller has caught up with the spec
}

// statefulSetState reads spec.replicas (the API server's default 1 when absent), status.replicas
// and readyReplicas, and the generations. A replica count beyond the role's ceiling is ignored
// with a warning, and a StatefulSet reporting one is not settled.
func statefulSetState(sts object, path string, r role, ignored *warnings) (setState, error) {
	meta, _ := sts["metadata"].(map[string]any) // objectsOf checked metadata.name
	spec, err := objectAt(sts, "spec", path)
	if err != nil {
		return setState{}, err
	}
	status, err := objectAt(sts, "status", path)
	if err != nil {
		return setState{}, err
	}
	want, present, err := int32At(spec, "replicas", path+".spec")
	if err != nil {
		return setState{}, err
	}
	if !present {
		want = 1
	}
	have, _, err := int32At(status, "replicas", path+".status")
	if err != nil {
		return setState{}, err
	}
	ready, _, err := int32At(status, "readyReplicas", path+".status")
	if err != nil {
		return setState{}, err
	}
	gen, _, err := intAt(meta, "generation", path+".metadata", math.MaxInt64)
	if err != nil {
		return setState{}, err
	}
	observedGen, _, err := intAt(status, "observedGeneration", path+".status", math.MaxInt64)
	if err != nil {
		return setState{}, err
	}
	trusted := true
	if want > r.ceiling {
		ignored.addf("StatefulSet %s: spec.replicas %d is %s", r.set, want, r.beyond())
		want, trusted = 0, false
	}
	if have > r.ceiling {
		ignored.addf("StatefulSet %s: status.replicas %d is %s", r.set, have, r.beyond())
		have, trusted = 0, false
	}
	settled := trusted && observedGen >= gen && have == want && ready == want
	return setState{spec: want, current: max(want, have), settled: settled}, nil
}

// podReady is true for a pod with condition Ready=True that is not being deleted.
func podReady(pod object, path string) (bool, error) {
	meta, _ := pod["metadata"].(map[string]any) // objectsOf checked metadata.name
	deleting, err := stringAt(meta, "deletionTimestamp", path+".metadata")
	if err != nil {
		return false, err
	}
	status, err := objectAt(pod, "status", path)
	if err != nil {
		return false, err
	}
	conds, err := listAt(status, "conditions", path+".status")
	if err != nil {
		return false, err
	}
	for i, c := range conds {
		condPath := indexPath(path, ".status.conditions", i)
		cond, ok := c.(map[string]any)
		if !ok {
			return false, wrongType(condPath, "an object", c)
		}
		typ, err := stringAt(cond, "type", condPath)
		if err != nil {
			return false, err
		}
		value, err := stringAt(cond, "status", condPath)
		if err != nil {
			return false, err
		}
		if typ == "Ready" {
			return value == "True" && deleting == "", nil
		}
	}
	return false, nil
}

// unreadyPods lists the declared pods that are missing or not Ready, sorted.
func (w workloads) unreadyPods(d topology.Declared) []string {
	var waiting []string
	for _, c := range d.Coordinators {
		if !w.readyPods[c.Pod] {
			waiting = append(waiting, c.Pod)
		}
	}
	for _, di := range d.DataInstances {
		if !w.readyPods[di.Pod] {
			waiting = append(waiting, di.Pod)
		}
	}
	sort.Strings(waiting)
	return waiting
}

// atDeclared reports whether both StatefulSets are at the declared size and their controller
// has caught up with it.
func (w workloads) atDeclared(d topology.Declared) bool {
	return w.current.Coordinators == int32(len(d.Coordinators)) &&
		w.current.DataInstances == int32(len(d.DataInstances)) &&
		w.settledCoordinators && w.settledData
}

func (w workloads) readyCount(pods []string) int32 {
	var n int32
	for _, p := range pods {
		if w.readyPods[p] {
			n++
		}
	}
	return n
}

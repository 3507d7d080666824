package hooks

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

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
}

// observeWorkloads reads the StatefulSets among the children and the Pods among the related
// objects. Objects in other namespaces are ignored.
func observeWorkloads(req *syncRequest, cluster, namespace string) (workloads, error) {
	w := workloads{readyPods: map[string]bool{}}
	sets, err := objectsOf(req.Children, statefulSetKey, "children")
	if err != nil {
		return w, err
	}
	for _, sts := range sets {
		if ns := metaString(sts, "namespace"); ns != "" && ns != namespace {
			continue
		}
		spec, replicas, settled, err := statefulSetState(sts)
		if err != nil {
			return w, err
		}
		switch metaString(sts, "name") {
		case topology.CoordinatorSetName(cluster):
			w.specReplicas.Coordinators, w.current.Coordinators, w.settledCoordinators = spec, replicas, settled
		case topology.DataSetName(cluster):
			w.specReplicas.DataInstances, w.current.DataInstances, w.settledData = spec, replicas, settled
		}
	}
	pods, err := objectsOf(req.Related, podKey, "related")
	if err != nil {
		return w, err
	}
	for _, pod := range pods {
		if ns := metaString(pod, "namespace"); ns != "" && ns != namespace {
			continue
		}
		name := metaString(pod, "name")
		w.readyPods[name] = podReady(pod)
		w.current.Coordinators = max(w.current.Coordinators, ordinalBound(name, topology.CoordinatorSetName(cluster), topology.FirstCoordinatorID))
		w.current.DataInstances = max(w.current.DataInstances, ordinalBound(name, topology.DataSetName(cluster), topology.FirstDataOrdinal))
	}
	return w, nil
}

// ordinalBound is the replica count a StatefulSet named set needs to hold pod: its ordinal
// minus the set's first ordinal, plus one; 0 for a pod of another set.
func ordinalBound(pod, set string, first int) int32 {
	rest, ok := strings.CutPrefix(pod, set+"-")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < first || strconv.Itoa(n) != rest {
		return 0
	}
	return int32(n - first + 1)
}

// statefulSetState returns spec.replicas, the larger of spec and status replicas, and whether
// the StatefulSet controller has caught up with the spec.
func statefulSetState(sts object) (declared, replicas int32, settled bool, err error) {
	spec, _ := sts["spec"].(map[string]any)
	status, _ := sts["status"].(map[string]any)
	r, ok := intField(spec, "replicas")
	if !ok {
		r = 1 // the API server's default
	}
	if r < 0 || r > 1<<20 {
		return 0, 0, false, badRequestf("StatefulSet %s has spec.replicas %d", metaString(sts, "name"), r)
	}
	gen, _ := intField(sts["metadata"].(map[string]any), "generation")
	observedGen, _ := intField(status, "observedGeneration")
	have, _ := intField(status, "replicas")
	ready, _ := intField(status, "readyReplicas")
	return int32(r), int32(max(r, have)), observedGen >= gen && have == r && ready == r, nil
}

func intField(m map[string]any, key string) (int64, bool) {
	switch v := m[key].(type) {
	case float64:
		return int64(v), v == float64(int64(v))
	case int64:
		return v, true
	case int:
		return int64(v), true
	}
	return 0, false
}

// podReady is true for a pod with condition Ready=True that is not being deleted.
func podReady(pod object) bool {
	if metaString(pod, "deletionTimestamp") != "" {
		return false
	}
	status, _ := pod["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		cond, _ := c.(map[string]any)
		if cond["type"] == "Ready" {
			return cond["status"] == "True"
		}
	}
	return false
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

func (w workloads) readyCount(pods []string) int32 {
	var n int32
	for _, p := range pods {
		if w.readyPods[p] {
			n++
		}
	}
	return n
}

func describeCount(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

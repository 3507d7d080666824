package hooks

import (
	"context"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// dayOps is what a request tells the day-2 operations: the observed children a paused pass
// returns frozen, the data StatefulSet's hibernation window, and every pod of the cluster by
// ordinal (in any state) for hibernation and waking.
type dayOps struct {
	children                  []object // StatefulSets and Services in the parent's namespace, by type then key
	window                    *int32
	dataPods, coordinatorPods map[int]planner.PodState
}

// observeDayOps reads the children and Pods for the day-2 operations. observeWorkloads has
// already checked the fields both read.
func observeDayOps(req *syncRequest, cluster, namespace string) (dayOps, error) {
	ops := dayOps{dataPods: map[int]planner.PodState{}, coordinatorPods: map[int]planner.PodState{}}
	for _, typeKey := range []string{statefulSetKey, serviceKey} {
		entries, err := objectsOf(req.Children, typeKey, "children")
		if err != nil {
			return ops, err
		}
		for _, e := range entries {
			if ns := metaString(e.obj, "namespace"); ns != "" && ns != namespace {
				continue
			}
			ops.children = append(ops.children, e.obj)
			if typeKey == statefulSetKey && metaString(e.obj, "name") == topology.DataSetName(cluster) {
				ops.window = topology.DataWindow(e.obj)
			}
		}
	}
	pods, err := objectsOf(req.Related, podKey, "related")
	if err != nil {
		return ops, err
	}
	coordinators, data := roles(cluster)[0], roles(cluster)[1]
	for _, e := range pods {
		if ns := metaString(e.obj, "namespace"); ns != "" && ns != namespace {
			continue
		}
		path := entryPath("related", podKey, e.key)
		ready, err := podReady(e.obj, path)
		if err != nil {
			return ops, err
		}
		state := planner.PodState{Ready: ready, Created: podCreated(e.obj)}
		name := metaString(e.obj, "name")
		if n, ok := topology.PodOrdinal(coordinators.set, name); ok && n < int(coordinators.ceiling)+coordinators.first {
			ops.coordinatorPods[n] = state
		}
		if n, ok := topology.PodOrdinal(data.set, name); ok && n < int(data.ceiling)+data.first {
			ops.dataPods[n] = state
		}
	}
	return ops, nil
}

// podCreated is metadata.creationTimestamp, zero when absent or not RFC 3339.
func podCreated(pod object) metav1.Time {
	t, err := time.Parse(time.RFC3339, metaString(pod, "creationTimestamp"))
	if err != nil {
		return metav1.Time{}
	}
	return metav1.NewTime(t)
}

// frozenChildren returns every observed child so that Metacontroller leaves it exactly as it is
// (topology.FrozenChild): a paused cluster's children are neither changed nor deleted, and a
// child that does not exist is not created.
func frozenChildren(ops dayOps) ([]object, error) {
	out := make([]object, 0, len(ops.children))
	for _, child := range ops.children {
		frozen, err := topology.FrozenChild(child)
		if err != nil {
			return nil, err
		}
		out = append(out, frozen)
	}
	return out, nil
}

// hibernation asks the planner for the pass's part in hibernating or waking, reading which
// instance is MAIN (discovery's view) when the step depends on it. It never writes. The view
// read, if any, is returned for the status.
func (h *handler) hibernation(ctx context.Context, c *topology.Cluster, work workloads, w *planner.Workloads, d topology.Declared) (planner.HibernationStep, *planner.View) {
	in := planner.HibernationInput{
		Declared: d, Hibernate: c.Hibernate(), Window: work.ops.window,
		DataPods: work.ops.dataPods, CoordinatorPods: work.ops.coordinatorPods, Current: work.current, Returned: work.specReplicas,
		Now:           metav1.NewTime(h.cfg.Now()),
		StartupBudget: metav1.Duration{Duration: time.Duration(c.DataStartupBudgetSeconds()) * time.Second},
	}
	if c.Hibernate() {
		rollout := planner.PlanRollout(planner.RolloutInput{Declared: d, Replicas: planner.Hold(d, work.specReplicas), Workloads: *w})
		if rollout.InProgress() {
			in.RolloutPending = rollout.Message
		}
	}
	step := planner.PlanHibernation(in)
	if !step.NeedsView {
		return step, nil
	}
	conn, problem := h.connector(work.tls)
	if problem != "" {
		in.ViewProblem = problem
	} else if found := discover(ctx, conn, d); found.Found() {
		in.View = &found.View
	} else {
		in.ViewProblem = "no coordinator named a ready leader: " + strings.Join(found.Problems, "; ")
		if found.NotReady != "" {
			in.ViewProblem = found.NotReady + " leads but is not ready yet"
		}
	}
	return planner.PlanHibernation(in), in.View
}

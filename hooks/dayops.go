package hooks

import (
	"context"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// dayOps is what a request tells the day-2 operations besides the workloads: the observed
// children a paused pass returns frozen, and the data StatefulSet's hibernation window.
type dayOps struct {
	children []object // while paused: StatefulSets and Services in the parent's namespace, by type then key
	window   *int32
}

// observeDayOps reads the children for the day-2 operations. observeWorkloads has already
// checked the fields it reads. Only a paused pass reads the children whole (syncRequest.whole):
// the scan keeps the few fields the other readers read.
func observeDayOps(req *syncRequest, c *topology.Cluster) (dayOps, error) {
	var ops dayOps
	sets, err := objectsOf(req.Children, statefulSetKey, "children")
	if err != nil {
		return ops, err
	}
	for _, e := range sets {
		if inNamespace(e.obj, c.Namespace()) && metaString(e.obj, "name") == topology.DataSetName(c.Name()) {
			ops.window = topology.DataWindow(e.obj)
		}
	}
	if paused, _ := c.Paused(); !paused {
		return ops, nil
	}
	whole, err := req.whole()
	if err != nil {
		return ops, err
	}
	for _, typeKey := range []string{statefulSetKey, serviceKey} {
		entries, err := objectsOf(whole.Children, typeKey, "children")
		if err != nil {
			return ops, err
		}
		for _, e := range entries {
			if inNamespace(e.obj, c.Namespace()) {
				ops.children = append(ops.children, e.obj)
			}
		}
	}
	return ops, nil
}

// inNamespace: obj names no namespace or namespace.
func inNamespace(obj object, namespace string) bool {
	ns := metaString(obj, "namespace")
	return ns == "" || ns == namespace
}

// hibernationPods are each role's pods by ordinal (a coordinator's by id), in any state, from
// what the rollout read of them.
func (w workloads) hibernationPods(cluster string) (coordinators, data map[int]planner.PodState) {
	byOrdinal := func(ev rolloutEvidence, r role) map[int]planner.PodState {
		out := make(map[int]planner.PodState, len(ev.set.Pods))
		for _, pod := range ev.set.Pods {
			out[pod.Index+r.first] = planner.PodState{Ready: pod.Ready, Created: pod.Created}
		}
		return out
	}
	rs := roles(cluster)
	return byOrdinal(w.rollout[0], rs[0]), byOrdinal(w.rollout[1], rs[1])
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
	in := planner.HibernationInput{Declared: d, Hibernate: c.Hibernate(), Window: work.ops.window}
	if !planner.HibernationAsleepOrWaking(in.Hibernate, in.Window) {
		return planner.PlanHibernation(in), nil // a running cluster: the converged hot path
	}
	in.CoordinatorPods, in.DataPods = work.hibernationPods(c.Name())
	in.Current, in.Returned = work.current, work.specReplicas
	in.Now = metav1.NewTime(h.cfg.Now())
	in.StartupBudget = metav1.Duration{Duration: time.Duration(c.DataStartupBudgetSeconds()) * time.Second}
	in.RolloutPending = planner.HibernationRolloutPending(d, c.Hibernate(), work.specReplicas, *w)
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

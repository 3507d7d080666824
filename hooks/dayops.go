package hooks

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// frozenChildren returns every observed child so that Metacontroller leaves it exactly as it is
// (topology.FrozenChild): a paused cluster's children are neither changed nor deleted, and a
// child that does not exist is not created.
func frozenChildren(observed []json.RawMessage) ([]map[string]any, error) {
	out := make([]map[string]any, 0, len(observed))
	for _, raw := range observed {
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
	return out, nil
}

// hibernation asks the planner for the pass's part in hibernating or waking, reading which
// instance is MAIN (discovery's view) when the step depends on it. It never writes. The view
// read, if any, is returned for the status.
func (h *handler) hibernation(ctx context.Context, c *topology.Cluster, obs *observation, w *planner.Workloads, d topology.Declared) (planner.HibernationStep, *planner.View) {
	in := planner.HibernationInput{Declared: d, Hibernate: c.Hibernate(), Window: obs.window}
	if !planner.HibernationAsleepOrWaking(in.Hibernate, in.Window) {
		return planner.PlanHibernation(in), nil // a running cluster: the converged hot path
	}
	in.CoordinatorPods, in.DataPods = obs.hibernationPods(c.Name())
	in.Current, in.Returned = obs.current, obs.returned
	in.Now = metav1.NewTime(h.cfg.Now())
	in.StartupBudget = metav1.Duration{Duration: time.Duration(c.DataStartupBudgetSeconds()) * time.Second}
	in.RolloutPending = planner.HibernationRolloutPending(d, c.Hibernate(), obs.returned, *w)
	step := planner.PlanHibernation(in)
	if !step.NeedsView {
		return step, nil
	}
	conn, problem := h.connector(obs.tls)
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

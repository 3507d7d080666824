package hooks

import (
	"context"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

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

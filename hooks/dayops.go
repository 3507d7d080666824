package hooks

import (
	"context"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// hibernation asks the planner for the pass's part in hibernating or waking, reading which
// instance is MAIN (discovery's view) when the step depends on it. It never writes. The view
// read, if any, is returned for the status.
func (h *handler) hibernation(ctx context.Context, in *passInput) (planner.HibernationStep, *planner.View) {
	c, obs := in.cluster, in.obs
	hi := planner.HibernationInput{Declared: in.declared, Hibernate: c.Hibernate(), Window: obs.window}
	if !planner.HibernationAsleepOrWaking(hi.Hibernate, hi.Window) {
		return planner.PlanHibernation(hi), nil // a running cluster: the converged hot path
	}
	hi.CoordinatorPods, hi.DataPods = obs.hibernationPods(c.Name())
	hi.Current, hi.Returned = obs.current, obs.returned
	hi.Now = metav1.NewTime(h.cfg.Now())
	hi.StartupBudget = metav1.Duration{Duration: time.Duration(c.DataStartupBudgetSeconds()) * time.Second}
	// Hibernation does not begin while a rollout of the returned replica counts holds it.
	if hi.Hibernate {
		hi.RolloutPending = planner.RolloutHoldingHibernation(in.rolloutWithoutView(), *in.workloads)
	}
	step := planner.PlanHibernation(hi)
	if !step.NeedsView {
		return step, nil
	}
	conn, problem := h.connector(obs.tls)
	if problem != "" {
		hi.ViewProblem = problem
	} else if found := discover(ctx, conn, in.declared); found.Found() {
		hi.View = &found.View
	} else {
		hi.ViewProblem = "no coordinator named a ready leader: " + strings.Join(found.Problems, "; ")
		if found.NotReady != "" {
			hi.ViewProblem = found.NotReady + " leads but is not ready yet"
		}
	}
	return planner.PlanHibernation(hi), hi.View
}

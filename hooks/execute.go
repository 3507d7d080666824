package hooks

import (
	"context"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// execution is what running a plan achieved.
type execution struct {
	ran             []string // queries that completed (or that a concurrent writer completed first)
	failedQuery     string
	err             error
	budgetExhausted bool
	// stoppedBy is the query of a step that ended the pass without failing, stopped its verdict
	// (planner.StepInProgress: FORCE RESET still running; planner.StepLeaderMoved: the leader
	// moved or is not ready) and stopMessage Memgraph's message.
	stoppedBy   string
	stopped     planner.StepVerdict
	stopMessage string
}

// execute runs the commands in order on the leader, stopping at the first step that does not
// succeed, at a handover the cluster no longer permits, or when the budget runs out.
// planner.JudgeStep says what a failed step means: a refusal that only says "someone else already
// did this" (a concurrent sync of the same cluster won the race) is progress; FORCE RESET past its
// own deadline is in progress; a leader that moved or is not ready ends the pass for
// re-discovery; anything else is a failure.
func (h *handler) execute(ctx context.Context, client memgraph.Client, cmds []planner.Command, replan replanFunc) execution {
	var ex execution
	for _, cmd := range cmds {
		if ctx.Err() != nil {
			ex.budgetExhausted = true
			return ex
		}
		if reason := staleStep(ctx, client, cmd, replan); reason != "" {
			h.log.Info("skipping a step the cluster no longer permits", "query", cmd.String(), "reason", reason)
			if _, ok := cmd.(planner.Handover); ok {
				// The later steps were planned on MAIN having left the retiring instance (its
				// UNREGISTER above all); the next pass plans from what the cluster is now.
				return ex
			}
			continue
		}
		err := cmd.Run(ctx, client)
		kind := commandKind(cmd.String())
		if err == nil {
			h.metrics.commands.WithLabelValues(kind, "ok").Inc()
			h.log.Info("executed", "query", cmd.String())
			ex.ran = append(ex.ran, cmd.String())
			continue
		}
		if ctx.Err() != nil {
			h.metrics.commands.WithLabelValues(kind, "budget_exhausted").Inc()
			ex.budgetExhausted = true
			return ex
		}
		switch verdict := planner.JudgeStep(cmd, err); verdict {
		case planner.StepDone:
			h.metrics.commands.WithLabelValues(kind, "already_done").Inc()
			h.log.Info("step already done by a concurrent writer", "query", cmd.String(), "memgraph", errMessage(err))
			ex.ran = append(ex.ran, cmd.String())
		case planner.StepInProgress, planner.StepLeaderMoved:
			h.metrics.commands.WithLabelValues(kind, "interrupted").Inc()
			h.log.Info("step did not finish; re-observing next pass", "query", cmd.String(), "memgraph", errMessage(err))
			ex.stopped, ex.stoppedBy, ex.stopMessage = verdict, cmd.String(), errMessage(err)
			return ex
		default:
			h.metrics.commands.WithLabelValues(kind, "error").Inc()
			h.log.Warn("step failed", "query", cmd.String(), "memgraph", errMessage(err))
			ex.failedQuery, ex.err = cmd.String(), err
			return ex
		}
	}
	return ex
}

// commandKind is a command's query verb, a bounded metric label ("REGISTER INSTANCE", …).
func commandKind(query string) string {
	words := strings.Fields(query)
	switch {
	case len(words) == 0:
		return "unknown"
	case words[0] == "SET" && len(words) >= 4:
		return "SET INSTANCE TO MAIN"
	case len(words) >= 2:
		return words[0] + " " + words[1]
	}
	return words[0]
}

// staleStep re-reads the leader right before the steps Memgraph refuses outright when the
// cluster has moved since the plan was read (another hook replica elected a MAIN; the
// coordinators failed over to, or elected, the member being retired) and says why the step must
// be skipped, or "" to run it. The re-read costs one query and only precedes these rare steps.
//
// A MAIN handover is re-planned from a fresh SHOW INSTANCES and SHOW REPLICATION LAG: it runs
// only if the same handover (same MAIN, same caught-up candidates) is still what the planner
// would do, so a survivor that fell behind since the plan was read is never promoted.
func staleStep(ctx context.Context, client memgraph.Client, cmd planner.Command, replan replanFunc) string {
	var check func(rows []memgraph.Instance) string
	switch c := cmd.(type) {
	case planner.Handover:
		return staleHandover(ctx, client, c, replan)
	case planner.SetInstanceToMain, planner.ForceResetClusterState:
		check = func(rows []memgraph.Instance) string {
			if main := mainName(rows); main != "" {
				return main + " is MAIN already"
			}
			return ""
		}
	case planner.UnregisterInstance:
		check = func(rows []memgraph.Instance) string {
			if mainName(rows) == c.Name {
				return c.Name + " became MAIN"
			}
			return ""
		}
	case planner.RemoveCoordinator:
		check = func(rows []memgraph.Instance) string {
			if leaderName(rows) == topology.CoordinatorName(c.ID) {
				return topology.CoordinatorName(c.ID) + " became leader"
			}
			return ""
		}
	default:
		return ""
	}
	rows, err := client.ShowInstances(ctx)
	if err != nil {
		return "" // the step itself will fail and say why
	}
	return check(rows)
}

// replanFunc plans again from a fresh read of the leader.
type replanFunc func(rows []memgraph.Instance, lag []memgraph.InstanceLag) planner.Result

func staleHandover(ctx context.Context, client memgraph.Client, h planner.Handover, replan replanFunc) string {
	rows, err := client.ShowInstances(ctx)
	if err != nil {
		return "" // DEMOTE will fail and say why
	}
	lag, err := client.ShowReplicationLag(ctx)
	if err != nil {
		return "SHOW REPLICATION LAG failed right before the handover: " + errMessage(err)
	}
	for _, cmd := range replan(rows, lag).Commands {
		if again, ok := cmd.(planner.Handover); ok && again == h {
			return ""
		}
	}
	return "the cluster changed since the handover was planned; planning again next pass"
}

package hooks

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// handoverGrace bounds the steps a handover still takes after the pass's own context ended
// between DEMOTE and SET: leaving the cluster MAIN-less because the budget ran out mid-handover
// would be worse than overrunning it by this much.
const handoverGrace = 2 * time.Second

// executor runs a plan's commands on the leader's connection, in order, stopping at the first
// step that does not succeed or when the budget runs out. It decides nothing itself: which
// reads a step's precondition needs and whether the cluster still permits the step
// (planner.PreconditionReads, planner.Precondition), what a step's error means
// (planner.JudgeStep, planner.JudgeRecheck), whether a refused handover restores the old MAIN
// and when its new MAIN is proven (planner.RestoreAfter, planner.Handover) are the planner's.
type executor struct {
	client   memgraph.Client
	catchUp  catchUpReader // SHOW REPLICAS on the MAIN, for a handover's precondition
	declared topology.Declared
	current  topology.Replicas // the replica counts the plan was made with
	// workloads are the rollout's, so that a rollout's handover is re-planned like any other.
	workloads *planner.Workloads
	// drain, when set, is what the drain stage planned its step on: the step's handover is
	// re-planned by planner.DrainPrecondition rather than planner.Precondition.
	drain *planner.DrainInput
	log   *slog.Logger
	// sent records and counts the writes client sends (sentLog.client wraps the leader's client).
	sent *sentLog
	// settle is the pause before the second read of planner.ReadInstancesSettled
	// (Config.MainlessSettle).
	settle time.Duration
}

// execute runs cmds and reports what that achieved. Every log line names the queries the command
// actually sent (a handover's restore only when it ran); each is counted once (sentLog.settle).
func (x executor) execute(ctx context.Context, cmds []planner.Command) planner.Execution {
	var ex planner.Execution
	var ran []planner.Command // the commands behind ex.Ran
	for _, cmd := range cmds {
		if ctx.Err() != nil {
			ex.BudgetExhausted = true
			return ex
		}
		if reason := x.precondition(ctx, cmd, ran); reason != "" {
			x.log.Info("skipping a step the cluster no longer permits", "query", cmd.String(), "reason", reason)
			continue
		}
		verdict, err := x.attempt(ctx, cmd)
		ex.Writes = append(ex.Writes, planner.Writes(cmd, err)...)
		switch {
		case err == nil:
			x.log.Info("executed", "queries", x.sent.settle("ok"))
			ex.Ran, ran = append(ex.Ran, cmd.String()), append(ran, cmd)
		case ctx.Err() != nil:
			x.log.Info("step cut short by the sync budget", "queries", x.sent.settle("budget_exhausted"), "memgraph", planner.Explain(err))
			ex.BudgetExhausted = true
			return ex
		case verdict == planner.StepDone:
			x.log.Info("step already done by a concurrent writer", "queries", x.sent.settle("already_done"), "memgraph", planner.Explain(err))
			ex.Ran, ran = append(ex.Ran, cmd.String()), append(ran, cmd)
		case verdict == planner.StepInProgress || verdict == planner.StepLeaderMoved:
			x.log.Info("step did not finish; re-observing next pass", "queries", x.sent.settle("interrupted"), "memgraph", planner.Explain(err))
			ex.Stopped = &planner.Stop{Query: cmd.String(), Verdict: verdict, Err: err}
			return ex
		default:
			x.log.Warn("step failed", "queries", x.sent.settle("error"), "memgraph", planner.Explain(err))
			ex.Stopped = &planner.Stop{Query: cmd.String(), Verdict: planner.StepFailed, Err: err}
			return ex
		}
	}
	return ex
}

// precondition reads what planner.PreconditionReads asks for, after the steps ran already in
// this pass, and returns planner.Precondition's reason to skip the step ("" to run it).
func (x executor) precondition(ctx context.Context, cmd planner.Command, ran []planner.Command) string {
	reads := planner.PreconditionReads(cmd, ran)
	if reads == planner.ReadNothing {
		return ""
	}
	var f planner.Fresh
	f.Instances, f.InstancesErr = x.client.ShowInstances(ctx)
	if reads == planner.ReadInstancesAndCatchUp && f.InstancesErr == nil {
		f.Lag, f.LagErr = x.client.ShowReplicationLag(ctx)
		f.Replicas = x.catchUp.read(ctx, f.Instances)
	}
	if h, ok := cmd.(planner.Handover); ok && x.drain != nil {
		return planner.DrainPrecondition(x.declared, *x.drain, h, f)
	}
	reason := planner.Precondition(x.declared, x.current, x.workloads, cmd, f)
	if reads != planner.ReadInstancesSettled || reason != "" || x.settle <= 0 {
		return reason
	}
	select {
	case <-ctx.Done():
		return "" // the step runs and its own error says the budget ran out
	case <-time.After(x.settle):
	}
	f.Instances, f.InstancesErr = x.client.ShowInstances(ctx)
	return planner.Precondition(x.declared, x.current, x.workloads, cmd, f)
}

// attempt runs cmd and, when it fails, judges the error: the verdict, and the error to report
// (nil when a concurrent writer had done the step's work).
func (x executor) attempt(ctx context.Context, cmd planner.Command) (planner.StepVerdict, error) {
	err := run(ctx, x.client, cmd)
	if err == nil {
		return planner.StepDone, nil
	}
	verdict := planner.JudgeStep(cmd, err)
	if verdict == planner.StepRecheck {
		rows, readErr := x.client.ShowInstances(ctx)
		verdict, err = planner.JudgeRecheck(cmd, err, rows, readErr)
	}
	return verdict, err
}

// run sends the queries of one command.
func run(ctx context.Context, c memgraph.Client, cmd planner.Command) error {
	switch cmd := cmd.(type) {
	case planner.AddCoordinator:
		return c.AddCoordinator(ctx, cmd.ID, cmd.Config)
	case planner.RegisterInstance:
		return c.RegisterInstance(ctx, cmd.Name, cmd.Config)
	case planner.SetInstanceToMain:
		return c.SetInstanceToMain(ctx, cmd.Name)
	case planner.Handover:
		return handover(ctx, c, cmd)
	case planner.UnregisterInstance:
		return c.UnregisterInstance(ctx, cmd.Name)
	case planner.RemoveCoordinator:
		return c.RemoveCoordinator(ctx, cmd.ID)
	case planner.ForceResetClusterState:
		return c.ForceResetClusterState(ctx)
	case planner.YieldLeadership:
		return c.YieldLeadership(ctx)
	case planner.SetCoordinatorSetting:
		return c.SetCoordinatorSetting(ctx, cmd.Name, cmd.Value)
	case planner.UpdateInstanceConfig:
		return c.UpdateInstanceConfig(ctx, cmd.Name, cmd.BoltServer)
	case planner.UpdateCoordinatorConfig:
		return c.UpdateCoordinatorConfig(ctx, cmd.ID, cmd.BoltServer)
	}
	return fmt.Errorf("no way to run %T (%s)", cmd, cmd)
}

// handover runs DEMOTE INSTANCE From, SET INSTANCE To TO MAIN (restoring From when the refusal
// proves no MAIN was set), then proves To serves as MAIN (see planner.Handover).
func handover(ctx context.Context, c memgraph.Client, h planner.Handover) error {
	if err := c.DemoteInstance(ctx, h.From); err != nil {
		return fmt.Errorf("handover of MAIN from %s: demote: %w", h.From, err)
	}
	if ctx.Err() != nil {
		// The budget ran out between the two writes: finish the handover rather than leave the
		// cluster without a MAIN; the pass ends right after it anyway.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), handoverGrace)
		defer cancel()
	}
	if err := c.SetInstanceToMain(ctx, h.To); err != nil {
		he := &planner.HandoverError{From: h.From, To: h.To, PromoteErr: err}
		if planner.RestoreAfter(err) {
			he.RestoreTried = true
			he.RestoreErr = c.SetInstanceToMain(ctx, h.From)
		}
		return he
	}
	rows, err := c.ShowInstances(ctx)
	why := h.UnprovenByInstances(rows, err)
	if why == "" {
		lag, err := c.ShowReplicationLag(ctx)
		why = h.UnprovenByLag(lag, err)
	}
	if why != "" {
		return &planner.HandoverError{From: h.From, To: h.To, Unproven: why}
	}
	return nil
}

package planner

import (
	"context"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// DemoteInstance is a Handover's first query: the MAIN it moves off becomes a replica.
type DemoteInstance struct{ Name string }

func (d DemoteInstance) String() string  { return memgraph.DemoteInstanceQuery(d.Name) }
func (DemoteInstance) Kind() CommandKind { return KindHandover }
func (DemoteInstance) command()          {}
func (d DemoteInstance) Send(ctx context.Context, c memgraph.Client) error {
	return c.DemoteInstance(ctx, d.Name)
}

// guard says why a step must be skipped on the cluster as read right before it (f), or "".
type guard func(cmd Command, f Fresh) string

// planGuard re-checks a plan's steps (Precondition) with the replica counts and workloads the
// plan was made with.
func (p *pass) planGuard(cmd Command, f Fresh) string {
	return Precondition(p.d, p.in.Span, p.workloads, cmd, f)
}

// execute runs cmds on the leader at to, in order, and reports what that achieved. It stops at
// the first step that does not succeed (every later one was planned on the assumption that it
// did) or when the budget runs out. Before the steps Memgraph refuses outright once the cluster
// moved (preconditionReads), it reads the cluster again and skips what g says the cluster no
// longer permits; what a step's error means is JudgeStep's (and JudgeRecheck's, on a fresh
// read). Every log line names the queries the step actually sent.
func (p *pass) execute(to string, cmds []Command, g guard) (Execution, flow) {
	var ex Execution
	var ran []Command // the commands behind ex.Ran
	planView := p.view
	for _, cmd := range cmds {
		if p.expired {
			ex.BudgetExhausted = true
			return ex, goOn
		}
		reason, f := p.precondition(to, cmd, ran, planView, g)
		if f == waiting {
			return ex, waiting
		}
		if reason != "" {
			p.log(LevelInfo, "skipping a step the cluster no longer permits", "query", cmd.String(), "reason", reason)
			continue
		}
		f, verdict, err := p.attempt(to, cmd)
		if f == waiting {
			return ex, waiting
		}
		ex.Writes = append(ex.Writes, Writes(cmd, err)...)
		switch {
		case err == nil:
			p.log(LevelInfo, "executed", "queries", p.judged("ok"))
			ex.Ran, ran = append(ex.Ran, cmd.String()), append(ran, cmd)
		case p.expired:
			p.log(LevelInfo, "step cut short by the sync budget", "queries", p.judged("budget_exhausted"), "memgraph", Explain(err))
			ex.BudgetExhausted = true
			return ex, goOn
		case verdict == StepDone:
			p.log(LevelInfo, "step already done by a concurrent writer", "queries", p.judged("already_done"), "memgraph", Explain(err))
			ex.Ran, ran = append(ex.Ran, cmd.String()), append(ran, cmd)
		case verdict == StepInProgress || verdict == StepLeaderMoved:
			p.log(LevelInfo, "step did not finish; re-observing next pass", "queries", p.judged("interrupted"), "memgraph", Explain(err))
			ex.Stopped = &Stop{Query: cmd.String(), Verdict: verdict, Err: err}
			return ex, goOn
		default:
			p.log(LevelWarn, "step failed", "queries", p.judged("error"), "memgraph", Explain(err))
			ex.Stopped = &Stop{Query: cmd.String(), Verdict: StepFailed, Err: err}
			return ex, goOn
		}
	}
	return ex, goOn
}

// precondition reads what preconditionReads asks for right before cmd, after the steps ran
// already in this pass — in a view of its own when nothing was written since the plan was read,
// so that it sees the cluster as it is now — and returns g's reason to skip the step ("" to run
// it). A settled read (readTableSettled) the step passes is made again after Input.MainlessSettle,
// in a view of its own, and judged once more.
func (p *pass) precondition(to string, cmd Command, ran []Command, planView int, g guard) (string, flow) {
	reads := preconditionReads(cmd, ran)
	if reads == readNothing {
		return "", goOn
	}
	if p.view == planView {
		p.freshView()
	}
	table, ok := p.read(Read{What: ReadInstances, From: to})
	if !ok {
		return "", waiting
	}
	f := Fresh{Instances: table.Rows, InstancesErr: table.Err}
	if reads == readTableAndCatchUp && f.InstancesErr == nil {
		lag, ok := p.read(Read{What: ReadLag, From: to})
		if !ok {
			return "", waiting
		}
		f.Lag, f.LagErr = lag.Lag, lag.Err
		if f.Replicas, ok = p.mainReplicas(f.Instances); !ok {
			return "", waiting
		}
	}
	reason := g(cmd, f)
	if reads != readTableSettled || reason != "" || p.in.MainlessSettle <= 0 || p.expired {
		return reason, goOn
	}
	p.freshView()
	again, ok := p.read(Read{What: ReadInstances, From: to, After: p.in.MainlessSettle})
	if !ok {
		return "", waiting
	}
	if p.expired {
		return "", goOn // the step runs and its own error says the budget ran out
	}
	return g(cmd, Fresh{Instances: again.Rows, InstancesErr: again.Err}), goOn
}

// mainReplicas reads the second proof a MAIN handover needs besides SHOW REPLICATION LAG: SHOW
// REPLICAS on the MAIN of rows itself (CatchUpSource), nil when no row reports a MAIN. A read
// that cannot be made or fails is recorded with its reason, which every handover's waiting
// message then names.
func (p *pass) mainReplicas(rows []memgraph.Instance) (*MainReplicas, bool) {
	main, bolt, ok := CatchUpSource(p.d, rows)
	if !ok {
		return nil, true
	}
	got, ok := p.read(Read{What: ReadReplicas, From: bolt})
	switch {
	case !ok:
		return nil, false
	case got.Problem != "":
		return &MainReplicas{Main: main, Problem: got.Problem}, true
	case got.Err != nil:
		return &MainReplicas{Main: main, Problem: Explain(got.Err)}, true
	}
	return &MainReplicas{Main: main, Rows: got.Replicas}, true
}

// attempt sends cmd and, when it fails, judges the error: the verdict, and the error to report
// (nil when a concurrent writer had done the step's work).
func (p *pass) attempt(to string, cmd Command) (flow, StepVerdict, error) {
	var err error
	if h, ok := cmd.(Handover); ok {
		var f flow
		if f, err = p.handover(to, h); f == waiting {
			return waiting, 0, nil
		}
	} else {
		got, ok := p.write(Write{To: to, Command: cmd})
		if !ok {
			return waiting, 0, nil
		}
		p.sent(cmd, got)
		err = got.Err
	}
	if err == nil {
		return goOn, StepDone, nil
	}
	verdict := JudgeStep(cmd, err)
	if verdict == StepRecheck {
		table, ok := p.read(Read{What: ReadInstances, From: to})
		if !ok {
			return waiting, 0, nil
		}
		verdict, err = JudgeRecheck(cmd, err, table.Rows, table.Err)
	}
	return goOn, verdict, err
}

// handover sends DEMOTE INSTANCE From, then SET INSTANCE To TO MAIN — on the handover's grace
// when the budget ran out in between —, restoring From when the refusal proves no MAIN was set
// (RestoreAfter), then proves To serves as MAIN (Handover.UnprovenByInstances, UnprovenByLag).
// The reads of the proof are the view after the handover.
func (p *pass) handover(to string, h Handover) (flow, error) {
	demote := DemoteInstance{Name: h.From}
	got, ok := p.write(Write{To: to, Command: demote})
	if !ok {
		return waiting, nil
	}
	p.sent(demote, got)
	if got.Err != nil {
		return goOn, fmt.Errorf("handover of MAIN from %s: demote: %w", h.From, got.Err)
	}
	grace := p.expired
	promote := SetInstanceToMain{Name: h.To}
	if got, ok = p.write(Write{To: to, Command: promote, Grace: grace}); !ok {
		return waiting, nil
	}
	p.sent(promote, got)
	if got.Err != nil {
		he := &HandoverError{From: h.From, To: h.To, PromoteErr: got.Err}
		if RestoreAfter(got.Err) {
			back := SetInstanceToMain{Name: h.From}
			if got, ok = p.write(Write{To: to, Command: back, Grace: grace}); !ok {
				return waiting, nil
			}
			p.sent(back, got)
			he.RestoreTried, he.RestoreErr = true, got.Err
		}
		return goOn, he
	}
	table, ok := p.read(Read{What: ReadInstances, From: to, Grace: grace})
	if !ok {
		return waiting, nil
	}
	why := h.UnprovenByInstances(table.Rows, table.Err)
	if why == "" {
		lag, ok := p.read(Read{What: ReadLag, From: to, Grace: grace})
		if !ok {
			return waiting, nil
		}
		why = h.UnprovenByLag(lag.Lag, lag.Err)
	}
	if why != "" {
		return goOn, &HandoverError{From: h.From, To: h.To, Unproven: why}
	}
	return goOn, nil
}

package hooks

import (
	"context"
	"log/slog"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// pass runs one pass on the cluster: it asks the planner for the next step (planner.Next), performs
// it, adds what it gave to the pass's record, and asks again, until the planner says Done —
// every decision is the planner's, made on the request and that record alone. Steps run within
// ctx's budget, one pass of a cluster at a time in this process (the cluster's lock, taken
// before the first step). The log lines and the counts of what the pass sent are the planner's,
// written out once it is done.
func (h *handler) pass(ctx context.Context, p *admittedParent, obs *observation, dryRun bool) planner.Done {
	conn, problem := obs.tls.Connector(h.cfg.Connector)
	in := h.input(p, obs, dryRun, conn, problem)
	step := planner.Next(in, nil)
	if _, done := step.(planner.Done); !done {
		unlock, err := h.locks.lock(ctx, p.cluster.Namespace()+"/"+p.cluster.Name())
		if err != nil {
			in.BudgetGone = true // the budget ran out before any coordinator was asked
			step = planner.Next(in, nil)
		} else {
			defer unlock()
		}
	}
	x := h.performer(p.cluster, conn, obs)
	defer x.close()
	var record []planner.Result
	for {
		if done, ok := step.(planner.Done); ok {
			h.report(done)
			return done
		}
		record = append(record, x.perform(ctx, step))
		step = planner.Next(in, record)
	}
}

// report writes the pass's log lines and counts the write queries it sent.
func (h *handler) report(done planner.Done) {
	for _, e := range done.Events {
		h.log.Log(context.Background(), slog.Level(e.Level), e.Msg, e.Args...)
	}
	for _, c := range done.Counts {
		h.metrics.Commands.WithLabelValues(string(c.Kind), c.Result).Inc()
	}
}

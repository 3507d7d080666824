package planner

import (
	"context"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// Effects are the calls the shell makes for a pass's steps, one method per kind of call. The
// shell owns the connections, the Secrets and the credentials behind them; the planner never
// holds a password or a Secret's bytes.
type Effects interface {
	// Coordinator is the client of the member at addr over spec.tls: a coordinator's own
	// queries, and a data instance's that need no user.
	Coordinator(addr string) memgraph.Client
	// Data is the client of the data instance at addr with spec.auth's credentials, or why
	// there is none.
	Data(addr string) (memgraph.Client, string)
	// ServedCertificate is the leaf certificate the member at addr serves, seen by a TLS
	// handshake of its own (memgraph.CertificateProbe).
	ServedCertificate(ctx context.Context, addr string) (*x509.Certificate, error)
	// RestoreStatus is what the backup agent at addr knows of the restore job (a RestoreJob not
	// Known when the agent knows no such job), or why it cannot be asked.
	RestoreStatus(ctx context.Context, addr, job string) (RestoreJob, string, error)
	// StartRestore starts s on the backup agent at addr, with the source and credentials the
	// shell holds, and returns the job as the agent answers, or why it cannot be asked.
	StartRestore(ctx context.Context, addr string, s StartRestore) (RestoreJob, string, error)
}

// Action is a step the shell performs: Perform is its effect, Timing when and for how long
// the shell runs it. The shell stamps the Result's At and Expired.
type Action interface {
	Step
	Perform(ctx context.Context, e Effects) Result
	Timing() Timing
}

// Timing is how the shell runs a step within the pass's budget.
type Timing struct {
	// After > 0: the step starts that long after it is asked for (a settled read, see
	// Input.MainlessSettle); a budget that runs out first fails it with the context's error.
	After time.Duration
	// Share > 0 gives the step 1/(Share+1) of the budget left, so that one coordinator that
	// does not answer cannot starve the others (leader discovery).
	Share int
	// Grace > 0: the step runs on a deadline of its own, Grace after the pass's first such
	// step, even once the pass's budget ran out (a handover's last steps).
	Grace time.Duration
}

// HandoverGrace bounds the steps a handover still takes after the pass's budget ran out between
// DEMOTE and SET: leaving the cluster MAIN-less because the budget ran out mid-handover would be
// worse than overrunning it by this much.
const HandoverGrace = 2 * time.Second

func graceOf(grace bool) time.Duration {
	if grace {
		return HandoverGrace
	}
	return 0
}

// Timing is the read's: its delay, its share of the budget, a handover's grace.
func (r Read) Timing() Timing { return Timing{After: r.After, Share: r.Share, Grace: graceOf(r.Grace)} }

// Timing is the write's: the pass's budget, or a handover's grace.
func (w Write) Timing() Timing { return Timing{Grace: graceOf(w.Grace)} }

// Perform makes the read: one query, one handshake or one call to a backup agent.
func (r Read) Perform(ctx context.Context, e Effects) Result {
	var got Result
	switch r.What {
	case ReadInstances:
		got.Rows, got.Err = e.Coordinator(r.From).ShowInstances(ctx)
	case ReadLag:
		got.Lag, got.Err = e.Coordinator(r.From).ShowReplicationLag(ctx)
	case ReadSettings:
		got.Settings, got.Err = e.Coordinator(r.From).ShowCoordinatorSettings(ctx)
	case ReadReplicas:
		c, problem := e.Data(r.From)
		if got.Problem = problem; problem == "" {
			got.Replicas, got.Err = c.ShowReplicas(ctx)
		}
	case ReadCertificate:
		leaf, err := e.ServedCertificate(ctx, r.From)
		if got.Err = err; err == nil {
			got.Leaf = memgraph.Digest(leaf)
		}
	case ReadRestoreJob:
		got.Job, got.Problem, got.Err = e.RestoreStatus(ctx, r.From, r.Job)
	}
	return got
}

// Perform sends the write: its command's query on the member's client (spec.auth's when Auth),
// or a restore job's start on the backup agent.
func (w Write) Perform(ctx context.Context, e Effects) Result {
	if s, ok := w.Command.(StartRestore); ok {
		job, problem, err := e.StartRestore(ctx, w.To, s)
		return Result{Job: job, Problem: problem, Err: err}
	}
	c, problem := e.Coordinator(w.To), ""
	if w.Auth {
		c, problem = e.Data(w.To)
	}
	if problem != "" {
		return Result{Problem: problem}
	}
	switch cmd := w.Command.(type) {
	case ReloadTLS:
		return cmd.reload(ctx, c)
	case query:
		return Result{Err: cmd.Send(ctx, c)}
	}
	return Result{Err: fmt.Errorf("no way to send %T (%s)", w.Command, w.Command)}
}

// query is a command that is one Bolt query.
type query interface {
	Send(ctx context.Context, c memgraph.Client) error
}

package hooks

import (
	"context"
	"crypto/x509"
	"errors"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// performer is a cluster pass's planner.Effects: it holds the pass's connector, spec.auth's
// credentials and the agents' client, makes each call a step asks for (one query, one handshake,
// one call to a backup agent) and runs each step as its Timing says. It decides nothing.
type performer struct {
	conn memgraph.Connector // nil when spec.tls cannot be honoured: then the planner asks nothing
	// data reaches the data instances with spec.auth's credentials once made (dataProblem: why
	// it cannot be).
	data        memgraph.Connector
	dataProblem string
	dataMade    bool
	cluster     *topology.Cluster
	obs         *observation
	now         func() time.Time
	// resolve dials a backup agent (Config.AgentResolver).
	resolve memgraph.Resolver
	// grace is the context of a handover's last steps once the budget ran out mid-handover.
	grace       context.Context
	cancelGrace context.CancelFunc
	// agents are the clients of the cluster's own agents, once made (agentsProblem: why not).
	agents        *backupcontroller.AgentClient
	agentsProblem string
}

func (h *handler) performer(c *topology.Cluster, conn memgraph.Connector, obs *observation) *performer {
	return &performer{cluster: c, conn: conn, obs: obs, now: h.cfg.Now, resolve: h.cfg.AgentResolver}
}

func (x *performer) close() {
	if x.cancelGrace != nil {
		x.cancelGrace()
	}
	if x.agents != nil {
		x.agents.Close()
	}
}

// perform performs step (a planner.Action) as its Timing says — after its delay, within its
// share of ctx's budget or a handover's grace — and returns what it gave, stamped with when it
// ended and whether the budget had run out by then.
func (x *performer) perform(ctx context.Context, step planner.Step) planner.Result {
	action := step.(planner.Action)
	timing := action.Timing()
	stepCtx, cancel := x.within(ctx, timing)
	var got planner.Result
	if got.Err = wait(stepCtx, timing.After); got.Err == nil {
		got = action.Perform(stepCtx, x)
	}
	cancel()
	got.At, got.Expired = x.now(), ctx.Err() != nil
	return got
}

// within is the context a step runs in: its grace once the pass's first grace step started
// (whether or not the budget ran out), else 1/(share+1) of the time left when share > 0 (at
// least one share is kept for whatever follows), else ctx.
func (x *performer) within(ctx context.Context, t planner.Timing) (context.Context, context.CancelFunc) {
	if t.Grace > 0 {
		if x.grace == nil {
			x.grace, x.cancelGrace = context.WithTimeout(context.WithoutCancel(ctx), t.Grace)
		}
		return x.grace, func() {}
	}
	if deadline, ok := ctx.Deadline(); ok && t.Share > 0 {
		return context.WithTimeout(ctx, time.Until(deadline)/time.Duration(t.Share+1))
	}
	return ctx, func() {}
}

// wait waits d, or fails with ctx's error when ctx ends first.
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// Coordinator is the client of the member at addr over spec.tls.
func (x *performer) Coordinator(addr string) memgraph.Client { return x.conn.Client(addr) }

// Data is the client of the data instance at addr with spec.auth's credentials, once made.
func (x *performer) Data(addr string) (memgraph.Client, string) {
	if !x.dataMade {
		x.data, x.dataProblem = x.obs.auth.Connector(x.conn)
		x.dataMade = true
	}
	if x.dataProblem != "" {
		return nil, x.dataProblem
	}
	return x.data.Client(addr), ""
}

// ServedCertificate is the leaf the member at addr serves (the pass asks only when its connector
// can probe: see sync.go).
func (x *performer) ServedCertificate(ctx context.Context, addr string) (*x509.Certificate, error) {
	return x.conn.(memgraph.CertificateProbe).ServedCertificate(ctx, addr)
}

// RestoreStatus asks the cluster's agent at addr for the restore job (not Known when the agent
// knows no such job).
func (x *performer) RestoreStatus(ctx context.Context, addr, job string) (planner.RestoreJob, string, error) {
	agents, problem := x.agentClient()
	if problem != "" {
		return planner.RestoreJob{}, problem, nil
	}
	status, err := agents.Status(ctx, addr, job)
	var unknown *backupcontroller.UnknownJobError
	switch {
	case errors.As(err, &unknown):
		return planner.RestoreJob{}, "", nil
	case err != nil:
		return planner.RestoreJob{}, "", err
	}
	return restoreJob(status), "", nil
}

// StartRestore starts s on the cluster's agent at addr, with the source's objects and how the
// agent reaches its Memgraph (spec.tls's CA, spec.auth's user).
func (x *performer) StartRestore(ctx context.Context, addr string, s planner.StartRestore) (planner.RestoreJob, string, error) {
	agents, problem := x.agentClient()
	if problem == "" {
		problem = x.obs.auth.Problem
	}
	if problem != "" {
		return planner.RestoreJob{}, problem, nil
	}
	status, err := agents.Start(ctx, addr, s.Job, x.restoreRequest(s))
	if err != nil {
		return planner.RestoreJob{}, "", err
	}
	return restoreJob(status), "", nil
}

// agentClient is the client of the cluster's own agents, from its backup-agent Secret child.
func (x *performer) agentClient() (*backupcontroller.AgentClient, string) {
	if x.agents != nil || x.agentsProblem != "" {
		return x.agents, x.agentsProblem
	}
	cfg, problems := backupcontroller.AgentConfigOf(x.cluster, x.obs.agentSecret)
	if len(problems) > 0 {
		x.agentsProblem = strings.Join(problems, "; ")
		return nil, x.agentsProblem
	}
	if x.resolve != nil {
		cfg.Resolve = x.resolve.Resolve
	}
	c, err := backupcontroller.NewAgentClient(cfg)
	if err != nil {
		x.agentsProblem = "the cluster's backup-agent Secret: " + err.Error()
		return nil, x.agentsProblem
	}
	x.agents = c
	return c, ""
}

// restoreRequest is the restore job s starts: the source's objects, and how the agent reaches
// its Memgraph (spec.tls's CA, spec.auth's user).
func (x *performer) restoreRequest(s planner.StartRestore) backup.JobRequest {
	src := x.obs.restore
	mg := backup.MemgraphTarget{Address: s.Into.BoltServer, CAPEM: x.obs.tls.CAPEM}
	if c := x.obs.auth.Creds; c != nil {
		mg.Username, mg.Password = c.Username, c.Password
	}
	return backup.JobRequest{Kind: backup.KindRestore, Memgraph: mg, Deadline: s.Deadline, Store: src.Store,
		Credentials: src.Credentials, Databases: src.Databases, RetryFailed: s.RetryFailed}
}

// restoreJob is what the planner reads of the agent's restore job.
func restoreJob(job backup.JobStatus) planner.RestoreJob {
	rj := planner.RestoreJob{Known: true, Running: job.State == backup.StateRunning, Completed: job.State == backup.StateCompleted,
		Failed: job.State == backup.StateFailed, Permanent: job.Permanent, FinishedAt: job.FinishedAt,
		State: job.State, Phase: job.Phase, BytesDone: job.BytesDone, BytesTotal: job.BytesTotal, StartedAt: job.StartedAt, Error: job.Error}
	for _, d := range job.Databases {
		rj.Databases = append(rj.Databases, v1alpha1.RestoreDatabase{Name: d.Name, Restored: d.Done})
	}
	return rj
}

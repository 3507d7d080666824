package hooks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// performer performs a pass's steps: each Read and Write the planner asks for, as one query (or
// one handshake, or one call to a backup agent), and nothing else. It decides nothing.
type performer struct {
	conn memgraph.Connector // nil when spec.tls cannot be honoured: then the planner asks nothing
	// data reaches the data instances with spec.auth's credentials once made (dataProblem: why
	// it cannot be).
	data        memgraph.Connector
	dataProblem string
	dataMade    bool
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

func (h *handler) performer(conn memgraph.Connector, obs *observation) *performer {
	return &performer{conn: conn, obs: obs, now: h.cfg.Now, resolve: h.cfg.AgentResolver}
}

func (x *performer) close() {
	if x.cancelGrace != nil {
		x.cancelGrace()
	}
	if x.agents != nil {
		x.agents.Close()
	}
}

// performUntil performs the steps next asks for, each added to the record next is given, until
// next answers with the step that ends them (an End), which it returns.
func performUntil[End planner.Step](ctx context.Context, x *performer, next func(record []planner.Result) planner.Step) End {
	defer x.close()
	var record []planner.Result
	for {
		step := next(record)
		if end, ok := step.(End); ok {
			return end
		}
		record = append(record, x.perform(ctx, step))
	}
}

// perform performs step within ctx's budget (a Read's share of it, or a handover's grace) and
// returns what it gave, stamped with when it ended and whether the budget had run out by then.
func (x *performer) perform(ctx context.Context, step planner.Step) planner.Result {
	var got planner.Result
	switch s := step.(type) {
	case planner.Read:
		stepCtx, cancel := x.within(ctx, s.Share, s.Grace)
		got = x.read(stepCtx, s)
		cancel()
	case planner.Write:
		stepCtx, cancel := x.within(ctx, 0, s.Grace)
		got = x.write(stepCtx, s)
		cancel()
	}
	got.At, got.Expired = x.now(), ctx.Err() != nil
	return got
}

// within is the context a step runs in: 1/(share+1) of the time left when share > 0 (at least one
// share is kept for whatever follows), the handover's grace once the budget ran out.
func (x *performer) within(ctx context.Context, share int, grace bool) (context.Context, context.CancelFunc) {
	if grace {
		if x.grace == nil {
			x.grace, x.cancelGrace = context.WithTimeout(context.WithoutCancel(ctx), planner.HandoverGrace)
		}
		return x.grace, func() {}
	}
	if deadline, ok := ctx.Deadline(); ok && share > 0 {
		return context.WithTimeout(ctx, time.Until(deadline)/time.Duration(share+1))
	}
	return ctx, func() {}
}

func (x *performer) read(ctx context.Context, r planner.Read) planner.Result {
	var got planner.Result
	if r.After > 0 {
		select {
		case <-ctx.Done():
			got.Err = ctx.Err()
			return got
		case <-time.After(r.After):
		}
	}
	switch r.What {
	case planner.ReadInstances:
		got.Rows, got.Err = x.conn.Client(r.From).ShowInstances(ctx)
	case planner.ReadLag:
		got.Lag, got.Err = x.conn.Client(r.From).ShowReplicationLag(ctx)
	case planner.ReadSettings:
		got.Settings, got.Err = x.conn.Client(r.From).ShowCoordinatorSettings(ctx)
	case planner.ReadReplicas:
		conn, problem := x.dataConnector()
		if got.Problem = problem; problem == "" {
			got.Replicas, got.Err = conn.Client(r.From).ShowReplicas(ctx)
		}
	case planner.ReadCertificate:
		leaf, err := x.conn.(memgraph.CertificateProbe).ServedCertificate(ctx, r.From)
		if got.Err = err; err == nil {
			got.Leaf = memgraph.Digest(leaf)
		}
	case planner.ReadRestoreJob:
		agents, problem := x.agentClient()
		if got.Problem = problem; problem != "" {
			return got
		}
		job, err := agents.Status(ctx, r.From, r.Job)
		var unknown *backupcontroller.UnknownJobError
		switch {
		case errors.As(err, &unknown):
		case err != nil:
			got.Err = err
		default:
			got.Job = restoreJob(job)
		}
	}
	return got
}

func (x *performer) write(ctx context.Context, w planner.Write) planner.Result {
	var got planner.Result
	switch c := w.Command.(type) {
	case planner.ReloadTLS:
		conn, problem := x.conn, ""
		if w.Auth {
			conn, problem = x.dataConnector()
		}
		if problem != "" {
			got.Problem = problem
			return got
		}
		reloader, ok := conn.Client(w.To).(memgraph.TLSReloader)
		if !ok {
			got.Problem = "this hook's Bolt connector cannot send RELOAD … TLS"
			return got
		}
		got.Err = reloader.ReloadTLS(ctx, c.Query)
	case planner.StartRestore:
		agents, problem := x.agentClient()
		if problem == "" {
			problem = x.obs.auth.Problem
		}
		if got.Problem = problem; problem != "" {
			return got
		}
		job, err := agents.Start(ctx, w.To, c.Job, x.restoreRequest(c))
		if got.Err = err; err == nil {
			got.Job = restoreJob(job)
		}
	default:
		got.Err = send(ctx, x.conn.Client(w.To), w.Command)
	}
	return got
}

// dataConnector reaches the data instances: the pass's connector with spec.auth's credentials.
func (x *performer) dataConnector() (memgraph.Connector, string) {
	if !x.dataMade {
		x.data, x.dataProblem = x.obs.auth.Connector(x.conn)
		x.dataMade = true
	}
	return x.data, x.dataProblem
}

// send sends the query of one command.
func send(ctx context.Context, c memgraph.Client, cmd planner.Command) error {
	switch cmd := cmd.(type) {
	case planner.AddCoordinator:
		return c.AddCoordinator(ctx, cmd.ID, cmd.Config)
	case planner.RegisterInstance:
		return c.RegisterInstance(ctx, cmd.Name, cmd.Config)
	case planner.SetInstanceToMain:
		return c.SetInstanceToMain(ctx, cmd.Name)
	case planner.DemoteInstance:
		return c.DemoteInstance(ctx, cmd.Name)
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
	return fmt.Errorf("no way to send %T (%s)", cmd, cmd)
}

// agentClient is the client of the cluster's own agents, from its backup-agent Secret child.
func (x *performer) agentClient() (*backupcontroller.AgentClient, string) {
	if x.agents != nil || x.agentsProblem != "" {
		return x.agents, x.agentsProblem
	}
	data := x.obs.agentSecret
	if data == nil {
		x.agentsProblem = "the cluster's backup-agent Secret does not exist yet"
		return nil, x.agentsProblem
	}
	cfg := backupcontroller.AgentClientConfig{Token: strings.TrimSpace(decoded(data[topology.BackupAgentTokenKey])), CAPEM: []byte(decoded(data[topology.BackupAgentCAKey]))}
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

// decoded is a base64 value of the agent Secret's data (topology.BackupAgentSecretComplete
// checked that each decodes).
func decoded(v string) string {
	raw, _ := base64.StdEncoding.DecodeString(v)
	return string(raw)
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

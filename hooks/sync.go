package hooks

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/hookmetrics"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// handleSync runs one sync pass: read (decode and observe the request), plan and act (pass),
// report (render the children and the status).
func (h *handler) handleSync(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	dryRun, err := wire.DryRun(r.URL.RawQuery)
	if err != nil {
		h.fail(w, "sync", err)
		return
	}
	parent, obs, err := decodeSync(r, h.parents)
	if err != nil {
		h.fail(w, "sync", err)
		return
	}
	cluster := parent.cluster
	if err := ensureAgentSecret(&obs, cluster, h.cfg.AgentSecretData); err != nil {
		h.fail(w, "sync", err)
		return
	}
	h = h.forCluster(cluster) // from here on every log line names the cluster
	ctx, cancel := context.WithTimeout(withClusterLog(r.Context(), cluster), h.cfg.SyncBudget)
	defer cancel()
	in := h.passInput(parent, &obs, dryRun)
	out := h.pass(ctx, in)
	answer := answerBuffers.Get().(*[]byte)
	defer recycleAnswer(answer) // written out by writeEncoded before it returns
	resp, verdicts, err := render(*answer, parent, &obs, out, h.lastOperation(cluster, out), h.operations.operations(cluster, out.Sent), h.cfg.Now())
	*answer = resp
	if err != nil {
		h.fail(w, "sync", wire.Badf("rendering children: %v", err))
		return
	}
	if planner.Hibernating(verdicts.Phase) {
		h.metrics.Clusters.Forget(cluster.Namespace(), cluster.Name()) // nothing runs, on purpose: no alert
		h.metrics.Replicas.Forget(cluster.Namespace(), cluster.Name())
	} else {
		health := out.Health()
		state := hookmetrics.ClusterState{ClusterSummary: planner.Summarize(out, health, in.workloads),
			MemoryLimitBytes: memoryLimits(cluster)}
		state.MaxReplicaLag, state.LagObserved = h.replicaLag(ctx, in, out)
		h.metrics.Clusters.Set(cluster.Namespace(), cluster.Name(), state)
		h.metrics.Replicas.Set(cluster.Namespace(), cluster.Name(), out.ReplicaRecords,
			planner.ReplicaProblems(out.ReplicaRecords, health.Down, cluster.ReplicaStuckAfter(), h.cfg.Now()))
	}
	reason := string(verdicts.Converged.Reason)
	h.metrics.SyncDuration.WithLabelValues(reason).Observe(time.Since(start).Seconds())
	h.log.Info("sync", "outcome", reason, "ran", len(out.Execution.Ran), "planned", len(out.Plan.Commands),
		"dryRun", dryRun, "ms", time.Since(start).Milliseconds())
	h.writeEncoded(w, "sync", http.StatusOK, resp)
}

// passInput is what every stage of a pass reads: the admitted cluster, the observation, the
// members declared for it, and the rollout's view of the StatefulSets.
type passInput struct {
	cluster   *topology.Cluster
	obs       *observation
	declared  topology.Declared
	workloads *planner.Workloads
	held      topology.Replicas // the replica counts returned while no plan stands (planner.Hold)
	dryRun    bool
	paused    bool
	unviewed  *planner.RolloutStep // rolloutWithoutView, once planned
	sent      *sentLog             // the Bolt writes the pass sends
	settle    time.Duration        // Config.MainlessSettle
}

func (h *handler) passInput(p *admittedParent, obs *observation, dryRun bool) *passInput {
	d := p.cluster.Advertise(p.declare(obs.current), obs.external)
	d.PreferredMain = planner.PreferredOffCordon(d, obs.podNodes, obs.cordoned)
	d.RestoreHeld = p.cluster.RestoreHold()
	d.Rebuild = p.cluster.RebuildTarget()
	paused, _ := p.cluster.Paused()
	return &passInput{cluster: p.cluster, obs: obs, declared: d, dryRun: dryRun, paused: paused, sent: newSentLog(h.cfg.Now, h.countCommand),
		settle:    h.cfg.MainlessSettle,
		workloads: obs.rolloutWorkloads(p.cluster, p.templateHashesFor(obs), h.cfg.Now()),
		// Unobserved, nothing changes: not even the widened retiring range may grow a StatefulSet.
		held: planner.Hold(d, obs.returned),
	}
}

// rolloutWithoutView is the rollout's step planned on the StatefulSets alone, at the held
// replica counts: what a pass reports when it ends before a plan stands on a view of the cluster.
func (in *passInput) rolloutWithoutView() planner.RolloutStep {
	if in.unviewed == nil {
		step := planner.PlanRollout(in.rolloutInput(in.held))
		in.unviewed = &step
	}
	return *in.unviewed
}

// rolloutInput is the rollout planner's input on the StatefulSets alone, at replicas.
func (in *passInput) rolloutInput(replicas topology.Replicas) planner.RolloutInput {
	return planner.RolloutInput{Declared: in.declared, Replicas: replicas, Workloads: *in.workloads}
}

// withRestoreHeld is in with the restore's hold on registration as the restore stage left it.
func (in *passInput) withRestoreHeld(held string) *passInput {
	if held == in.declared.RestoreHeld {
		return in
	}
	c := *in
	c.declared.RestoreHeld = held
	return &c
}

// pass plans and acts. Hibernation comes first: while it hibernates or wakes the cluster, nothing
// else runs (no plan, no Bolt write; the rollout only reports, see planner.HibernationRollout).
// Otherwise the ordinary stages run (reconcile), which a pause ends before any write. A paused
// pass's children are returned as observed (render).
func (h *handler) pass(ctx context.Context, in *passInput) planner.Outcome {
	step, view := h.hibernation(ctx, in)
	var out planner.Outcome
	if step.InCharge {
		out = planner.Outcome{Declared: in.declared, DryRun: in.dryRun, Replicas: step.Replicas,
			Rollout: planner.HibernationRollout(step, in.rolloutInput(step.Replicas))}
		if view != nil {
			out.Latest, out.Progress = *view, in.progressOn(*view)
		}
	} else {
		out = h.reconcile(ctx, in)
	}
	out.Paused, out.Hibernation = in.paused, step
	out.PodReady, out.Problems, out.MissingSecrets = in.obs.ready, in.obs.problems, in.obs.missingSecrets
	out.PodNodes, out.MainBudgetHeld = in.obs.podNodes, in.obs.mainBudgetPod
	out.Sent = in.sent.records
	out.ClusterTLSProblem = in.obs.tls.Peers
	out.ReplicaRecords = h.replicaHealth(ctx, in, out)
	return out
}

// reconcile runs the ordinary stages within ctx's budget and combines what each returns into the
// pass's outcome. The first stage that cannot go on ends the pass; every decision is the
// planner's, and this only reads, asks it, and acts. The outcome always carries the rollout's
// step, whose partitions the response returns (planner.PassRollout).
func (h *handler) reconcile(ctx context.Context, in *passInput) (out planner.Outcome) {
	out = planner.Outcome{Declared: in.declared, DryRun: in.dryRun, Replicas: in.held,
		WorkloadsSettled: in.obs.atDeclared(in.declared)}
	defer func() { out.Rollout = planner.PassRollout(out, in.rolloutInput(out.Replicas)) }()
	conn, problem := h.connector(in.obs.tls)
	if out.TLSProblem = problem; problem != "" {
		return out // spec.tls cannot be honoured: no Bolt at all
	}
	out.WaitingPods = in.obs.unreadyPods(in.declared)
	rolling := len(out.WaitingPods) > 0 && in.rolloutWithoutView().InProgress()
	unlock, err := h.locks.lock(ctx, in.cluster.Namespace()+"/"+in.cluster.Name())
	if err != nil {
		return out // the budget ran out before any coordinator was asked
	}
	defer unlock()
	if len(out.WaitingPods) > 0 && !rolling {
		out.Latest, out.Progress = readWhileWaiting(ctx, conn, in)
		return out
	}
	if out.Discovery = discover(ctx, conn, in.declared); !out.Discovery.Found() {
		return out
	}
	held, restoring := h.restore(ctx, conn, in, out.Discovery.View)
	in = in.withRestoreHeld(held)
	out.Declared, out.Restore = in.declared, restoring
	if rolling {
		out.Latest, out.Progress, out.Rollout = rolloutOnLeader(ctx, conn, in, out.Discovery.View)
		return out
	}
	found := planOn(in, out.Discovery.View)
	out.Latest, out.Progress = found.view, found.plan.Progress
	if in.paused || planner.Settled(found.plan, found.view, in.held) {
		out.Plan, out.Replicas = found.plan, found.plan.Replicas
		if in.paused {
			return out
		}
		return h.afterPlan(ctx, conn, in, out)
	}
	led := h.onLeader(ctx, conn, in, out.Discovery.View)
	out = led.onto(out)
	if led.planned && len(led.plan.Commands) == 0 {
		return h.afterPlan(ctx, conn, in, out) // a drain's step waits for the plan's steps
	}
	return out
}

// afterPlan runs the stages that wait for a plan with nothing left to run — the drain, then,
// when nothing wrote, the coordinator settings and the certificate rotation — and combines what
// they return into out.
func (h *handler) afterPlan(ctx context.Context, conn memgraph.Connector, in *passInput, out planner.Outcome) planner.Outcome {
	d := h.drain(ctx, conn, in, out.Discovery.View)
	out.Drain, out.Execution = d.step, d.execution
	if d.latest.Leader != "" {
		out.Latest, out.Progress = d.latest, d.progress
	}
	if len(out.Execution.Writes) > 0 || ctx.Err() != nil {
		return out // the next pass plans on the cluster these writes made
	}
	view := out.Latest
	if view.Leader == "" {
		view = out.Discovery.View
	}
	out.Settings = h.settings(ctx, conn, in, view)
	out.Rotation = h.rotate(ctx, conn, in)
	return out
}

// readWhileWaiting reads the cluster while declared pods are not Ready, for the status alone:
// discovery among the Ready coordinators (readyCoordinators), then the leader's own table. It
// writes nothing (writes wait for every declared pod). The view is zero when no coordinator pod
// is Ready, or no ready leader answered.
func readWhileWaiting(ctx context.Context, conn memgraph.Connector, in *passInput) (planner.View, planner.Progress) {
	ready := in.obs.readyCoordinators(in.declared)
	if len(ready) == 0 {
		return planner.View{}, planner.Progress{}
	}
	disc := discoverAmong(ctx, conn, ready, len(planner.DiscoveryOrder(in.declared)))
	if !disc.Found() {
		return planner.View{}, planner.Progress{}
	}
	lv, ok := readyLeaderView(ctx, conn, in.declared, disc.View)
	if !ok {
		return planner.View{}, planner.Progress{}
	}
	return lv, in.progressOn(lv)
}

// readyLeaderView is the leader's own table (leaderView) when the leader is ready; ok is false
// when it could not be read or the leader is not ready (its table is no evidence).
func readyLeaderView(ctx context.Context, conn memgraph.Connector, d topology.Declared, found planner.View) (planner.View, bool) {
	lv, err := leaderView(ctx, conn, d, found)
	if err != nil {
		return planner.View{}, false
	}
	_, leadership := planner.ReadLeadership(lv.Instances)
	return lv, leadership == planner.LeaderReady
}

// progressOn is the progress a plan on view reports.
func (in *passInput) progressOn(view planner.View) planner.Progress {
	return planner.Decide(in.declared, planner.Observe(view.Instances, nil, in.obs.current)).Progress
}

// executor runs commands on client for this pass.
func (in *passInput) executor(client memgraph.Client, catchUp catchUpReader, log *slog.Logger) executor {
	return executor{client: client, catchUp: catchUp, declared: in.declared, current: in.obs.current, workloads: in.workloads,
		log: log, sent: in.sent, settle: in.settle}
}

// reading is a view of the cluster and the plan made on it.
type reading struct {
	view     planner.View
	observed planner.Observed
	plan     planner.Plan
}

// planOn plans on view, with the rollout.
func planOn(in *passInput, view planner.View) reading {
	observed := planner.Observe(view.Instances, nil, in.obs.current)
	observed.Workloads = in.workloads
	return reading{view: view, observed: observed, plan: planner.Decide(in.declared, observed)}
}

// rolloutOnLeader plans the rollout alone on the leader's own table, for a pass whose pods are
// not all Ready: it runs no step, and returns the leader's view, the progress it shows and the
// rollout's step (zero when the leader cannot be read or is not ready).
func rolloutOnLeader(ctx context.Context, conn memgraph.Connector, in *passInput, found planner.View) (planner.View, planner.Progress, planner.RolloutStep) {
	lv, ok := readyLeaderView(ctx, conn, in.declared, found)
	if !ok {
		return planner.View{}, planner.Progress{}, planner.RolloutStep{}
	}
	observed := planner.Observe(lv.Instances, nil, in.obs.current)
	return lv, planner.Decide(in.declared, observed).Progress, planner.PlanRollout(planner.RolloutInput{
		Declared: in.declared, Replicas: in.held, Workloads: *in.workloads, Cluster: &observed,
	})
}

// leaderPass is what the stage on the leader returns: the plan it stood on and what executing it
// achieved, the latest view it read and its progress, or why it could not plan.
type leaderPass struct {
	planned   bool
	plan      planner.Plan
	execution planner.Execution
	latest    planner.View
	progress  planner.Progress
	err       error                 // reading the leader's table or its replication lag failed
	notReady  string                // the leader answered from its local Raft copy: plan nothing
	replicas  *planner.MainReplicas // the MAIN's SHOW REPLICAS, when read for the catch-up proofs
}

// onto is out with what the stage on the leader found.
func (led leaderPass) onto(out planner.Outcome) planner.Outcome {
	out.LeaderErr, out.LeaderNotReady, out.MainReplicas = led.err, led.notReady, led.replicas
	if led.planned {
		out.Plan, out.Replicas, out.Execution = led.plan, led.plan.Replicas, led.execution
	}
	if led.latest.Leader != "" {
		out.Latest, out.Progress = led.latest, led.progress
	}
	return out
}

// onLeader re-reads the cluster on the leader (writes go there, and the plan must rest on the
// authoritative table), plans, and when the plan needs the catch-up proofs (a MAIN handover may
// be due) reads them — SHOW REPLICATION LAG on the leader, SHOW REPLICAS on the MAIN — and plans
// again with them. Unless a dry run, it executes the plan and, when a step ran, reads the cluster
// once more to report what the steps changed.
func (h *handler) onLeader(ctx context.Context, conn memgraph.Connector, in *passInput, found planner.View) leaderPass {
	lv, err := leaderView(ctx, conn, in.declared, found)
	if err != nil {
		return leaderPass{err: err}
	}
	if _, leadership := planner.ReadLeadership(lv.Instances); leadership == planner.LeaderNotReady {
		return leaderPass{notReady: lv.Leader} // its table is no evidence: plan nothing
	}
	read := planOn(in, lv)
	client := in.sent.client(conn.Client(lv.Coordinator.BoltServer))
	catchUp := catchUpReader{conn: conn, auth: in.obs.auth, declared: in.declared}
	if read.plan.NeedsCatchUpReads {
		lag, err := client.ShowReplicationLag(ctx)
		if err != nil {
			return leaderPass{latest: lv, progress: read.plan.Progress,
				err: fmt.Errorf("SHOW REPLICATION LAG on %s: %w", lv.Coordinator.Name, err)}
		}
		read.observed.Lag, read.observed.Replicas = lag, catchUp.read(ctx, lv.Instances)
		read.plan = planner.Decide(in.declared, read.observed)
	}
	led := leaderPass{planned: true, plan: read.plan, latest: lv, progress: read.plan.Progress, replicas: read.observed.Replicas}
	if in.dryRun || len(read.plan.Commands) == 0 {
		return led
	}
	led.execution = in.executor(client, catchUp, h.log).execute(ctx, read.plan.Commands)
	if len(led.execution.Ran) > 0 && ctx.Err() == nil {
		if after, ok := reread(ctx, client, lv.Coordinator); ok {
			led.latest, led.progress = after, in.progressOn(after)
		}
	}
	return led
}

// reread is the leader's table after the steps, to report what the cluster looks like after them,
// not before the pass. After a yield the old leader may name no leader yet, and after a FORCE
// RESET it may not be ready yet (its table says nothing about the instances): then ok is false
// and the view before the steps stands.
func reread(ctx context.Context, client memgraph.Client, leader topology.Coordinator) (planner.View, bool) {
	rows, err := client.ShowInstances(ctx)
	if err != nil {
		return planner.View{}, false
	}
	_, leadership := planner.ReadLeadership(rows)
	return planner.NewView(leader, rows), leadership == planner.LeaderReady
}

// memoryLimits is each role's --memory-limit in bytes, for the roles that have one known.
func memoryLimits(c *topology.Cluster) map[string]int64 {
	out := map[string]int64{}
	for _, role := range []string{topology.RoleCoordinator, topology.RoleData} {
		if bytes, ok := c.MemoryLimitBytes(role); ok {
			out[role] = bytes
		}
	}
	return out
}

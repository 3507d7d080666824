package hooks

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

func (h *handler) handleSync(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	dryRun, err := syncDryRun(r.URL.RawQuery)
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
	h = h.forCluster(cluster) // from here on every log line names the cluster
	ctx, cancel := context.WithTimeout(withClusterLog(r.Context(), cluster), h.cfg.SyncBudget)
	defer cancel()
	out := h.pass(ctx, parent, &obs, dryRun)
	answer := answerBuffers.Get().(*[]byte)
	defer recycleAnswer(answer) // written out by writeEncoded before it returns
	resp, verdicts, err := render(*answer, parent, &obs, out, h.lastOperation(cluster, out), h.cfg.Now())
	*answer = resp
	if err != nil {
		h.fail(w, "sync", badRequestf("rendering children: %v", err))
		return
	}
	reason := string(verdicts.Converged.Reason)
	h.metrics.syncDuration.WithLabelValues(reason).Observe(time.Since(start).Seconds())
	h.log.Info("sync", "outcome", reason, "ran", len(out.Execution.Ran), "planned", len(out.Plan.Commands),
		"dryRun", dryRun, "ms", time.Since(start).Milliseconds())
	h.writeEncoded(w, "sync", http.StatusOK, resp)
}

// pass runs one sync pass. Hibernation comes first: while it hibernates or wakes the cluster,
// nothing else runs (no plan, no Bolt write; the rollout only reports, see
// planner.HibernationRollout). Otherwise the ordinary stages run (reconcile),
// which a pause ends before any write. A paused pass's children are returned frozen (render).
func (h *handler) pass(ctx context.Context, p *admittedParent, work *observation, dryRun bool) planner.Outcome {
	c := p.cluster
	d := p.declare(work.current)
	paused, _ := c.Paused()
	coordinatorHash, dataHash := p.templateHashes()
	w := work.rolloutWorkloads(c, [2]string{coordinatorHash, dataHash}, h.cfg.Now())
	step, view := h.hibernation(ctx, c, work, w, d)
	var out planner.Outcome
	if step.InCharge {
		out = planner.Outcome{Declared: d, DryRun: dryRun, Replicas: step.Replicas}
		out.Rollout = planner.HibernationRollout(step, planner.RolloutInput{Declared: d, Replicas: step.Replicas, Workloads: *w})
		if view != nil {
			out.Latest = *view
			out.Progress = planner.Decide(d, planner.Observe(view.Instances, nil, work.current)).Progress
		}
	} else {
		out = h.reconcile(ctx, p, work, w, dryRun, paused)
	}
	out.Paused, out.Hibernation = paused, step
	return out
}

// reconcile runs one pass's stages within ctx's budget — the gates, leader discovery, the plan
// on the view found, and (on the leader, unless dryRun) its execution — and records each one's
// result in the outcome; the first stage that cannot go on ends the pass. Every decision is the
// planner's: this only reads, asks it, and acts. The outcome always carries the rollout's step,
// whose partitions the response returns: the plan's, or, when no plan stood on a view of the
// cluster, one that releases no pod.
//
// A paused pass stops once it has planned on the discovery view: it reports, never writes.
func (h *handler) reconcile(ctx context.Context, p *admittedParent, work *observation, w *planner.Workloads, dryRun, paused bool) planner.Outcome {
	out := h.stages(ctx, p, work, w, dryRun, paused)
	if out.Rollout.Reason == "" {
		out.Rollout = out.Plan.Rollout
	}
	if out.Rollout.Reason == "" {
		out.Rollout = planner.PlanRollout(planner.RolloutInput{Declared: out.Declared, Replicas: out.Replicas, Workloads: *w})
	}
	return out
}

func (h *handler) stages(ctx context.Context, p *admittedParent, work *observation, w *planner.Workloads, dryRun, paused bool) planner.Outcome {
	c := p.cluster
	d := p.declare(work.current)
	out := planner.Outcome{
		Declared: d, DryRun: dryRun, WorkloadsSettled: work.atDeclared(d),
		// Unobserved, nothing changes: not even the widened retiring range may grow a StatefulSet.
		Replicas: planner.Hold(d, work.returned),
	}
	conn, problem := h.connector(work.tls)
	if out.TLSProblem = problem; problem != "" {
		return out
	}
	out.WaitingPods = work.unreadyPods(d)
	rolling := len(out.WaitingPods) > 0 &&
		planner.PlanRollout(planner.RolloutInput{Declared: d, Replicas: out.Replicas, Workloads: *w}).InProgress()
	if len(out.WaitingPods) > 0 && !rolling {
		return out
	}
	unlock, err := h.locks.lock(ctx, c.Namespace()+"/"+c.Name())
	if err != nil {
		return out // the budget ran out before any coordinator was asked
	}
	defer unlock()

	if out.Discovery = discover(ctx, conn, d); !out.Discovery.Found() {
		return out
	}
	if rolling {
		// A pod is not Ready in the middle of a rollout: nothing is planned, but the rollout
		// reads the leader (to know whom a pod already down belongs to) and reports the step.
		rolloutOnLeader(ctx, conn, work.current, w, &out)
		return out
	}
	view := out.Discovery.View
	observed := planner.Observe(view.Instances, nil, work.current)
	observed.Workloads = w
	plan := planner.Decide(d, observed)
	out.Latest, out.Progress = view, plan.Progress
	if paused || planner.Settled(plan, view, out.Replicas) {
		out.Plan, out.Replicas = plan, plan.Replicas
		return out
	}
	h.onLeader(ctx, conn, catchUpReader{conn: conn, auth: work.auth}, work.current, w, &out)
	return out
}

// rolloutOnLeader plans the rollout alone on the leader's own table, for a pass whose pods are
// not all Ready: it runs no step and returns the replica counts it held.
func rolloutOnLeader(ctx context.Context, conn memgraph.Connector, current topology.Replicas, w *planner.Workloads, out *planner.Outcome) {
	lv, err := leaderView(ctx, conn, out.Declared, out.Discovery.View)
	if err != nil {
		return
	}
	if _, leadership := planner.ReadLeadership(lv.Instances); leadership != planner.LeaderReady {
		return
	}
	observed := planner.Observe(lv.Instances, nil, current)
	out.Latest, out.Progress = lv, planner.Decide(out.Declared, observed).Progress
	out.Rollout = planner.PlanRollout(planner.RolloutInput{
		Declared: out.Declared, Replicas: out.Replicas, Workloads: *w, Cluster: &observed,
	})
}

// onLeader re-reads the cluster on the leader (writes go there, and the plan must rest on the
// authoritative table), reads the catch-up proofs when a MAIN handover may be due (SHOW
// REPLICATION LAG on the leader, SHOW REPLICAS on the MAIN), plans, executes, and, when a step
// ran, reads the cluster once more to report what the steps changed.
func (h *handler) onLeader(ctx context.Context, conn memgraph.Connector, catchUp catchUpReader, current topology.Replicas,
	w *planner.Workloads, out *planner.Outcome) {
	d := out.Declared
	lv, err := leaderView(ctx, conn, d, out.Discovery.View)
	if err != nil {
		out.LeaderErr = err
		return
	}
	if _, leadership := planner.ReadLeadership(lv.Instances); leadership == planner.LeaderNotReady {
		out.LeaderNotReady = lv.Leader // its table is no evidence: plan nothing
		return
	}
	observed := planner.Observe(lv.Instances, nil, current)
	observed.Workloads = w
	client := conn.Client(lv.Coordinator.BoltServer)
	if planner.NeedsCatchUpReads(d, observed) {
		lag, err := client.ShowReplicationLag(ctx)
		if err != nil {
			out.LeaderErr = fmt.Errorf("SHOW REPLICATION LAG on %s: %w", lv.Coordinator.Name, err)
			out.Latest, out.Progress = lv, planner.Decide(d, observed).Progress
			return
		}
		observed.Lag = lag
		observed.Replicas = catchUp.read(ctx, lv.Instances)
	}
	out.Plan = planner.Decide(d, observed)
	out.Replicas, out.Latest, out.Progress = out.Plan.Replicas, lv, out.Plan.Progress
	if out.DryRun || len(out.Plan.Commands) == 0 {
		return
	}
	x := executor{client: client, catchUp: catchUp, declared: d, current: current, workloads: w, log: h.log, count: h.countCommand}
	out.Execution = x.execute(ctx, out.Plan.Commands)
	if len(out.Execution.Ran) > 0 && ctx.Err() == nil {
		reread(ctx, client, lv.Coordinator, current, out)
	}
}

// reread reports what the cluster looks like after the steps, not what it looked like before
// the pass. After a yield the old leader may name no leader yet, and after a FORCE RESET it may
// not be ready yet (its table says nothing about the instances): then the pre-pass view stands.
func reread(ctx context.Context, client memgraph.Client, leader topology.Coordinator, current topology.Replicas, out *planner.Outcome) {
	rows, err := client.ShowInstances(ctx)
	if err != nil {
		return
	}
	if _, leadership := planner.ReadLeadership(rows); leadership == planner.LeaderReady {
		out.Latest = planner.NewView(leader, rows)
		out.Progress = planner.Decide(out.Declared, planner.Observe(rows, nil, current)).Progress
	}
}

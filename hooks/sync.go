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

// Resync delays (seconds) by situation: short while anything is pending, long when converged, so
// a registration a pod loses (fresh volume, wiped state) is re-issued without any watch event.
const (
	resyncBudgetExhausted = 1
	resyncProgressing     = 2
	resyncWaiting         = 5
	resyncConverged       = 30
)

// pass is one sync of one cluster: everything observed, planned and done, from which the
// response is rendered.
type pass struct {
	cluster  *topology.MemgraphCluster // defaulted
	declared topology.Declared
	work     workloads
	replicas topology.Replicas // what the response returns

	waitingPods []string
	obs         observation
	final       view // the latest SHOW INSTANCES taken (after execution when something ran)
	plan        planner.Result
	planned     []string // queries of the plan that was (or, on a dry run, would be) executed
	ex          execution
	leaderErr   error
	notReady    string // the leader we were sent to had not finished reconciling
	dryRun      bool
	starved     bool   // the budget ran out before any coordinator was asked
	reread      bool   // final was read after execution, so p.plan does not describe it
	outcome     string // the Converged reason rendered, for logs and metrics
	conn        memgraph.Connector
	tlsProblem  string // spec.tls cannot be honoured: nothing is dialled
}

func (h *handler) handleSync(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	dryRun, err := syncDryRun(r.URL.RawQuery)
	if err != nil {
		h.fail(w, "sync", err)
		return
	}
	cluster, work, err := decodeSync(r)
	if err != nil {
		h.fail(w, "sync", err)
		return
	}
	h = h.forCluster(cluster) // from here on every log line names the cluster
	ctx, cancel := context.WithTimeout(withClusterLog(r.Context(), cluster), h.cfg.SyncBudget)
	defer cancel()
	p := h.reconcile(ctx, cluster, work, dryRun)
	resp, err := h.render(p)
	if err != nil {
		h.fail(w, "sync", badRequestf("rendering children: %v", err))
		return
	}
	h.metrics.syncDuration.WithLabelValues(p.outcome).Observe(time.Since(start).Seconds())
	h.log.Info("sync", "outcome", p.outcome,
		"ran", len(p.ex.ran), "planned", len(p.planned), "dryRun", p.dryRun, "ms", time.Since(start).Milliseconds())
	h.writeJSON(w, "sync", http.StatusOK, resp)
}

// reconcile observes, plans and (unless dryRun) executes, all within ctx's budget.
func (h *handler) reconcile(ctx context.Context, spec *topology.MemgraphCluster, work workloads, dryRun bool) *pass {
	p := &pass{cluster: spec, work: work, dryRun: dryRun}
	declared := topology.Replicas{Coordinators: spec.Spec.Coordinators, DataInstances: spec.Spec.DataInstances}
	p.declared = topology.Declare(spec.Network(), declared, p.work.current)
	// Unobserved, nothing changes: not even the widened retiring range may grow a StatefulSet.
	p.replicas = planner.Hold(p.declared, p.work.specReplicas)

	if p.conn, p.tlsProblem = h.connector(work.tls); p.tlsProblem != "" {
		return p
	}
	if p.waitingPods = p.work.unreadyPods(p.declared); len(p.waitingPods) > 0 {
		return p
	}
	unlock, err := h.locks.lock(ctx, spec.Namespace+"/"+spec.Name)
	if err != nil {
		p.starved = true
		return p
	}
	defer unlock()

	p.obs = discoverLeader(ctx, p.conn, p.declared)
	if p.obs.view.leader == "" {
		p.starved = p.obs.asked == 0
		return p
	}
	p.final = p.obs.view
	observed := h.observed(p.obs.view, nil, p)
	p.plan = planner.Plan(p.declared, observed)
	// A follower's answer settles a converged pass, except a shrink: that rests on the leader's.
	shrinks := p.plan.Replicas.Coordinators < p.replicas.Coordinators || p.plan.Replicas.DataInstances < p.replicas.DataInstances
	if len(p.plan.Commands) == 0 && !planner.NeedsReplicationLag(p.declared, observed) &&
		(p.obs.view.fromLeader() || !shrinks) {
		p.replicas = p.plan.Replicas
		return p
	}
	h.planOnLeader(ctx, p)
	return p
}

// planOnLeader re-reads the cluster on the leader (writes go there, and the plan must rest on
// the authoritative table), fetches replication lag when a MAIN handover is needed, plans and
// executes.
func (h *handler) planOnLeader(ctx context.Context, p *pass) {
	lv, err := leaderView(ctx, p.conn, p.declared, p.obs.view)
	if err != nil {
		p.leaderErr = err
		return
	}
	if _, leadership := planner.ReadLeadership(lv.instances); leadership == planner.LeaderNotReady {
		p.notReady = lv.leader // its table is no evidence: plan nothing
		return
	}
	p.final = lv
	observed := h.observed(lv, nil, p)
	client := p.conn.Client(lv.coordinator.BoltServer)
	var lag []memgraph.InstanceLag
	if planner.NeedsReplicationLag(p.declared, observed) {
		if lag, err = client.ShowReplicationLag(ctx); err != nil {
			p.leaderErr = fmt.Errorf("SHOW REPLICATION LAG on %s: %w", lv.coordinator.Name, err)
			return
		}
	}
	observed.Lag = lag
	p.plan = planner.Plan(p.declared, observed)
	p.replicas = p.plan.Replicas
	for _, c := range p.plan.Commands {
		p.planned = append(p.planned, c.String())
	}
	if p.dryRun || len(p.plan.Commands) == 0 {
		return
	}
	replan := func(rows []memgraph.Instance, lag []memgraph.InstanceLag) planner.Result {
		return planner.Plan(p.declared, planner.Observed{Instances: rows, Leader: leaderName(rows), Lag: lag, Current: p.work.current})
	}
	p.ex = h.execute(ctx, client, p.plan.Commands, replan)
	if len(p.ex.ran) == 0 || ctx.Err() != nil {
		return
	}
	// Report what the cluster looks like now, not what it looked like before the pass; after a
	// yield the old leader may name no leader yet, and after a FORCE RESET it may not be ready
	// yet (its table says nothing about the instances): then the pre-pass view stands.
	if rows, err := client.ShowInstances(ctx); err == nil && readyLeader(rows) {
		p.final = view{coordinator: lv.coordinator, instances: rows, leader: leaderName(rows)}
		p.reread = true
	}
}

func (h *handler) observed(v view, lag []memgraph.InstanceLag, p *pass) planner.Observed {
	return planner.Observed{Instances: v.instances, Leader: v.leader, Lag: lag, Current: p.work.current}
}

func readyLeader(rows []memgraph.Instance) bool {
	_, leadership := planner.ReadLeadership(rows)
	return leadership == planner.LeaderReady
}

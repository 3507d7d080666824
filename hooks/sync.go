package hooks

import (
	"context"
	"net/http"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/hookmetrics"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// handleSync serves one sync: decode and observe the request, run the pass (the planner's
// steps, performed), render the children and the status from what the pass decided.
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
	done := h.pass(ctx, parent, &obs, dryRun)
	answer := answerBuffers.Get().(*[]byte)
	defer recycleAnswer(answer) // written out by writeEncoded before it returns
	now := h.cfg.Now()
	resp, err := render(*answer, parent, &obs, done, h.operations.report(cluster, done.Operation, now),
		h.operations.operations(cluster, done.Outcome.Sent), now)
	*answer = resp
	if err != nil {
		h.fail(w, "sync", wire.Badf("rendering children: %v", err))
		return
	}
	h.gauge(cluster, done)
	reason := string(done.Verdicts.Converged.Reason)
	h.metrics.SyncDuration.WithLabelValues(reason).Observe(time.Since(start).Seconds())
	h.log.Info("sync", "outcome", reason, "ran", len(done.Outcome.Execution.Ran), "planned", len(done.Outcome.Plan.Commands),
		"dryRun", dryRun, "ms", time.Since(start).Milliseconds())
	h.writeEncoded(w, "sync", http.StatusOK, resp)
}

// input is what the request shows the planner, gathered once before the pass's first step.
// conn is the pass's connector (nil when connProblem says why there is none).
func (h *handler) input(p *admittedParent, obs *observation, dryRun bool, conn memgraph.Connector, connProblem string) *planner.Input {
	c, now := p.cluster, h.cfg.Now()
	_, probes := conn.(memgraph.CertificateProbe)
	agent := p.agentPin(obs)
	in := &planner.Input{Cluster: c, Declared: c.Advertise(p.declare(obs.span), obs.external), Span: obs.span, Returned: obs.returned,
		SetsReconciled: obs.reconciled, Workloads: obs.rolloutWorkloads(c, p.templateHashes(obs.certificateRecord().Restart, agent.Image), now),
		PodReady: obs.ready, PodNodes: obs.podNodes, Nodes: obs.nodes, ClusterTLSPods: obs.clusterTLS, MainBudgetPod: obs.mainBudgetPod,
		Certificate: obs.certificateRecord(), Window: obs.window, Problems: obs.problems, MissingSecrets: obs.missingSecrets,
		TLS: planner.TLSInput{Problem: connProblem, Enabled: obs.tls.Config != nil, Leaf: obs.tls.Leaf, Stamp: obs.tls.Stamp,
			ClusterProblem: obs.tls.Peers},
		DryRun: dryRun, Now: now, ProjectionGrace: h.cfg.ProjectionGrace, CanProbe: probes,
		LagDue: h.metrics.Clusters.LagDue(c.Namespace(), c.Name()), ReplicasDue: h.metrics.Replicas.ReplicaReadDue(c.Namespace(), c.Name()),
		MainlessSettle: h.cfg.MainlessSettle, Agent: agent}
	if src := obs.restore; src != nil {
		in.RestoreSource = planner.RestoreSource{Label: src.Label, Problem: src.Problem}
	}
	return in
}

// gauge sets the cluster's gauges from the pass, or drops them while it hibernates (nothing
// runs, on purpose: no alert).
func (h *handler) gauge(c *topology.Cluster, done planner.Done) {
	if done.ReplicasRead {
		h.metrics.Replicas.ReplicasRead(c.Namespace(), c.Name())
	}
	if done.Summary == nil {
		h.metrics.Clusters.Forget(c.Namespace(), c.Name())
		h.metrics.Replicas.Forget(c.Namespace(), c.Name())
		return
	}
	state := hookmetrics.ClusterState{ClusterSummary: *done.Summary, MemoryLimitBytes: memoryLimits(c)}
	if done.LagRead {
		state.MaxReplicaLag, state.LagObserved = hookmetrics.MaxReplicaLag(done.Lag), true
	}
	h.metrics.Clusters.Set(c.Namespace(), c.Name(), state)
	h.metrics.Replicas.Set(c.Namespace(), c.Name(), done.Outcome.ReplicaRecords, done.ReplicaProblems)
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

package hooks

import (
	"context"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/hookmetrics"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// replicaLag reads SHOW REPLICATION LAG on the leader the pass last read, for the cluster's
// memgraph_hooks_cluster_max_replica_lag gauge alone (no decision reads it), at most once per
// hookmetrics.LagRefresh per cluster: a converged pass costs no extra query in between. ok is
// false when no read was due, no ready leader was read, or the leader did not answer.
func (h *handler) replicaLag(ctx context.Context, in *passInput, out planner.Outcome) (lag int64, ok bool) {
	leader := out.Latest.Coordinator
	if out.Latest.Leader == "" || leader.Name != out.Latest.Leader || ctx.Err() != nil ||
		!h.metrics.Clusters.LagDue(in.cluster.Namespace(), in.cluster.Name()) {
		return 0, false
	}
	conn, problem := h.connector(in.obs.tls)
	if problem != "" {
		return 0, false
	}
	rows, err := conn.Client(leader.BoltServer).ShowReplicationLag(ctx)
	if err != nil {
		h.log.Debug("SHOW REPLICATION LAG for the lag gauge", "coordinator", leader.Name, "error", err.Error())
		return 0, false
	}
	return hookmetrics.MaxReplicaLag(rows), true
}

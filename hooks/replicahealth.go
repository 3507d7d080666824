package hooks

import (
	"context"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// replicaHealth is status.replicas for the pass: the MAIN's SHOW REPLICAS turned into records
// (planner.ReplicaRecords) when the pass read it — as a catch-up proof, or because this process
// has not asked the cluster's MAIN for hookmetrics.ReplicaRefresh — else the prior records
// carried forward (planner.CarryReplicaRecords). Either way only the replicas the latest ready
// leader's table lists as replicas keep a record.
//
// Cost: a converged pass adds no query, except one SHOW REPLICAS on the MAIN data instance at
// most every ReplicaRefresh (30 s) per cluster and hook process — in the same passes, as a rule,
// as the lag gauge's SHOW REPLICATION LAG on the leader (replicaLag), which runs on the same
// period. The records change, and so does the status, only when a replica's state does.
func (h *handler) replicaHealth(ctx context.Context, in *passInput, out planner.Outcome) []topology.ReplicaStatus {
	prior := in.cluster.PriorReplicas()
	if out.Hibernation.InCharge {
		return nil // nothing replicates while the cluster hibernates or wakes
	}
	main, _, ok := planner.CatchUpSource(out.Declared, out.Latest.Instances)
	if _, leadership := planner.ReadLeadership(out.Latest.Instances); !ok || leadership != planner.LeaderReady {
		return planner.CarryReplicaRecords(prior, out.Latest)
	}
	read := out.MainReplicas
	if read == nil || read.Main != main || read.Problem != "" {
		read = h.readReplicas(ctx, in, out)
	}
	if read == nil || read.Problem != "" {
		return planner.CarryReplicaRecords(prior, out.Latest)
	}
	return planner.CarryReplicaRecords(planner.ReplicaRecords(read.Rows, prior, h.cfg.Now()), out.Latest)
}

// readReplicas asks the MAIN of the pass's latest table for SHOW REPLICAS when this process has
// not for hookmetrics.ReplicaRefresh; nil when no read was due or possible.
func (h *handler) readReplicas(ctx context.Context, in *passInput, out planner.Outcome) *planner.MainReplicas {
	ns, name := in.cluster.Namespace(), in.cluster.Name()
	if ctx.Err() != nil || !h.metrics.Replicas.ReplicaReadDue(ns, name) {
		return nil
	}
	conn, problem := h.connector(in.obs.tls)
	if problem != "" {
		return nil
	}
	h.metrics.Replicas.ReplicasRead(ns, name)
	read := catchUpReader{conn: conn, auth: in.obs.auth, declared: out.Declared}.read(ctx, out.Latest.Instances)
	if read != nil && read.Problem != "" {
		h.log.Debug("SHOW REPLICAS for the replicas' health", "main", read.Main, "error", read.Problem)
	}
	return read
}

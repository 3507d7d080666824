package hooks

import (
	"context"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// Restoring a backup into a new cluster (spec.bootstrap.fromBackup). Memgraph refuses RECOVER
// SNAPSHOT on a REPLICA and on a storage that holds data (without FORCE, which the hook never
// sends), and after it loads a snapshot on a MAIN it recovers every registered replica from it
// (Memgraph v3.12.0 src/query/interpreter.cpp 6320–6325, ForceRecoverReplica; docs/data-safety.md).
// So the hook restores into the instance that becomes the first MAIN while it is still
// unregistered — a data instance nobody registered is its own MAIN, and no client reaches it
// through the coordinators — and registers no data instance before that succeeded
// (topology.Declared.RestoreHeld). Once one is registered, the restore is behind the cluster.

// restore is the restore stage, on the leader's view found, when the cluster restores a backup
// and no data instance is registered yet: RECOVER SNAPSHOT on the instance that becomes the first
// MAIN. It returns what holds registration for this pass (topology.Declared.RestoreHeld): ""
// after a success, else why, in Memgraph's words when Memgraph refused. Once a data instance is
// registered the hold is lifted without a query.
func (h *handler) restore(ctx context.Context, conn memgraph.Connector, in *passInput, found planner.View) (held string) {
	held = in.declared.RestoreHeld
	if held == "" || in.dryRun || in.paused {
		return held
	}
	lv, err := leaderView(ctx, conn, in.declared, found)
	if err != nil {
		return held
	}
	if !planner.Restoring(lv.Instances) {
		return ""
	}
	src := in.obs.restore
	if src.Problem != "" {
		return src.Problem
	}
	target, ok := planner.RestoreTarget(in.declared)
	if !ok {
		return held
	}
	data, problem := catchUpReader{conn: conn, auth: in.obs.auth}.connector()
	if problem != "" {
		return "restoring " + src.Label + ": " + problem
	}
	if err := data.Client(target.BoltServer).RecoverSnapshot(ctx, src.URI, src.S3); err != nil {
		return fmt.Sprintf("restoring %s into %s failed: %s%s; the data instances stay unregistered until it succeeds "+
			"(a storage that already holds data is never overwritten: delete its PersistentVolumeClaim, or remove "+
			"spec.bootstrap.fromBackup to start on the data it holds)", src.Label, target.Name, planner.Explain(err), src.CANote())
	}
	h.log.Info("restored a backup", "from", src.Label, "into", target.Name)
	return ""
}

package hooks

import (
	"context"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/backups"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Restoring a backup into a new cluster (spec.bootstrap.fromBackup). Memgraph refuses RECOVER
// SNAPSHOT on a REPLICA and on a storage that holds data (without FORCE, which the hook never
// sends), and after it loads a snapshot on a MAIN it recovers every registered replica from it
// (Memgraph v3.12.0 src/query/interpreter.cpp 6320–6325, ForceRecoverReplica; docs/data-safety.md).
// So the hook restores into the instance that becomes the first MAIN while it is still
// unregistered — a data instance nobody registered is its own MAIN, and no client reaches it
// through the coordinators — and registers no data instance before that succeeded
// (topology.Declared.RestoreHeld). Once one is registered, the restore is behind the cluster.

// observeRestore reads the restore's source out of a sync request: the related MemgraphBackups
// (decoded again from body, as MemgraphBackups) and Secrets.
func observeRestore(req *syncRequest, body []byte, c *topology.Cluster) (*backups.RestoreSource, error) {
	if c.FromBackup() == nil {
		return nil, nil
	}
	var raw wire.RawGroups
	if err := wire.DecodeBody(body, &raw); err != nil {
		return nil, err
	}
	found, err := wire.Entries(req.Related, "related", wire.SecretKey)
	if err != nil {
		return nil, err
	}
	secrets := map[string]*wire.Object{}
	for _, e := range found {
		if e.Obj.Metadata.In(c.Namespace()) {
			secrets[e.Obj.Metadata.Name] = e.Obj
		}
	}
	return backups.ReadRestoreSource(c, raw.Related, secrets)
}

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
		return fmt.Sprintf("restoring %s into %s failed: %s; the data instances stay unregistered until it succeeds "+
			"(a storage that already holds data is never overwritten: delete its PersistentVolumeClaim, or remove "+
			"spec.bootstrap.fromBackup to start on the data it holds)", src.Label, target.Name, planner.Explain(err))
	}
	h.log.Info("restored a backup", "from", src.Label, "into", target.Name)
	return ""
}

// restoreRules ask, for a cluster that restores a backup, for the MemgraphBackup it names and
// for the Secrets of its namespace: the backup's destination names its credentials Secret, which
// only the MemgraphBackup says (the hook reads only that one).
func restoreRules(c *topology.Cluster) []wire.RelatedRule {
	from := c.FromBackup()
	if from == nil {
		return nil
	}
	rules := []wire.RelatedRule{{APIVersion: "v1", Resource: "secrets", Namespace: c.Namespace(), LabelSelector: &wire.LabelSelector{MatchLabels: map[string]string{}}}}
	if from.Name != "" {
		rules = append(rules, wire.RelatedRule{APIVersion: topology.APIVersion, Resource: topology.BackupResource, Namespace: c.Namespace(), Names: []string{from.Name}})
	}
	return rules
}

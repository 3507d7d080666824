package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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

// restoreSource is where the backup a cluster restores is, as the related objects say, or what
// is missing for it.
type restoreSource struct {
	label   string // "MemgraphBackup <name>" or the s3:// URI
	uri     string
	s3      *memgraph.S3Config
	problem string
}

// readRestoreSource resolves spec.bootstrap.fromBackup with the related MemgraphBackup (by name)
// and the destination's credentials Secret; nil when the spec restores nothing.
func readRestoreSource(c *topology.Cluster, related map[string]map[string]json.RawMessage, secrets map[string]*object) (*restoreSource, error) {
	from := c.FromBackup()
	if from == nil {
		return nil, nil
	}
	dest, key := from.Destination, from.Key
	src := &restoreSource{}
	if from.Name != "" {
		src.label = "MemgraphBackup " + from.Name
		b, err := relatedBackup(c, from.Name, related[backupKind])
		switch {
		case err != nil:
			return nil, err
		case b == nil:
			src.problem = fmt.Sprintf("the cluster restores MemgraphBackup %s/%s (spec.bootstrap.fromBackup.name), which does not exist; "+
				"create it, or name the object with fromBackup.destination and key", c.Namespace(), from.Name)
			return src, nil
		case b.Status.Phase != topology.BackupCompleted || b.Status.Key == "":
			src.problem = fmt.Sprintf("the cluster restores MemgraphBackup %s/%s, which is %s, not Completed", c.Namespace(), from.Name, b.Status.Phase)
			return src, nil
		}
		dest, key = &b.Spec.Destination, b.Status.Key
	}
	s3 := dest.S3
	src.uri = "s3://" + s3.Bucket + "/" + key
	if src.label == "" {
		src.label = src.uri
	}
	fake := topology.MemgraphBackup{Spec: topology.MemgraphBackupSpec{Destination: *dest}}
	fake.Namespace = c.Namespace()
	creds := readBackupSecrets(&fake, secrets, false)
	if len(creds.problems) > 0 {
		src.problem = "restoring " + src.label + " needs " + strings.Join(creds.problems, "; ")
		return src, nil
	}
	src.s3 = &memgraph.S3Config{Region: topology.BackupRegion(s3), AccessKey: creds.creds.AccessKeyID,
		SecretKey: creds.creds.SecretAccessKey, EndpointURL: strings.TrimSuffix(s3.Endpoint, "/")}
	return src, nil
}

// observeRestore reads the restore's source out of a sync request: the related MemgraphBackups
// (decoded again from body, as MemgraphBackups) and Secrets.
func observeRestore(req *syncRequest, body []byte, c *topology.Cluster) (*restoreSource, error) {
	if c.FromBackup() == nil {
		return nil, nil
	}
	var raw rawGroups
	if err := decodeBody(body, &raw); err != nil {
		return nil, err
	}
	found, err := entries(req.Related, "related", secretKey)
	if err != nil {
		return nil, err
	}
	secrets := map[string]*object{}
	for _, e := range found {
		if e.obj.Metadata.in(c.Namespace()) {
			secrets[e.obj.Metadata.Name] = e.obj
		}
	}
	return readRestoreSource(c, raw.Related, secrets)
}

// relatedBackup is the MemgraphBackup name of c's namespace among the related objects.
func relatedBackup(c *topology.Cluster, name string, group map[string]json.RawMessage) (*topology.MemgraphBackup, error) {
	for _, key := range sortedKeys(group) {
		var b topology.MemgraphBackup
		if err := decodeTyped(group[key], entryPath("related", backupKind, key), &b); err != nil {
			return nil, err
		}
		if b.Name == name && (b.Namespace == "" || b.Namespace == c.Namespace()) {
			return &b, nil
		}
	}
	return nil, nil
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
	if src.problem != "" {
		return src.problem
	}
	target, ok := planner.RestoreTarget(in.declared)
	if !ok {
		return held
	}
	data, problem := catchUpReader{conn: conn, auth: in.obs.auth}.connector()
	if problem != "" {
		return "restoring " + src.label + ": " + problem
	}
	if err := data.Client(target.BoltServer).RecoverSnapshot(ctx, src.uri, src.s3); err != nil {
		return fmt.Sprintf("restoring %s into %s failed: %s; the data instances stay unregistered until it succeeds "+
			"(a storage that already holds data is never overwritten: delete its PersistentVolumeClaim, or remove "+
			"spec.bootstrap.fromBackup to start on the data it holds)", src.label, target.Name, planner.Explain(err))
	}
	h.log.Info("restored a backup", "from", src.label, "into", target.Name)
	return ""
}

// restoreRules ask, for a cluster that restores a backup, for the MemgraphBackup it names and
// for the Secrets of its namespace: the backup's destination names its credentials Secret, which
// only the MemgraphBackup says (the hook reads only that one).
func restoreRules(c *topology.Cluster) []relatedRule {
	from := c.FromBackup()
	if from == nil {
		return nil
	}
	rules := []relatedRule{{APIVersion: "v1", Resource: "secrets", Namespace: c.Namespace(), LabelSelector: &labelSelector{MatchLabels: map[string]string{}}}}
	if from.Name != "" {
		rules = append(rules, relatedRule{APIVersion: topology.APIVersion, Resource: topology.BackupResource, Namespace: c.Namespace(), Names: []string{from.Name}})
	}
	return rules
}

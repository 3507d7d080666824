package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// RECOVER SNAPSHOT's texts (query/interpreter.cpp 6225–6329, utils/aws.cppm 43–64).
const (
	msgRecoverOnReplica  = "Failed to recover a snapshot. Replica instances are not allowed to create them."
	msgRecoverNotClean   = "Failed to recover a snapshot. Storage is not clean. Try using FORCE."
	msgRecoverMissing    = "Failed to find the defined snapshot file."
	msgRecoverCopy       = "Failed to copy snapshot over to local snapshots directory."
	msgRecoverConfigMap  = "Failed to parse config map for the RECOVER SNAPSHOT query!"
	msgRecoverConfigSize = "Config map cannot contain > 4 entries. Only aws_region, aws_access_key, aws_secret_key and aws_endpoint_url can be provided"
	msgSnapshotLiteral   = "Snapshot path must be a string literal."
	msgAwsRegion         = "AWS region configuration parameter not provided. Please provide it through the query, run-time setting aws_region or env variable AWS_REGION"
	msgAwsAccessKey      = "AWS access key configuration parameter not provided. Please provide it through the query, run-time setting aws_access_key or env variable AWS_ACCESS_KEY"
	msgAwsSecretKey      = "AWS secret key configuration parameter not provided. Please provide it through the query, run-time setting aws_secret_key or env variable AWS_SECRET_KEY"
)

// recoverOp is a RECOVER SNAPSHOT with its path and config evaluated.
type recoverOp struct {
	uri   string
	force bool
	cfg   map[string]string // s3:// only
}

// prepareRecoverSnapshot checks RECOVER SNAPSHOT at RUN: not in an explicit transaction, and
// for s3:// a config map of at most four strings (other URIs never read it).
func (w *World) prepareRecoverSnapshot(in *instance, st *statement, req bolt.Request) (*bolt.Prepared, *bolt.Failure) {
	if req.ExplicitTx {
		return nil, bolt.ClientError(msgMulticommand("Recovering from snapshot"))
	}
	uri, ok := st.snapshot.(string)
	if !ok {
		return nil, bolt.ClientError(msgSnapshotLiteral)
	}
	op := recoverOp{uri: uri, force: st.force}
	if strings.HasPrefix(uri, "s3://") {
		cfg, f := evalConfig(st.config, req.Params)
		if f != nil {
			return nil, bolt.ClientError(msgRecoverConfigMap)
		}
		if len(cfg) > 4 {
			return nil, bolt.ClientError(msgRecoverConfigSize)
		}
		op.cfg = cfg
	}
	return &bolt.Prepared{Fields: []string{}, Exec: func(ctx context.Context) bolt.Outcome {
		if msg := w.recoverSnapshot(ctx, in, op, defaultDB); msg != "" {
			return failure(msg)
		}
		return bolt.Outcome{Type: "s"}
	}}, nil
}

// recoverSnapshot is InMemoryStorage::RecoverSnapshot (inmemory/storage.cpp 4302–4554) followed
// by ForceRecoverReplica for every replica of the MAIN (interpreter.cpp 6320–6325): the file is
// fetched into the snapshot directory first, then the storage is checked clean (unless FORCE),
// loaded, the other snapshots moved to snapshots/.old and the file renamed for its timestamp.
// It returns Memgraph's message on failure, "" on success.
func (w *World) recoverSnapshot(ctx context.Context, in *instance, op recoverOp, db string) string {
	if w.dataRole(in) == "replica" {
		return msgRecoverOnReplica
	}
	dir, err := w.snapshotDir(in)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return msgRecoverCopy
	}
	local := filepath.Join(dir, filepath.Base(op.uri))
	inDir := local == op.uri
	cleanup := func() {
		if !inDir {
			_ = os.Remove(local)
		}
	}
	if msg := w.fetchSnapshot(ctx, op, local, inDir); msg != "" {
		return msg
	}
	if !op.force && in.txns[db] > 0 {
		cleanup()
		return msgRecoverNotClean
	}
	snap, err := readSnapshot(local)
	if err != nil {
		cleanup()
		return "Couldn't recover from the snapshot because of: " + err.Error()
	}
	in.txns[db] = snap.Transactions
	if err := archiveSnapshots(dir, local, inDir); err != nil {
		cleanup()
		return "The snapshot was recovered, but the old wal and snapshots directories could not be archived. Please clean them manually, or re-run RECOVER SNAPSHOT ... FORCE."
	}
	_ = os.Rename(local, filepath.Join(dir, makeSnapshotName(w.cur, snap.Timestamp)))
	w.forceRecoverReplicas(in, db)
	return ""
}

// fetchSnapshot brings the snapshot at op.uri to local (inmemory/storage.cpp 4320–4372).
func (w *World) fetchSnapshot(ctx context.Context, op recoverOp, local string, inDir bool) string {
	switch {
	case strings.HasPrefix(op.uri, "http://"), strings.HasPrefix(op.uri, "https://"), strings.HasPrefix(op.uri, "ftp://"):
		if err := download(ctx, op.uri, local); err != nil {
			if !errors.Is(err, os.ErrExist) {
				_ = os.Remove(local)
			}
			return "Failed to download snapshot file from " + op.uri
		}
	case strings.HasPrefix(op.uri, "s3://"):
		for _, k := range []struct{ key, msg string }{
			{"aws_region", msgAwsRegion}, {"aws_access_key", msgAwsAccessKey}, {"aws_secret_key", msgAwsSecretKey},
		} {
			if _, ok := op.cfg[k.key]; !ok {
				return k.msg
			}
		}
		obj, creds, ok := s3Object(op.uri, op.cfg)
		if !ok || fetchS3(ctx, obj, creds, local) != nil {
			return "Failed to download snapshot file from s3 " + op.uri // what arrived stays
		}
	default:
		info, err := os.Stat(op.uri)
		if err != nil || info.IsDir() {
			return msgRecoverMissing
		}
		if !inDir && copyFile(op.uri, local) != nil {
			return msgRecoverCopy
		}
	}
	return ""
}

// archiveSnapshots moves every snapshot file but local into dir/.old (emptied first; a local
// file that was already in the directory is copied there too), as --storage-backup-dir-enabled
// (default true) does; an empty .old is removed.
func archiveSnapshots(dir, local string, inDir bool) error {
	old := filepath.Join(dir, ".old")
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	if err := os.Mkdir(old, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case !e.Type().IsRegular():
		case path != local:
			if err := os.Rename(path, filepath.Join(old, e.Name())); err != nil {
				return err
			}
		case inDir:
			if err := copyFile(path, filepath.Join(old, e.Name())); err != nil {
				return err
			}
		}
	}
	_ = os.Remove(old) // only when empty
	return nil
}

// forceRecoverReplicas: the MAIN puts every replica registered with it into RECOVERY and
// recovers it from scratch — its cached count reset to 0, then the recovered snapshot sent
// (replication_client.cpp 326–339, 667–700). Replicas do not diverge: each ends up holding what
// the MAIN now holds, after WithReplicaRecoveryTime.
func (w *World) forceRecoverReplicas(main *instance, db string) {
	for _, c := range w.dataClusters() {
		if e := c.entry(c.main); e == nil || w.dataInstance(e) != main {
			continue
		}
		for _, e := range c.data {
			in := w.dataInstance(e)
			if in == nil || in == main {
				continue
			}
			if m := main.cache[e.name]; m != nil {
				m[db] = 0
			}
			if !in.alive || w.versionBlocked(main, in) {
				continue // the next heartbeat finds it behind or ahead, and recovers it then
			}
			if w.opts.recoveryTime > 0 {
				in.recoverAt = w.cur.Add(w.opts.recoveryTime)
				continue
			}
			w.follow(c, main, in)
		}
	}
}

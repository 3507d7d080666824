package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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
func (w *World) prepareRecoverSnapshot(in *instance, db string, st *statement, req bolt.Request) (*bolt.Prepared, *bolt.Failure) {
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
	return &bolt.Prepared{Fields: []string{}, Blocking: true, Exec: func(ctx context.Context) bolt.Outcome {
		if msg := w.recoverSnapshot(ctx, in, op, db); msg != "" {
			return transient(msg)
		}
		return bolt.Outcome{Type: "s"}
	}}, nil
}

// loadRun is a snapshot being loaded into one database (RECOVER SNAPSHOT): the storage holds it
// at endAt. The process stopping meanwhile loads nothing; the file stays in the snapshot
// directory, where recovery at start-up finds it.
type loadRun struct {
	db, local string
	inDir     bool
	header    snapshotHeader
	endAt     time.Time
	state     runState
	msg       string // Memgraph's message when the load fails after endAt
}

// recoverSnapshot is InMemoryStorage::RecoverSnapshot (inmemory/storage.cpp 4302–4554) followed
// by ForceRecoverReplica for every replica of the MAIN (interpreter.cpp 6320–6325): the file is
// fetched into the snapshot directory first (w.mu released while it downloads), then the storage
// is checked clean (unless FORCE), loaded for SnapshotCost.LoadPerGiB, the other snapshots moved
// to snapshots/.old and the file renamed for its timestamp. The load goes on when the client
// hangs up. It returns Memgraph's message on failure, "" on success. Caller holds w.mu.
func (w *World) recoverSnapshot(ctx context.Context, in *instance, op recoverOp, db string) string {
	if w.dataRole(in) == "replica" {
		return msgRecoverOnReplica
	}
	dir, err := w.snapshotDir(in, db)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return msgRecoverCopy
	}
	local := filepath.Join(dir, uriFileName(op.uri))
	inDir := local == op.uri
	started := in.startedAt
	w.mu.Unlock()
	msg := fetchSnapshot(ctx, op, local, inDir)
	w.mu.Lock()
	w.advance()
	if !in.alive || !in.startedAt.Equal(started) {
		return "sim: the instance stopped while it fetched the snapshot"
	}
	if msg != "" {
		return msg
	}
	run, msg := w.startLoad(in, db, local, inDir, op.force)
	if msg != "" {
		return msg
	}
	for run.state == runGoing && ctx.Err() == nil {
		w.waitUntil(ctx, run.endAt)
	}
	switch run.state {
	case runAborted:
		return "sim: the instance stopped while it loaded the snapshot"
	case runGoing:
		return "sim: the client hung up while RECOVER SNAPSHOT was loading; the load goes on"
	}
	return run.msg
}

// uriFileName is std::filesystem::path(uri).filename(): what follows the last '/'.
func uriFileName(uri string) string { return uri[strings.LastIndex(uri, "/")+1:] }

// startLoad checks the fetched file and the storage, and starts loading. Caller holds w.mu.
func (w *World) startLoad(in *instance, db, local string, inDir, force bool) (*loadRun, string) {
	cleanup := func() {
		if !inDir {
			_ = os.Remove(local)
		}
	}
	if !force && in.txns[db] > 0 {
		cleanup()
		return nil, msgRecoverNotClean
	}
	h, err := readSnapshot(local)
	if err != nil {
		cleanup()
		return nil, "Couldn't recover from the snapshot because of: " + err.Error()
	}
	run := &loadRun{db: db, local: local, inDir: inDir, header: h, endAt: w.cur.Add(costOf(h.size(), w.opts.snapshotCost.LoadPerGiB))}
	if in.loadRuns == nil {
		in.loadRuns = map[string]*loadRun{}
	}
	in.loadRuns[db] = run
	if !run.endAt.After(w.cur) {
		w.finishLoad(in, run)
	}
	return run, ""
}

// finishLoad makes the storage hold the loaded snapshot, archives the other snapshots, renames
// the file for its timestamp and recovers every replica of the MAIN from it.
func (w *World) finishLoad(in *instance, run *loadRun) {
	delete(in.loadRuns, run.db)
	run.state = runDone
	in.txns[run.db] = run.header.Transactions
	dir := filepath.Dir(run.local)
	if err := archiveSnapshots(dir, run.local, run.inDir); err != nil {
		run.msg = "The snapshot was recovered, but the old wal and snapshots directories could not be archived. Please clean them manually, or re-run RECOVER SNAPSHOT ... FORCE."
		return
	}
	_ = os.Rename(run.local, filepath.Join(dir, makeSnapshotName(w.cur, run.header.Timestamp)))
	w.forceRecoverReplicas(in, run.db)
}

// loadEnd is the earliest end of a snapshot being loaded, and how to apply it.
func (w *World) loadEnd() (time.Time, func(), bool) {
	run, in, ok := earliestRun(w, func(in *instance) map[string]*loadRun { return in.loadRuns })
	if !ok {
		return time.Time{}, nil, false
	}
	return run.endAt, func() { w.finishLoad(in, run) }, true
}

// recoverAtStart is --data-recovery-on-startup (default true, flags/general.cpp 91) for the one
// case the simulator does not keep in memory: a database that holds nothing whose snapshot
// directory holds a snapshot, such as one fetched by a RECOVER SNAPSHOT whose process stopped
// while it loaded. Like Recovery::RecoverData (durability.cpp 582–640) it takes the last file by
// name of those that read as snapshots. Caller holds w.mu.
func (w *World) recoverAtStart(in *instance) {
	for db, n := range in.txns {
		if n != 0 {
			continue
		}
		dir, err := w.snapshotDir(in, db)
		if err != nil {
			continue
		}
		files, err := snapshotFiles(dir)
		if err != nil || len(files) == 0 {
			continue
		}
		last := slices.MaxFunc(files, func(a, b snapshotFileInfo) int { return strings.Compare(a.path, b.path) })
		in.txns[db] = last.header.Transactions
	}
}

// fetchSnapshot brings the snapshot at op.uri to local (inmemory/storage.cpp 4320–4372).
func fetchSnapshot(ctx context.Context, op recoverOp, local string, inDir bool) string {
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
		if fetchS3(ctx, op.uri, op.cfg, local) != nil {
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

// download GETs url into dst, which must not exist (fopen "wbx"); an answer that is not 200, or
// a body cut short of its Content-Length, fails it (CURLOPT_FAILONERROR, requests.cpp 157–197).
func download(ctx context.Context, url, dst string) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err == nil {
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			} else {
				_, err = io.Copy(f, resp.Body)
			}
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
			in.diverged = false // ForceRecoverReplica resets it from 0, divergence and all
			if !in.alive || w.versionBlocked(main, in) {
				continue // the next heartbeat finds it behind or ahead, and recovers it then
			}
			if in.recoveryFails && w.opts.recoveryTime == 0 {
				w.failedRecovery(in)
				continue
			}
			if w.opts.recoveryTime > 0 {
				in.recoverAt = w.cur.Add(w.opts.recoveryTime)
				continue
			}
			w.follow(c, main, in)
		}
	}
}

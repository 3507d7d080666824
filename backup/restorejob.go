package backup

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A restore runs RECOVER SNAPSHOT in the Memgraph beside the agent, per database, with a URL of
// the agent's own restore stream on the pod's loopback interface: Memgraph downloads the file
// into the database's snapshot directory as the agent streams it from the store, checking its
// size and SHA-256 before the last bytes go out, then loads it (Memgraph v3.12.0
// inmemory/storage.cpp 4302–4554). Memgraph writes the file itself, so the agent needs no write
// access to the volume, and the store's CA (caSecret) is the agent's to use.
//
// Each attempt names the file MakeSnapshotName(now, timestamp): a name no earlier attempt used
// (Memgraph opens it "wbx", 4323) that sorts after every snapshot the instance wrote before, so
// that recovery at start-up — which loads the last snapshot by name (durability.cpp 582–640) —
// loads it if the process stops while it loads. The restore is therefore idempotent across pod
// restarts: a database whose SHOW SNAPSHOTS lists a snapshot of the backup's timestamp holds it
// (loaded by an earlier RECOVER SNAPSHOT or at start-up), and one that lists a snapshot of another
// non-zero timestamp holds data of its own and is never touched.

// runRestore restores every database of the backup, the default one first.
func (a *Agent) runRestore(ctx context.Context, id string, req JobRequest) error {
	client, err := a.cfg.Memgraph(req.Memgraph)
	if err != nil {
		return err
	}
	dbs := slices.Clone(req.Databases)
	if len(dbs) == 0 {
		if dbs, err = listRestore(ctx, req); err != nil {
			return err
		}
	}
	var total int64
	for _, d := range dbs {
		total += d.Size
	}
	a.update(id, func(st *JobStatus) {
		st.Databases, st.BytesTotal, st.Phase = slices.Clone(dbs), total, PhaseDownloading
	})
	var done int64
	for i := range dbs {
		if err := a.restoreDatabase(ctx, id, client, req, &dbs[i], done); err != nil {
			return err
		}
		done += dbs[i].Size
		dbs[i].Done = true
		a.update(id, func(st *JobStatus) { st.Databases[i], st.BytesDone = dbs[i], done })
	}
	return nil
}

// listRestore finds a backup's objects when no record of it is given: Store.Key, the default
// database's, and the objects beside it, under topology.BackupDatabasesPrefix, one per database.
func listRestore(ctx context.Context, req JobRequest) ([]DatabaseJob, error) {
	info, err := StatObject(ctx, req.Store, req.Credentials)
	if err != nil {
		return nil, err
	}
	out := []DatabaseJob{{Name: v1alpha1.DefaultDatabase, Key: info.Key, Size: info.Size, CRC32C: info.CRC32C, SnapshotTimestamp: timestampOf(info.Key)}}
	prefix := req.Store
	prefix.Key = topology.BackupDatabasesPrefix(req.Store.Key)
	others, err := ListObjects(ctx, prefix, req.Credentials)
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, o := range others {
		name, ok := topology.BackupDatabaseOf(prefix.Key, o.Key)
		if !ok {
			continue
		}
		if first, dup := seen[name]; dup {
			return nil, permanent("database %s has two objects, %s and %s: a backup holds one snapshot per database", name, first, o.Key)
		}
		seen[name] = o.Key
		out = append(out, DatabaseJob{Name: name, Key: o.Key, Size: o.Size, SnapshotTimestamp: timestampOf(o.Key)})
	}
	return out, nil
}

var timestampInName = regexp.MustCompile(`_timestamp_([0-9]+)$`)

// timestampOf is the durable timestamp a snapshot's file name ends with (MakeSnapshotName), 0
// when it has none.
func timestampOf(key string) int64 {
	m := timestampInName.FindStringSubmatch(path.Base(key))
	if m == nil {
		return 0
	}
	ts, _ := strconv.ParseInt(m[1], 10, 64)
	return ts
}

// restoreDatabase restores one database unless it holds it already; it refuses a database that
// holds data of its own. done is what the databases before it streamed.
func (a *Agent) restoreDatabase(ctx context.Context, id string, client memgraph.SnapshotClient, req JobRequest, db *DatabaseJob, done int64) error {
	if db.Name != v1alpha1.DefaultDatabase {
		if err := a.retrying(ctx, func() error { return client.CreateDatabase(ctx, db.Name) }, unreachable, nil); err != nil {
			return fmt.Errorf("CREATE DATABASE %s: %w", db.Name, err)
		}
	}
	var snaps []memgraph.Snapshot
	err := a.retrying(ctx, func() (err error) { snaps, err = client.ShowSnapshots(ctx, db.Name); return err }, unreachable, nil)
	if err != nil {
		return fmt.Errorf("SHOW SNAPSHOTS of database %s: %w", db.Name, err)
	}
	if slices.ContainsFunc(snaps, func(s memgraph.Snapshot) bool { return s.Timestamp == db.SnapshotTimestamp }) {
		return nil
	}
	if i := slices.IndexFunc(snaps, func(s memgraph.Snapshot) bool { return s.Timestamp != 0 }); i >= 0 {
		return permanent("database %s already holds data (its snapshot %s, timestamp %d): a restore never overwrites data",
			db.Name, snaps[i].Path, snaps[i].Timestamp)
	}
	stream, err := a.restoreStream()
	if err != nil {
		return err
	}
	obj := req.Store
	obj.Key = db.Key
	name := snapshotName(a.cfg.Now(), db.SnapshotTimestamp)
	src := &streamSource{obj: obj, creds: req.Credentials, size: db.Size, sha256: db.SHA256, crc32c: db.CRC32C,
		progress: func(sent int64) { a.update(id, func(st *JobStatus) { st.BytesDone = done + sent }) },
		complete: func() { a.update(id, func(st *JobStatus) { st.Phase = PhaseRecovering }) }}
	url, forget := stream.serve(src, name)
	defer forget()
	a.update(id, func(st *JobStatus) { st.Phase = PhaseDownloading })
	err = client.RecoverSnapshot(ctx, db.Name, url, nil)
	if err == nil {
		db.SHA256, db.CRC32C = src.verified()
		return nil
	}
	return restoreError(db.Name, err, src.failure())
}

// restoreError says why a database's RECOVER SNAPSHOT failed: the stream's own failure first
// (the store refused, the object is not what the backup recorded), else Memgraph's words.
func restoreError(db string, recoverErr, streamErr error) error {
	switch {
	case streamErr != nil:
		return fmt.Errorf("restoring database %s: %w", db, streamErr)
	case strings.Contains(recoverErr.Error(), "Storage is not clean"):
		return permanent("restoring database %s: %v: it holds data, which a restore never overwrites", db, recoverErr)
	}
	var p *permanentError
	if errors.As(recoverErr, &p) {
		return recoverErr
	}
	return fmt.Errorf("RECOVER SNAPSHOT of database %s: %w", db, recoverErr)
}

// snapshotName is MakeSnapshotName (durability/paths.hpp 30–37): the time, UTC as in a pod, to
// the microsecond, then the timestamp.
func snapshotName(at time.Time, ts int64) string {
	at = at.UTC()
	return fmt.Sprintf("%s%06d_timestamp_%d", at.Format("20060102150405"), at.Nanosecond()/1000, ts)
}

package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// runBackup checks the bucket, then snapshots every database of the Memgraph beside the agent,
// then uploads each snapshot: the store must accept the credentials and have the bucket before
// anything is snapshotted; the instance must still hold the role it was chosen in; each CREATE
// SNAPSHOT refused because a snapshot of that database is already being written (the periodic
// one) is sent again once that one is done, for as long as the deadline allows (Memgraph v3.12.0
// inmemory/storage.cpp 4224–4229); each file is opened as soon as Memgraph answers its path, so
// that the snapshot retention deleting it meanwhile cannot take it away. A store that does not
// answer, or answers that it is busy, is tried again until the deadline (storeRetrying).
func (a *Agent) runBackup(ctx context.Context, id string, req JobRequest) error {
	a.update(id, func(st *JobStatus) { st.Phase = PhaseCheckingStore })
	if err := a.storeRetrying(ctx, id, func() error { return CheckBucket(ctx, req.Store, req.Credentials) }); err != nil {
		return err
	}
	client, err := a.cfg.Memgraph(req.Memgraph)
	if err != nil {
		return err
	}
	var role string
	if err := a.retrying(ctx, func() (err error) { role, err = client.ShowReplicationRole(ctx); return err }, unreachable, nil); err != nil {
		return fmt.Errorf("SHOW REPLICATION ROLE: %w", err)
	}
	a.update(id, func(st *JobStatus) { st.Role = role })
	if role != req.Role {
		return permanent("the instance was chosen as %s and is %s now: nothing was snapshotted", req.Role, role)
	}
	dbs, err := backupDatabases(ctx, client)
	if err != nil {
		return err
	}
	a.update(id, func(st *JobStatus) { st.Phase, st.Databases = PhaseSnapshotting, slices.Clone(dbs) })
	var files []snapshotFile
	defer func() {
		for _, f := range files {
			_ = f.file.Close()
		}
	}()
	for i := range dbs {
		if dbs[i].Skipped != "" {
			continue
		}
		f, err := a.snapshot(ctx, id, client, &dbs[i], req.Store.Key)
		if err != nil {
			return err
		}
		files = append(files, f)
		a.update(id, func(st *JobStatus) { st.Databases[i] = dbs[i] })
	}
	return a.uploadAll(ctx, id, req, dbs, files)
}

// storeRetrying runs try, a request to the store, until it succeeds, fails with an error
// Transient says is not worth another try, or the job's deadline ends it; the job's status says
// meanwhile what it waits to try again (JobStatus.Retrying).
func (a *Agent) storeRetrying(ctx context.Context, id string, try func() error) error {
	var last error
	err := a.retrying(ctx, func() error { last = try(); return last }, Transient,
		func() { a.update(id, func(st *JobStatus) { st.Retrying = last.Error() + "; trying again" }) })
	a.update(id, func(st *JobStatus) { st.Retrying = "" })
	return err
}

// backupDatabases are the databases to back up, the default one first; those that are not HOT
// and ready are listed as skipped. Without a license for multi-tenancy the instance has the
// default database alone.
func backupDatabases(ctx context.Context, client memgraph.SnapshotClient) ([]DatabaseJob, error) {
	listed, err := client.ShowDatabases(ctx)
	switch {
	case memgraph.KindOf(err) == memgraph.KindLicense:
		listed = []memgraph.Database{{Name: memgraph.DefaultDatabase, State: memgraph.DatabaseHot, Health: memgraph.DatabaseReady}}
	case err != nil:
		return nil, fmt.Errorf("SHOW DATABASES: %w", err)
	}
	slices.SortFunc(listed, func(x, y memgraph.Database) int {
		switch {
		case x.Name == y.Name:
			return 0
		case x.Name == memgraph.DefaultDatabase:
			return -1
		case y.Name == memgraph.DefaultDatabase:
			return 1
		case x.Name < y.Name:
			return -1
		}
		return 1
	})
	out := make([]DatabaseJob, 0, len(listed))
	for _, d := range listed {
		j := DatabaseJob{Name: d.Name}
		switch {
		case d.State != memgraph.DatabaseHot:
			j.Skipped = fmt.Sprintf("the database is %s (suspended to disk): CREATE SNAPSHOT needs it in memory; resume it and take another backup", d.State)
		case d.Health != memgraph.DatabaseReady:
			j.Skipped = fmt.Sprintf("the database is %s: its durability files could not be recovered, and Memgraph writes no snapshot of it", d.Health)
		}
		out = append(out, j)
	}
	return out, nil
}

// snapshot takes db's snapshot, waiting out one already being written, reads its timestamp and
// opens its file; db gets the snapshot, its timestamp and its object's key under base.
func (a *Agent) snapshot(ctx context.Context, id string, client memgraph.SnapshotClient, db *DatabaseJob, base string) (snapshotFile, error) {
	var path string
	err := a.retrying(ctx, func() (err error) { path, err = client.CreateSnapshot(ctx, db.Name); return err },
		func(err error) bool {
			k := memgraph.KindOf(err)
			return k == memgraph.KindSnapshotRunning || unreachable(err)
		},
		func() { a.update(id, func(st *JobStatus) { st.SnapshotWaits++ }) })
	if err != nil {
		return snapshotFile{}, fmt.Errorf("CREATE SNAPSHOT of database %s: %w", db.Name, err)
	}
	f, err := openSnapshot(a.dataDir, path)
	if err != nil {
		return snapshotFile{}, fmt.Errorf("the snapshot of database %s: %w", db.Name, err)
	}
	snaps, err := client.ShowSnapshots(ctx, db.Name)
	if err != nil {
		_ = f.file.Close()
		return snapshotFile{}, fmt.Errorf("SHOW SNAPSHOTS of database %s: %w", db.Name, err)
	}
	i := slices.IndexFunc(snaps, func(s memgraph.Snapshot) bool { return s.Path == path })
	if i < 0 {
		_ = f.file.Close()
		return snapshotFile{}, fmt.Errorf("CREATE SNAPSHOT of database %s answered %s, which SHOW SNAPSHOTS does not list", db.Name, path)
	}
	db.Snapshot, db.SnapshotTimestamp, db.Key = path, snaps[i].Timestamp, topology.BackupDatabaseKey(base, db.Name, path)
	return f, nil
}

// uploadAll uploads the open snapshot files, in order, reporting the bytes sent of the total;
// an upload the store did not take (storeRetrying) is sent again from the file's start.
func (a *Agent) uploadAll(ctx context.Context, id string, req JobRequest, dbs []DatabaseJob, files []snapshotFile) error {
	var total int64
	for _, f := range files {
		total += f.size
	}
	a.update(id, func(st *JobStatus) { st.Phase, st.BytesTotal = PhaseUploading, total })
	var done int64
	next := 0
	for i := range dbs {
		if dbs[i].Skipped != "" {
			continue
		}
		f := files[next]
		next++
		obj := req.Store
		obj.Key = dbs[i].Key
		var res UploadResult
		err := a.storeRetrying(ctx, id, func() error {
			if _, err := f.file.Seek(0, io.SeekStart); err != nil {
				return permanent("the snapshot of database %s: %v", dbs[i].Name, err)
			}
			var err error
			res, err = Upload(ctx, obj, req.Credentials, f.file, f.size, func(sent int64) {
				a.update(id, func(st *JobStatus) { st.BytesDone = done + sent })
			})
			return err
		})
		if err != nil {
			var se *StoreError
			if errors.As(err, &se) {
				return err
			}
			return fmt.Errorf("uploading database %s: %w", dbs[i].Name, err)
		}
		done += res.Size
		dbs[i].Size, dbs[i].SHA256, dbs[i].CRC32C, dbs[i].Verified, dbs[i].Done = res.Size, res.SHA256, res.CRC32C, res.Verified, true
		a.update(id, func(st *JobStatus) { st.BytesDone, st.Databases[i] = done, dbs[i] })
	}
	return nil
}

package sim

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// runIn is run in database db (the session's "db").
func (c *client) runIn(db, query string) outcome {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := c.drv.NewSession(ctx, neo4j.SessionConfig{DatabaseName: db})
	defer s.Close(ctx)
	res, err := s.Run(ctx, query, nil)
	if err != nil {
		return outcome{err: anyError(err), phase: "RUN"}
	}
	out := outcome{}
	for res.Next(ctx) {
		out.rows = append(out.rows, res.Record().AsMap())
	}
	if err := res.Err(); err != nil {
		return outcome{err: anyError(err), phase: "PULL"}
	}
	return out
}

// anyError is err as a Neo4jError: Memgraph's FAILURE, or the connection's error as its message.
func anyError(err error) *neo4j.Neo4jError {
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		return ne
	}
	return &neo4j.Neo4jError{Msg: err.Error()}
}

// async runs query in db on its own goroutine; the channel gets its outcome.
func (c *client) async(db, query string) <-chan outcome {
	done := make(chan outcome, 1)
	go func() { done <- c.runIn(db, query) }()
	return done
}

// costly is a snapshot cost of 1 MiB per transaction, written at 64 s/GiB (1 MiB in 62.5 ms)
// and loaded at 32 s/GiB.
var costly = SnapshotCost{BytesPerTransaction: 1 << 20, WritePerGiB: 64 * time.Second, LoadPerGiB: 32 * time.Second}

// CREATE SNAPSHOT takes time in proportion to the data and writes a file of proportional size
// under its final name from the start; meanwhile a second CREATE SNAPSHOT and the periodic
// snapshot are refused with Memgraph's "already in progress", and SHOW SNAPSHOTS waits for the
// file to be complete (inmemory/storage.cpp 4224–4240, 4566–4567; snapshot.cpp 13221).
func TestASnapshotTakesTimeAndHoldsTheLock(t *testing.T) {
	w, _ := setupCluster(t, 1, 2, WithSnapshotCost(costly))
	d1 := dial(t, w, dataBolt(1))
	for range 16 {
		d1.must("CREATE (n)")
	}
	created := d1.async("", "CREATE SNAPSHOT")
	waitForBlockedQuery(t, w)
	host := dataSpec(1).Host
	dir := filepath.Join(snapshotDirOf(t, w, host, defaultDB))
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), "_timestamp_16") {
		t.Fatalf("while the snapshot is written the directory holds %v, want its file under its final name", entries)
	}
	if out := d1.run("CREATE SNAPSHOT", nil); out.err == nil || out.err.Msg != msgSnapshotRunning ||
		out.err.Code != "Memgraph.TransientError.MemgraphError.MemgraphError" {
		t.Fatalf("a second CREATE SNAPSHOT: %+v, want the TransientError %q", out.err, msgSnapshotRunning)
	}
	if err := w.StartPeriodicSnapshot(host, defaultDB); err == nil || !strings.Contains(err.Error(), msgSnapshotRunning) {
		t.Fatalf("the periodic snapshot meanwhile: %v, want it skipped", err)
	}
	shown := d1.async("", "SHOW SNAPSHOTS")
	for deadline := time.Now().Add(10 * time.Second); w.BlockedQueries() < 2; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("SHOW SNAPSHOTS did not wait for the snapshot")
		}
	}
	advance(t, w, 999*time.Millisecond) // 16 MiB (and a header line) at 64 s/GiB: just over 1 s
	select {
	case out := <-created:
		t.Fatalf("CREATE SNAPSHOT answered after 0.999 s of 1 s: %+v", out)
	case <-time.After(50 * time.Millisecond):
	}
	advance(t, w, 2*time.Millisecond)
	out := receive(t, created)
	if out.err != nil {
		t.Fatalf("CREATE SNAPSHOT: %s", out.err.Msg)
	}
	path := out.rows[0]["path"].(string)
	info, err := os.Stat(path)
	if err != nil || info.Size() < 16<<20 {
		t.Fatalf("the snapshot %s: %v, %d bytes, want at least 16 MiB", path, err, info.Size())
	}
	rows := receive(t, shown).rows
	if len(rows) != 1 || rows[0]["path"] != path || rows[0]["timestamp"] != int64(16) {
		t.Fatalf("SHOW SNAPSHOTS after the wait: %v, want the complete snapshot", rows)
	}
	must(t, w.StartPeriodicSnapshot(host, defaultDB))
	if !w.SnapshotRunning(host, defaultDB) {
		t.Fatal("the periodic snapshot is not running")
	}
	if out := d1.run("CREATE SNAPSHOT", nil); out.err == nil || out.err.Msg != msgSnapshotRunning {
		t.Fatalf("CREATE SNAPSHOT during the periodic snapshot: %+v, want refused", out.err)
	}
}

// A process that stops while it writes a snapshot leaves the file as far as it got, which is
// not a snapshot: SHOW SNAPSHOTS skips it and RECOVER SNAPSHOT refuses it.
func TestASnapshotCutShortIsNoSnapshot(t *testing.T) {
	w, _ := setupCluster(t, 1, 2, WithSnapshotCost(costly))
	host := dataSpec(2).Host
	must(t, w.Commit(defaultDB, 4))
	must(t, w.StartPeriodicSnapshot(host, defaultDB))
	must(t, w.Kill(host))
	must(t, w.Restart(host))
	entries, _ := os.ReadDir(snapshotDirOf(t, w, host, defaultDB))
	if len(entries) != 1 {
		t.Fatalf("files after the kill: %v, want the partial one", entries)
	}
	d2 := dial(t, w, dataBolt(2))
	if rows := d2.must("SHOW SNAPSHOTS").rows; len(rows) != 0 {
		t.Fatalf("SHOW SNAPSHOTS lists %v, want the partial file skipped", rows)
	}
	standalone := startWorld(t, 0, 1)
	partial := filepath.Join(snapshotDirOf(t, w, host, defaultDB), entries[0].Name())
	if out := dial(t, standalone, dataBolt(1)).run("RECOVER SNAPSHOT '"+partial+"'", nil); out.err == nil ||
		!strings.Contains(out.err.Msg, "Invalid snapshot format") {
		t.Fatalf("RECOVER SNAPSHOT of a partial file: %+v, want refused", out.err)
	}
}

// Databases (multi-tenancy): CREATE DATABASE on the MAIN reaches the replicas, a session's "db"
// selects where a write and a snapshot go, each database's snapshot is in its own directory, and
// a replica refuses CREATE DATABASE.
func TestDatabasesAreSnapshottedOnTheirOwn(t *testing.T) {
	w, _ := setupCluster(t, 1, 2)
	d1, d2 := dial(t, w, dataBolt(1)), dial(t, w, dataBolt(2))
	if out := d1.must("CREATE DATABASE tenant_a"); out.rows[0]["STATUS"] != "Successfully created database tenant_a" {
		t.Fatalf("CREATE DATABASE: %v", out.rows)
	}
	if out := d1.must("CREATE DATABASE tenant_a"); out.rows[0]["STATUS"] != "tenant_a already exists." {
		t.Fatalf("CREATE DATABASE again: %v", out.rows)
	}
	if out := d2.run("CREATE DATABASE other", nil); out.err == nil || out.err.Msg != "Query forbidden on the replica!" {
		t.Fatalf("CREATE DATABASE on a replica: %+v", out.err)
	}
	for range 3 {
		if out := d1.runIn("tenant_a", "CREATE (n)"); out.err != nil {
			t.Fatal(out.err.Msg)
		}
	}
	d1.must("CREATE (n)")
	for _, d := range []*client{d1, d2} {
		rows := d.must("SHOW DATABASES").rows
		if len(rows) != 2 || rows[0]["Name"] != "memgraph" || rows[1]["Name"] != "tenant_a" || rows[1]["State"] != "HOT" || rows[1]["Health"] != "ready" {
			t.Fatalf("SHOW DATABASES: %v", rows)
		}
	}
	out := d2.runIn("tenant_a", "CREATE SNAPSHOT")
	if out.err != nil {
		t.Fatal(out.err.Msg)
	}
	path := out.rows[0]["path"].(string)
	if want := snapshotDirOf(t, w, dataSpec(2).Host, "tenant_a"); filepath.Dir(path) != want || !strings.HasSuffix(path, "_timestamp_3") ||
		!strings.Contains(want, "/databases/") {
		t.Fatalf("tenant_a's snapshot on the replica: %s, want in %s with its 3 writes", path, want)
	}
	if rows := d2.must("SHOW SNAPSHOTS").rows; len(rows) != 0 {
		t.Fatalf("the default database's snapshots: %v, want none", rows)
	}
	if out := d1.runIn("nowhere", "CREATE SNAPSHOT"); out.err == nil || out.err.Msg != `Tried to retrieve an unknown database "nowhere".` {
		t.Fatalf("an unknown database: %+v", out.err)
	}
}

// RECOVER SNAPSHOT from an http:// URL downloads the file into the database's snapshot
// directory under the URL's last segment, then loads it for a time in proportion to its size; a
// process stopped while it loads has the file in its snapshot directory and recovers it when it
// starts again (--data-recovery-on-startup).
func TestRecoverSnapshotLoadsForAWhileAndAStopFinishesAtStart(t *testing.T) {
	src, _ := setupCluster(t, 1, 1, WithSnapshotCost(costly))
	must(t, src.Commit(defaultDB, 8))
	d := dial(t, src, dataBolt(1))
	done := d.async("", "CREATE SNAPSHOT")
	waitForBlockedQuery(t, src)
	advance(t, src, time.Second)
	path := receive(t, done).rows[0]["path"].(string)
	data, err := os.ReadFile(path)
	must(t, err)
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		_, _ = rw.Write(data)
	}))
	t.Cleanup(srv.Close)

	dst := startWorld(t, 0, 1, WithSnapshotCost(costly))
	n := dial(t, dst, dataBolt(1))
	url := srv.URL + "/restore/20260101000000000000_timestamp_8"
	recovering := n.async("", "RECOVER SNAPSHOT '"+url+"'")
	waitForBlockedQuery(t, dst)
	if got := txnsOf(dst, 1); got != 0 {
		t.Fatalf("the storage holds %d while the snapshot loads, want 0", got)
	}
	local := filepath.Join(snapshotDirOf(t, dst, dataSpec(1).Host, defaultDB), "20260101000000000000_timestamp_8")
	if _, err := os.Stat(local); err != nil || served.Load() != 1 {
		t.Fatalf("the download: %v, served %d times", err, served.Load())
	}
	must(t, dst.Kill(dataSpec(1).Host))
	if out := receive(t, recovering); out.err == nil {
		t.Fatal("RECOVER SNAPSHOT of a killed instance succeeded")
	}
	must(t, dst.Restart(dataSpec(1).Host))
	if got := txnsOf(dst, 1); got != 8 {
		t.Fatalf("after a restart the instance holds %d, want the 8 of the snapshot it had fetched", got)
	}
	n = dial(t, dst, dataBolt(1))
	if out := n.run("RECOVER SNAPSHOT '"+srv.URL+"/again/x_timestamp_8'", nil); out.err == nil || out.err.Msg != msgRecoverNotClean {
		t.Fatalf("RECOVER SNAPSHOT into the recovered instance: %+v, want Storage is not clean", out.err)
	}

	fresh := startWorld(t, 0, 1, WithSnapshotCost(costly))
	f := dial(t, fresh, dataBolt(1))
	recovering = f.async("", "RECOVER SNAPSHOT '"+url+"'")
	waitForBlockedQuery(t, fresh)
	advance(t, fresh, 249*time.Millisecond) // 8 MiB (and a header line) at 32 s/GiB: just over 250 ms
	if got := txnsOf(fresh, 1); got != 0 {
		t.Fatalf("the storage holds %d before the load's end", got)
	}
	advance(t, fresh, 2*time.Millisecond)
	if out := receive(t, recovering); out.err != nil {
		t.Fatalf("RECOVER SNAPSHOT: %s", out.err.Msg)
	}
	if got := txnsOf(fresh, 1); got != 8 {
		t.Fatalf("the recovered instance holds %d, want 8", got)
	}
}

// A download cut short (its Content-Length not reached) fails RECOVER SNAPSHOT, and the partial
// file is removed.
func TestRecoverSnapshotOfADownloadCutShortFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Length", "1000")
		_, _ = rw.Write([]byte("partial"))
	}))
	t.Cleanup(srv.Close)
	w := startWorld(t, 0, 1)
	url := srv.URL + "/x_timestamp_3"
	if out := dial(t, w, dataBolt(1)).run("RECOVER SNAPSHOT '"+url+"'", nil); out.err == nil || out.err.Msg != "Failed to download snapshot file from "+url {
		t.Fatalf("a download cut short: %+v", out.err)
	}
	if entries, _ := os.ReadDir(snapshotDirOf(t, w, dataSpec(1).Host, defaultDB)); len(entries) != 0 {
		t.Fatalf("files left: %v", entries)
	}
}

// snapshotDirOf is database db's snapshot directory on host.
func snapshotDirOf(t *testing.T, w *World, host, db string) string {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	dir, err := w.snapshotDir(w.instances[host], db)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

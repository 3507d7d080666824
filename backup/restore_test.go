package backup_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// backedUp is a completed backup of an instance holding 5 transactions on the default database
// and 2 on tenant_a, in s.
func backedUp(t *testing.T, s *store) backup.JobStatus {
	t.Helper()
	src := newAgent(t, quick)
	src.write(t, "memgraph", 5)
	createDB(t, src, "tenant_a")
	src.write(t, "tenant_a", 2)
	if _, err := src.client.Start(context.Background(), src.addr, "backup", backupJob(s, "prod/ns/mg/b1")); err != nil {
		t.Fatal(err)
	}
	st := wait(t, src, "backup")
	if st.State != backup.StateCompleted {
		t.Fatalf("the backup: %+v", st)
	}
	return st
}

func restoreJob(s *store, b backup.JobStatus) backup.JobRequest {
	return backup.JobRequest{Kind: backup.KindRestore, Memgraph: mg, Deadline: time.Now().Add(time.Minute),
		Store: s.object(b.Databases[0].Key), Credentials: creds, Databases: b.Databases}
}

// A restore brings every database of the backup back into the empty instance beside the agent,
// each verified against the SHA-256 the backup recorded; the bytes streamed are reported. A new
// agent (its pod restarted) asked again finds every database restored and sends no RECOVER
// SNAPSHOT.
func TestARestoreBringsBackEveryDatabase(t *testing.T) {
	s := newStore(t)
	b := backedUp(t, s)
	f := newAgent(t, quick)
	if _, err := f.client.Start(context.Background(), f.addr, "restore", restoreJob(s, b)); err != nil {
		t.Fatal(err)
	}
	st := wait(t, f, "restore")
	if st.State != backup.StateCompleted || st.BytesDone != st.BytesTotal || st.BytesTotal != b.BytesTotal {
		t.Fatalf("restore %+v, want Completed with all %d bytes", st, b.BytesTotal)
	}
	if diff := cmp.Diff(map[string]int64{"memgraph": 5, "tenant_a": 2}, f.world.Committed(agentHost)); diff != "" {
		t.Fatalf("the restored instance (-want +got):\n%s", diff)
	}
	recovers := f.count("RECOVER SNAPSHOT")
	if recovers != 2 {
		t.Errorf("%d RECOVER SNAPSHOT sent, want one per database: %v", recovers, f.queries())
	}
	f.start(t, f.pool)
	f.client = f.newClient(t, "s3cret")
	if _, err := f.client.Start(context.Background(), f.addr, "restore", restoreJob(s, b)); err != nil {
		t.Fatal(err)
	}
	if again := wait(t, f, "restore"); again.State != backup.StateCompleted || f.count("RECOVER SNAPSHOT") != recovers {
		t.Errorf("the restore asked again of a new agent: %+v, %d RECOVER SNAPSHOT (was %d)", again, f.count("RECOVER SNAPSHOT"), recovers)
	}
}

// A restore named by its object alone (no record of the backup) finds the other databases'
// objects beside it in the store.
func TestARestoreByKeyFindsTheOtherDatabases(t *testing.T) {
	s := newStore(t)
	b := backedUp(t, s)
	f := newAgent(t, quick)
	req := restoreJob(s, b)
	req.Databases = nil
	if _, err := f.client.Start(context.Background(), f.addr, "restore", req); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, f, "restore"); st.State != backup.StateCompleted || len(st.Databases) != 2 || st.Databases[1].Name != "tenant_a" {
		t.Fatalf("restore %+v, want both databases", st)
	}
	if diff := cmp.Diff(map[string]int64{"memgraph": 5, "tenant_a": 2}, f.world.Committed(agentHost)); diff != "" {
		t.Fatalf("the restored instance (-want +got):\n%s", diff)
	}
}

// An instance that holds data of its own is never restored into: the job fails for good before
// anything is fetched.
func TestARestoreNeverTouchesAnInstanceWithData(t *testing.T) {
	s := newStore(t)
	b := backedUp(t, s)
	f := newAgent(t, quick)
	f.write(t, "memgraph", 3)
	if err := f.world.StartPeriodicSnapshot(agentHost, "memgraph"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Start(context.Background(), f.addr, "restore", restoreJob(s, b)); err != nil {
		t.Fatal(err)
	}
	st := wait(t, f, "restore")
	if st.State != backup.StateFailed || !st.Permanent || !strings.Contains(st.Error, "already holds data") {
		t.Fatalf("restore %+v, want Failed for good: the instance holds data", st)
	}
	if n := f.count("RECOVER SNAPSHOT"); n != 0 || f.world.Committed(agentHost)["memgraph"] != 3 {
		t.Errorf("%d RECOVER SNAPSHOT sent; the instance holds %v", n, f.world.Committed(agentHost))
	}
}

// An object changed since the backup (same size, other bytes) fails the restore with the
// checksum before Memgraph has the whole file: nothing is loaded, nothing is left behind.
func TestARestoreOfAChangedObjectFailsOnItsChecksum(t *testing.T) {
	s := newStore(t)
	b := backedUp(t, s)
	key := b.Databases[0].Key
	tampered := bytes.Repeat([]byte{'x'}, int(b.Databases[0].Size))
	meta := map[string]string{"Last-Modified": time.Now().UTC().Format(http.TimeFormat)}
	if _, err := s.Mem.PutObject(bucket, key, meta, bytes.NewReader(tampered), int64(len(tampered)), nil); err != nil {
		t.Fatal(err)
	}
	f := newAgent(t, quick)
	if _, err := f.client.Start(context.Background(), f.addr, "restore", restoreJob(s, b)); err != nil {
		t.Fatal(err)
	}
	st := wait(t, f, "restore")
	if st.State != backup.StateFailed || !st.Permanent || !strings.Contains(st.Error, "checksum") || !strings.Contains(st.Error, "SHA-256") {
		t.Fatalf("restore %+v, want Failed for good on the checksum, SHA-256", st)
	}
	if got := f.world.Committed(agentHost)["memgraph"]; got != 0 {
		t.Errorf("the instance holds %d", got)
	}
	entries, _ := os.ReadDir(filepath.Join(f.dataDir, "snapshots"))
	if len(entries) != 0 {
		t.Errorf("files left in the snapshot directory: %v", entries)
	}
}

// A restore whose instance stops while it loads the snapshot is finished by the instance itself
// when it starts again (it recovers the snapshot it had downloaded); the job asked again of the
// restarted agent finds it restored.
func TestARestoreStoppedWhileLoadingFinishesAtStart(t *testing.T) {
	s := newStore(t)
	b := backedUp(t, s)
	f := newAgent(t, sim.SnapshotCost{BytesPerTransaction: 1 << 10, LoadPerGiB: 1000 * time.Hour})
	if _, err := f.client.Start(context.Background(), f.addr, "restore", restoreJob(s, b)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := f.client.Status(context.Background(), f.addr, "restore")
		if err != nil {
			t.Fatal(err)
		}
		if st.Phase == backup.PhaseRecovering {
			break
		}
		if time.Now().After(deadline) || st.Done() {
			t.Fatalf("the restore never loaded: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := f.world.Kill(agentHost); err != nil {
		t.Fatal(err)
	}
	f.world.SetSnapshotCost(quick)
	if err := f.world.Restart(agentHost); err != nil {
		t.Fatal(err)
	}
	f.start(t, f.pool)
	f.client = f.newClient(t, "s3cret")
	if _, err := f.client.Start(context.Background(), f.addr, "restore", restoreJob(s, b)); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, f, "restore"); st.State != backup.StateCompleted {
		t.Fatalf("the restore after the restart: %+v", st)
	}
	if diff := cmp.Diff(map[string]int64{"memgraph": 5, "tenant_a": 2}, f.world.Committed(agentHost)); diff != "" {
		t.Fatalf("the restored instance (-want +got):\n%s", diff)
	}
}

// Without the backup's record (a restore by key), the bytes are verified against the CRC32C the
// store kept when the object arrived: an object changed behind the store's back fails the
// restore on its checksum, and nothing is loaded.
func TestARestoreByKeyVerifiesTheStoresChecksum(t *testing.T) {
	s := newStore(t)
	b := backedUp(t, s)
	data, _ := s.Object(bucket, b.Databases[0].Key)
	data[len(data)/2] ^= 0xff
	s.Tamper(t, bucket, b.Databases[0].Key, data)
	f := newAgent(t, quick)
	req := restoreJob(s, b)
	req.Databases = nil
	if _, err := f.client.Start(context.Background(), f.addr, "restore", req); err != nil {
		t.Fatal(err)
	}
	st := wait(t, f, "restore")
	if st.State != backup.StateFailed || !st.Permanent || !strings.Contains(st.Error, "checksum") || !strings.Contains(st.Error, "CRC32C") {
		t.Fatalf("restore %+v, want Failed for good on the CRC32C", st)
	}
	if got := f.world.Committed(agentHost)["memgraph"]; got != 0 {
		t.Errorf("the instance holds %d", got)
	}
}

// An object uploaded anew under the backup's key (the store verified it, and keeps its CRC32C)
// is another object than the backup recorded: nothing of it is sent to Memgraph.
func TestARestoreRefusesAnotherObjectUnderTheKey(t *testing.T) {
	s := newStore(t)
	b := backedUp(t, s)
	other := bytes.Repeat([]byte{'y'}, int(b.Databases[0].Size))
	obj := s.object(b.Databases[0].Key)
	if _, err := backup.Upload(context.Background(), obj, creds, bytes.NewReader(other), int64(len(other)), nil); err != nil {
		t.Fatal(err)
	}
	f := newAgent(t, quick)
	if _, err := f.client.Start(context.Background(), f.addr, "restore", restoreJob(s, b)); err != nil {
		t.Fatal(err)
	}
	st := wait(t, f, "restore")
	if st.State != backup.StateFailed || !st.Permanent || !strings.Contains(st.Error, "the store keeps CRC32C") || st.BytesDone != 0 {
		t.Fatalf("restore %+v, want Failed for good before a byte is sent: the store's CRC32C is not the record's", st)
	}
}

package backup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/internal/s3test"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// quick snapshots: 1 KiB per transaction, written and loaded at once.
var quick = sim.SnapshotCost{BytesPerTransaction: 1 << 10}

// wait polls the job until it is done.
func wait(t *testing.T, f *agentFixture, id string) backup.JobStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := f.client.Status(context.Background(), f.addr, id)
		if err != nil {
			t.Fatalf("Status(%s): %v", id, err)
		}
		if st.Done() {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s (%s) after 20s", id, st.State, st.Phase)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func backupJob(s *store, prefix string) backup.JobRequest {
	return backup.JobRequest{Kind: backup.KindBackup, Memgraph: mg, Role: "main", Deadline: time.Now().Add(time.Minute),
		Store: s.object(prefix), Credentials: creds}
}

// sha256Of is the hex SHA-256 of the object at key.
func sha256Of(t *testing.T, s *store, key string) (string, int64) {
	t.Helper()
	obj, err := s.Mem.GetObject(bucket, key, nil)
	if err != nil {
		t.Fatalf("object %s: %v", key, err)
	}
	defer obj.Contents.Close()
	h := sha256.New()
	n, err := io.Copy(h, obj.Contents)
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil)), n
}

// A backup job snapshots every database of the instance beside the agent (the default one
// first) and uploads each, under the prefix's layout; it records each snapshot, its timestamp,
// its object's size and SHA-256 (those of the object in the store) and the bytes sent of the
// total. Started again, it is returned as it is and nothing more is taken.
func TestABackupSnapshotsEveryDatabaseAndUploadsIt(t *testing.T) {
	// 20 MiB (more than one 16 MiB part) written in about 1.25 s: the periodic snapshot started
	// last, right before the job, is still being written when the job asks for its own, even on
	// a loaded machine under -race.
	s, f := newStore(t), newAgent(t, sim.SnapshotCost{BytesPerTransaction: 1 << 20, WritePerGiB: 64 * time.Second})
	ctx := context.Background()
	f.write(t, "memgraph", 20)
	createDB(t, f, "tenant_a")
	f.write(t, "tenant_a", 3)
	if err := f.world.StartPeriodicSnapshot(agentHost, "memgraph"); err != nil {
		t.Fatal(err)
	}

	st, err := f.client.Start(ctx, f.addr, "uid-1", backupJob(s, "prod/ns/mg/nightly"))
	if err != nil {
		t.Fatal(err)
	}
	if st.State != backup.StateRunning || st.Kind != backup.KindBackup {
		t.Fatalf("Start: %+v, want a running backup", st)
	}
	done := wait(t, f, "uid-1")
	if done.State != backup.StateCompleted {
		t.Fatalf("job %+v, want Completed", done)
	}
	want := []backup.DatabaseJob{
		{Name: "memgraph", SnapshotTimestamp: 20, Verified: backup.VerifiedByChecksum, Done: true},
		{Name: "tenant_a", SnapshotTimestamp: 3, Verified: backup.VerifiedByChecksum, Done: true},
	}
	if diff := cmp.Diff(want, done.Databases, cmpopts.IgnoreFields(backup.DatabaseJob{}, "Snapshot", "Key", "Size", "SHA256", "CRC32C")); diff != "" {
		t.Fatalf("databases (-want +got):\n%s", diff)
	}
	var total int64
	for i, prefix := range []string{"prod/ns/mg/nightly/", "prod/ns/mg/nightly/databases/tenant_a/"} {
		d := done.Databases[i]
		if !strings.HasPrefix(d.Key, prefix) || !strings.HasSuffix(d.Key, "_timestamp_"+map[int]string{0: "20", 1: "3"}[i]) ||
			strings.Contains(strings.TrimPrefix(d.Key, prefix), "/") {
			t.Errorf("database %s's key %s, want <%s><snapshot file>", d.Name, d.Key, prefix)
		}
		sum, size := sha256Of(t, s, d.Key)
		data, _ := s.Object(bucket, d.Key)
		if sum != d.SHA256 || size != d.Size || s3test.CRC32C(data) != d.CRC32C {
			t.Errorf("database %s: recorded %d bytes, SHA-256 %s, CRC32C %s; the object holds %d, %s, %s", d.Name, d.Size, d.SHA256,
				d.CRC32C, size, sum, s3test.CRC32C(data))
		}
		total += size
	}
	if done.BytesDone != total || done.BytesTotal != total || total < 20<<20 {
		t.Errorf("bytes %d of %d, want all %d", done.BytesDone, done.BytesTotal, total)
	}
	if done.SnapshotWaits == 0 || !containsQuery(f, "CREATE SNAPSHOT -> Another snapshot creation is already in progress") {
		t.Errorf("the periodic snapshot was not waited out: %d waits, queries %v", done.SnapshotWaits, f.queries())
	}
	taken, puts := f.count("CREATE SNAPSHOT"), s.Puts.Load()
	again, err := f.client.Start(ctx, f.addr, "uid-1", backupJob(s, "elsewhere"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(done, again); diff != "" {
		t.Errorf("a second Start (-first +second):\n%s", diff)
	}
	if f.count("CREATE SNAPSHOT") != taken || s.Puts.Load() != puts {
		t.Errorf("a second Start sent %d more CREATE SNAPSHOT and %d more PUTs", f.count("CREATE SNAPSHOT")-taken, s.Puts.Load()-puts)
	}
}

func containsQuery(f *agentFixture, q string) bool {
	for _, got := range f.queries() {
		if got == q {
			return true
		}
	}
	return false
}

// createDB creates database name on the fixture's instance.
func createDB(t *testing.T, f *agentFixture, name string) {
	t.Helper()
	client := f.snapshotClient(t)
	if err := client.CreateDatabase(context.Background(), name); err != nil {
		t.Fatal(err)
	}
}

// An instance that no longer holds the role it was chosen in is not snapshotted: the job fails
// for good, saying which role it holds.
func TestABackupOfAnInstanceThatChangedRoleTakesNothing(t *testing.T) {
	s, f := newStore(t), newAgent(t, quick)
	req := backupJob(s, "prod")
	req.Role = "replica"
	if _, err := f.client.Start(context.Background(), f.addr, "uid-r", req); err != nil {
		t.Fatal(err)
	}
	st := wait(t, f, "uid-r")
	if st.State != backup.StateFailed || !st.Permanent || !strings.Contains(st.Error, "chosen as replica and is main now") {
		t.Fatalf("job %+v, want Failed for good, naming both roles", st)
	}
	if n := f.count("CREATE SNAPSHOT"); n != 0 {
		t.Errorf("%d snapshots taken", n)
	}
}

// The job logs in as the user its request names; a user without a privilege a query needs fails
// the job with Memgraph's words, and nothing is uploaded.
func TestABackupNeedsItsUsersPrivileges(t *testing.T) {
	user := &sim.Auth{Username: "hooks", Password: "pw", Denied: []sim.Privilege{sim.PrivilegeMultiDatabaseUse}}
	s, f := newStore(t), newAgentWithUser(t, quick, user)
	req := backupJob(s, "prod")
	req.Memgraph.Username, req.Memgraph.Password = "hooks", "pw"
	if _, err := f.client.Start(context.Background(), f.addr, "uid-p", req); err != nil {
		t.Fatal(err)
	}
	st := wait(t, f, "uid-p")
	if st.State != backup.StateFailed || !strings.Contains(st.Error, "SHOW DATABASES") ||
		!strings.Contains(st.Error, `You are not authorized to execute this query on database "memgraph"`) {
		t.Fatalf("job %+v, want Failed with Memgraph's refusal of SHOW DATABASES", st)
	}
	if f.count("CREATE SNAPSHOT") != 0 || s.Puts.Load() != 0 {
		t.Errorf("%d snapshots, %d PUTs", f.count("CREATE SNAPSHOT"), s.Puts.Load())
	}
	req.Memgraph.Password = "wrong"
	if _, err := f.client.Start(context.Background(), f.addr, "uid-w", req); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, f, "uid-w"); st.State != backup.StateFailed || !strings.Contains(st.Error, "Authentication failure") {
		t.Fatalf("job with a wrong password %+v, want Failed with Memgraph's Authentication failure", st)
	}
}

// A bucket that does not exist fails the job with the store's own words, before anything is
// snapshotted: the bucket is checked first.
func TestUploadIntoAMissingBucketFailsWithTheStoresWords(t *testing.T) {
	s, f := newStore(t), newAgent(t, quick)
	req := backupJob(s, "prod")
	req.Store.Bucket = "no-such-bucket"
	if _, err := f.client.Start(context.Background(), f.addr, "uid-2", req); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, f, "uid-2"); st.State != backup.StateFailed || st.Phase != backup.PhaseCheckingStore || !strings.Contains(st.Error, "NoSuchBucket") {
		t.Fatalf("job %+v, want Failed checking the store, naming NoSuchBucket", st)
	}
	if n := f.count("CREATE SNAPSHOT"); n != 0 {
		t.Errorf("%d snapshots taken for a bucket that does not exist", n)
	}
}

// damaging changes a byte of the first n object PUTs on their way to the store, which refuses
// each (BadDigest: the bytes do not match the checksum the upload carries).
func damaging(n int64) func(http.Handler) http.Handler {
	var seen atomic.Int64
	return func(store http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && seen.Add(1) <= n {
				body, _ := io.ReadAll(r.Body)
				if i := bytes.Index(body, []byte("\r\n")); i > 0 && i+2 < len(body) {
					body[i+2] ^= 0xff // the first byte of the first chunk's data
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			store.ServeHTTP(w, r)
		})
	}
}

// unavailable answers 503 Service Unavailable to every request.
func unavailable(http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
}

// An upload the store refuses as damaged in transit is sent again from the file's start, the
// job saying meanwhile what it retries, and the backup completes with the object as it was
// snapshotted. A store that never answers fails the job at its deadline, having snapshotted
// nothing.
func TestAStoreThatRefusesOrDoesNotAnswerIsTriedAgainUntilTheDeadline(t *testing.T) {
	s, f := newStoreOn(t, true, s3test.WithFront(damaging(3))), newAgent(t, quick)
	f.write(t, "memgraph", 2)
	if _, err := f.client.Start(context.Background(), f.addr, "uid-damaged", backupJob(s, "prod")); err != nil {
		t.Fatal(err)
	}
	var retrying string
	for deadline := time.Now().Add(20 * time.Second); retrying == ""; time.Sleep(2 * time.Millisecond) {
		st, err := f.client.Status(context.Background(), f.addr, "uid-damaged")
		if err != nil || time.Now().After(deadline) || st.Done() {
			t.Fatalf("the job never said it retries: %+v, %v", st, err)
		}
		retrying = st.Retrying
	}
	if !strings.Contains(retrying, "BadDigest") || !strings.Contains(retrying, "trying again") {
		t.Errorf("while retrying the job says %q", retrying)
	}
	st := wait(t, f, "uid-damaged")
	if st.State != backup.StateCompleted || st.Retrying != "" || len(st.Databases) != 1 {
		t.Fatalf("job %+v, want Completed once the store takes the upload", st)
	}
	data, _ := s.Object(bucket, st.Databases[0].Key)
	if s3test.CRC32C(data) != st.Databases[0].CRC32C || int64(len(data)) != st.Databases[0].Size || s.Puts.Load() != 4 {
		t.Errorf("stored %d bytes, CRC32C %s after %d PUTs; the job recorded %+v", len(data), s3test.CRC32C(data), s.Puts.Load(), st.Databases[0])
	}

	down := newStoreOn(t, true, s3test.WithFront(unavailable))
	req := backupJob(down, "prod")
	req.Deadline = time.Now().Add(2 * time.Second)
	if _, err := f.client.Start(context.Background(), f.addr, "uid-down", req); err != nil {
		t.Fatal(err)
	}
	st = wait(t, f, "uid-down")
	if st.State != backup.StateFailed || st.Permanent || st.Phase != backup.PhaseCheckingStore || !strings.Contains(st.Error, "deadline passed") {
		t.Fatalf("job %+v, want Failed at its deadline while checking the store", st)
	}
	if n := f.count("CREATE SNAPSHOT"); n != 1 {
		t.Errorf("%d snapshots, want the first job's alone", n)
	}
}

func TestStatusOfAnUnknownJobIsTyped(t *testing.T) {
	f := newAgent(t, quick)
	_, err := f.client.Status(context.Background(), f.addr, "never-started")
	var unknown *backupcontroller.UnknownJobError
	if !errors.As(err, &unknown) || unknown.ID != "never-started" {
		t.Fatalf("Status of an unknown id: %v, want *UnknownJobError", err)
	}
}

func TestAgentRefusesBadTokensAndTakesARotatedOne(t *testing.T) {
	f := newAgent(t, quick)
	ctx := context.Background()
	wrong := f.newClient(t, "guess")
	_, err := wrong.Status(ctx, f.addr, "x")
	var ae *backupcontroller.AgentError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token: %v, want a 401 AgentError", err)
	}
	f.tokens.set("rotated")
	if _, err := f.client.Status(ctx, f.addr, "x"); !errors.As(err, &ae) || ae.StatusCode != http.StatusUnauthorized {
		t.Fatalf("old token after rotation: %v, want a 401 AgentError", err)
	}
	rotated := f.newClient(t, "rotated")
	var unknown *backupcontroller.UnknownJobError
	if _, err := rotated.Status(ctx, f.addr, "x"); !errors.As(err, &unknown) {
		t.Fatalf("rotated token: %v, want it admitted (and the id unknown)", err)
	}
}

// A request the agent cannot run is refused, naming the field, and leaves no job behind.
func TestAgentRefusesRequestsItCannotRun(t *testing.T) {
	s, f := newStore(t), newAgent(t, quick)
	ok := backupJob(s, "prod")
	with := func(change func(*backup.JobRequest)) backup.JobRequest { r := ok; change(&r); return r }
	for _, tc := range []struct {
		name string
		req  backup.JobRequest
		msg  string
	}{
		{"unknown kind", with(func(r *backup.JobRequest) { r.Kind = "copy" }), `kind "copy"`},
		{"no address", with(func(r *backup.JobRequest) { r.Memgraph.Address = "" }), "memgraph.address is required"},
		{"no bucket", with(func(r *backup.JobRequest) { r.Store.Bucket = "" }), "store.bucket is required"},
		{"no secret key", with(func(r *backup.JobRequest) { r.Credentials.SecretAccessKey = "" }), "credentials.secretAccessKey is required"},
		{"no deadline", with(func(r *backup.JobRequest) { r.Deadline = time.Time{} }), "deadline is required"},
		{"no role", with(func(r *backup.JobRequest) { r.Role = "" }), `role ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "id-" + strings.ReplaceAll(tc.name, " ", "-")
			_, err := f.client.Start(context.Background(), f.addr, id, tc.req)
			var ae *backupcontroller.AgentError
			if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || !strings.Contains(ae.Message, tc.msg) {
				t.Fatalf("got %v, want 400 containing %q", err, tc.msg)
			}
			var unknown *backupcontroller.UnknownJobError
			if _, err := f.client.Status(context.Background(), f.addr, id); !errors.As(err, &unknown) {
				t.Fatalf("a refused Start left a job behind: %v", err)
			}
		})
	}
	if n := len(f.queries()); n != 0 || s.Puts.Load() != 0 {
		t.Fatalf("refused requests sent %d queries and %d PUTs", n, s.Puts.Load())
	}
}

func TestAgentNamesTheJSONPathOfAMalformedBody(t *testing.T) {
	f := newAgent(t, quick)
	for _, tc := range []struct{ body, msg string }{
		{`{"kind":"backup","store":{"bucket":3}}`, "store.bucket must be string"},
		{`{"kind":"backup","store":{"bukket":"b"}}`, `unknown field "store.bukket"`},
		{`{"kind":`, "malformed JSON"},
		{``, "empty request body"},
	} {
		req, err := http.NewRequest(http.MethodPut, "https://"+f.addr+backup.JobsPath+"bad", bytes.NewBufferString(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		code, body := f.raw(t, req, "s3cret")
		if code != http.StatusBadRequest || !strings.Contains(body, tc.msg) {
			t.Errorf("body %s: %d %s, want 400 containing %q", tc.body, code, body, tc.msg)
		}
	}
}

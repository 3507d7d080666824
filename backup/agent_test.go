package backup_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
)

// wait polls the job until it is no longer Running.
func wait(t *testing.T, f *agentFixture, id string) backup.UploadStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := f.client.Status(context.Background(), f.addr, id)
		if err != nil {
			t.Fatalf("Status(%s): %v", id, err)
		}
		if st.State != backup.StateRunning {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("upload %s still running after 20s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestUploadStreamsTheSnapshotOnceAndReportsTheObject(t *testing.T) {
	s, f := newStore(t), newAgent(t)
	path, data := f.snapshot(t, "20261206000000000000_timestamp_42", 3<<20+17)
	ctx := context.Background()
	req := backup.UploadRequest{Snapshot: path, SnapshotTimestamp: 42, Object: s.object("prod/db/uid-1"), Credentials: creds}
	before := time.Now().UTC().Truncate(time.Second)

	st, err := f.client.Start(ctx, f.addr, "uid-1", req)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != backup.StateRunning && st.State != backup.StateCompleted {
		t.Fatalf("Start: state %q, want Running or Completed", st.State)
	}
	done := wait(t, f, "uid-1")
	want := backup.UploadStatus{State: backup.StateCompleted, Job: backup.UploadJob{Snapshot: path, SnapshotTimestamp: 42, Key: "prod/db/uid-1"},
		Result: backup.UploadResult{Key: "prod/db/uid-1", Size: int64(len(data))}}
	if diff := cmp.Diff(want, done, cmpopts.IgnoreFields(backup.UploadResult{}, "ETag"), cmpopts.IgnoreFields(backup.UploadJob{}, "StartedAt")); diff != "" {
		t.Fatalf("status (-want +got):\n%s", diff)
	}
	if started := done.Job.StartedAt; started.Before(before) || started.After(time.Now()) {
		t.Errorf("job started at %v, want the moment of Start (after %v)", started, before)
	}
	info, err := backup.StatObject(ctx, s.object("prod/db/uid-1"), creds)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(data)) {
		t.Fatalf("object size %d, want %d", info.Size, len(data))
	}
	puts := s.puts.Load()

	// A second Start, even with another request, returns the job as it is and uploads nothing.
	again, err := f.client.Start(ctx, f.addr, "uid-1", backup.UploadRequest{Snapshot: "other", Object: s.object("x"), Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(done, again); diff != "" {
		t.Fatalf("second Start (-first +second):\n%s", diff)
	}
	if got := s.puts.Load(); got != puts {
		t.Fatalf("second Start made %d more PUTs to the store", got-puts)
	}
	objs, err := backup.ListObjects(ctx, s.object("prod/"), creds)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Key != "prod/db/uid-1" || objs[0].Size != int64(len(data)) {
		t.Fatalf("objects under prod/: %+v", objs)
	}
}

func TestUploadIntoAMissingBucketFailsWithTheStoresWords(t *testing.T) {
	s, f := newStore(t), newAgent(t)
	path, _ := f.snapshot(t, "snap", 100)
	obj := s.object("k")
	obj.Bucket = "no-such-bucket"
	if _, err := f.client.Start(context.Background(), f.addr, "uid-2", backup.UploadRequest{Snapshot: path, Object: obj, Credentials: creds}); err != nil {
		t.Fatal(err)
	}
	st := wait(t, f, "uid-2")
	if st.State != backup.StateFailed || !strings.Contains(st.Error, "NoSuchBucket") {
		t.Fatalf("status %+v, want Failed naming NoSuchBucket", st)
	}
}

func TestStatusOfAnUnknownUploadIsTyped(t *testing.T) {
	f := newAgent(t)
	_, err := f.client.Status(context.Background(), f.addr, "never-started")
	var unknown *backup.UnknownUploadError
	if !errors.As(err, &unknown) || unknown.ID != "never-started" {
		t.Fatalf("Status of an unknown id: %v, want *UnknownUploadError", err)
	}
}

func TestAgentRefusesBadTokensAndTakesARotatedOne(t *testing.T) {
	f := newAgent(t)
	ctx := context.Background()
	wrong := f.newClient(t, "guess")
	_, err := wrong.Status(ctx, f.addr, "x")
	var ae *backup.AgentError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token: %v, want a 401 AgentError", err)
	}
	f.tokens.set("rotated")
	if _, err := f.client.Status(ctx, f.addr, "x"); !errors.As(err, &ae) || ae.StatusCode != http.StatusUnauthorized {
		t.Fatalf("old token after rotation: %v, want a 401 AgentError", err)
	}
	rotated := f.newClient(t, "rotated")
	var unknown *backup.UnknownUploadError
	if _, err := rotated.Status(ctx, f.addr, "x"); !errors.As(err, &unknown) {
		t.Fatalf("rotated token: %v, want it admitted (and the id unknown)", err)
	}
}

func TestAgentRefusesRequestsItCannotRun(t *testing.T) {
	s, f := newStore(t), newAgent(t)
	path, _ := f.snapshot(t, "snap", 10)
	outside := filepath.Join(filepath.Dir(f.dir), "secret")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(f.dir, ".old"), 0o755); err != nil {
		t.Fatal(err)
	}
	ok := backup.UploadRequest{Snapshot: path, Object: s.object("k"), Credentials: creds}
	with := func(change func(*backup.UploadRequest)) backup.UploadRequest { r := ok; change(&r); return r }
	for _, tc := range []struct {
		name string
		req  backup.UploadRequest
		code int
		msg  string
	}{
		{"outside the directory", with(func(r *backup.UploadRequest) { r.Snapshot = outside }), 400, "not a file directly in the snapshot directory"},
		{"dot-dot", with(func(r *backup.UploadRequest) { r.Snapshot = "../secret" }), 400, "not a file directly in the snapshot directory"},
		{"symlink out", with(func(r *backup.UploadRequest) { r.Snapshot = "link" }), 400, "leads out of the snapshot directory"},
		{"missing file", with(func(r *backup.UploadRequest) { r.Snapshot = "gone" }), 422, "does not exist"},
		{"a directory", with(func(r *backup.UploadRequest) { r.Snapshot = ".old" }), 422, "not a regular file"},
		{"no bucket", with(func(r *backup.UploadRequest) { r.Object.Bucket = "" }), 400, "object.bucket is required"},
		{"no secret key", with(func(r *backup.UploadRequest) { r.Credentials.SecretAccessKey = "" }), 400, "credentials.secretAccessKey is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.client.Start(context.Background(), f.addr, "id-"+strings.ReplaceAll(tc.name, " ", "-"), tc.req)
			var ae *backup.AgentError
			if !errors.As(err, &ae) || ae.StatusCode != tc.code || !strings.Contains(ae.Message, tc.msg) {
				t.Fatalf("got %v, want %d containing %q", err, tc.code, tc.msg)
			}
			var unknown *backup.UnknownUploadError
			if _, err := f.client.Status(context.Background(), f.addr, "id-"+strings.ReplaceAll(tc.name, " ", "-")); !errors.As(err, &unknown) {
				t.Fatalf("a refused Start left a job behind: %v", err)
			}
		})
	}
	if n := s.puts.Load(); n != 0 {
		t.Fatalf("refused requests made %d PUTs to the store", n)
	}
}

func TestAgentNamesTheJSONPathOfAMalformedBody(t *testing.T) {
	f := newAgent(t)
	for _, tc := range []struct{ body, msg string }{
		{`{"snapshot":"s","object":{"bucket":3}}`, "object.bucket must be string"},
		{`{"snapshot":"s","object":{"bukket":"b"}}`, `unknown field "object.bukket"`},
		{`{"snapshot":`, "malformed JSON"},
		{``, "empty request body"},
	} {
		req, err := http.NewRequest(http.MethodPut, "https://"+f.addr+backup.UploadsPath+"bad", bytes.NewBufferString(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		code, body := f.raw(t, req, "s3cret")
		if code != http.StatusBadRequest || !strings.Contains(body, tc.msg) {
			t.Errorf("body %s: %d %s, want 400 containing %q", tc.body, code, body, tc.msg)
		}
	}
}

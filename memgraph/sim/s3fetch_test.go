package sim

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// TestFailedS3DownloadLeavesWhatArrived follows Memgraph v3.12.0 InMemoryStorage::RecoverSnapshot
// (inmemory/storage.cpp 4302–4357): an s3:// snapshot is fetched into the snapshot directory
// under its own name, and a failed fetch is "Failed to download snapshot file from s3 <uri>"
// with nothing removed — unlike a failed http(s) download, which deletes its file. The AWS SDK
// asks for the object's size first, so a missing object writes nothing; a transfer cut short
// leaves what arrived. The storage stays clean (the check comes after the fetch), SHOW
// SNAPSHOTS skips the unreadable file, and a retry once the store serves the object whole
// overwrites it and recovers.
func TestFailedS3DownloadLeavesWhatArrived(t *testing.T) {
	const name = "20260101000000000000_timestamp_4"
	cutShort := true
	mem := s3mem.New()
	must(t, mem.CreateBucket("backups"))
	fake := gofakes3.New(mem).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/"+name) || !cutShort {
			fake.ServeHTTP(w, r)
			return
		}
		whole := httptest.NewRecorder()
		fake.ServeHTTP(whole, r)
		for k, v := range whole.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(whole.Code)
		_, _ = w.Write(whole.Body.Bytes()[:whole.Body.Len()/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection drops mid-body
	}))
	t.Cleanup(srv.Close)

	src := startWorld(t, 0, 1)
	d := dial(t, src, dataBolt(1))
	for range 4 {
		d.must("CREATE (n)")
	}
	snapshot, err := os.ReadFile(d.must("CREATE SNAPSHOT").rows[0]["path"].(string))
	must(t, err)
	meta := map[string]string{"Last-Modified": time.Now().UTC().Format(http.TimeFormat)} // what gofakes3's PUT records
	if _, err := mem.PutObject("backups", "prod/"+name, meta, bytes.NewReader(snapshot), int64(len(snapshot)), nil); err != nil {
		t.Fatal(err)
	}

	dst := startWorld(t, 0, 0)
	spec := dataSpec(1)
	spec.DataDir = t.TempDir()
	must(t, dst.StartData(spec))
	n := dial(t, dst, dataBolt(1))
	recoverFrom := func(key string) outcome {
		return n.run("RECOVER SNAPSHOT 's3://backups/prod/"+key+"' WITH CONFIG {'aws_region': 'us-east-1', "+
			"'aws_access_key': 'k', 'aws_secret_key': 's', 'aws_endpoint_url': '"+srv.URL+"'}", nil)
	}
	snapshots := filepath.Join(spec.DataDir, "snapshots")

	if out := recoverFrom("missing"); out.err == nil || out.err.Msg != "Failed to download snapshot file from s3 s3://backups/prod/missing" {
		t.Fatalf("missing object: %+v", out)
	}
	if _, err := os.Stat(filepath.Join(snapshots, "missing")); !os.IsNotExist(err) {
		t.Errorf("a missing object left a file: %v", err)
	}

	if out := recoverFrom(name); out.err == nil || out.err.Msg != "Failed to download snapshot file from s3 s3://backups/prod/"+name {
		t.Fatalf("transfer cut short: %+v", out)
	}
	left, err := os.ReadFile(filepath.Join(snapshots, name))
	if err != nil {
		t.Fatalf("the cut transfer left no file: %v", err)
	}
	if !bytes.Equal(left, snapshot[:len(snapshot)/2]) {
		t.Errorf("the file left holds %d bytes, want the %d that arrived", len(left), len(snapshot)/2)
	}
	if rows := n.must("SHOW SNAPSHOTS").rows; len(rows) != 0 {
		t.Errorf("SHOW SNAPSHOTS lists the partial file: %v", rows)
	}

	cutShort = false
	n.must("RECOVER SNAPSHOT 's3://backups/prod/" + name + "' WITH CONFIG {'aws_region': 'us-east-1', " +
		"'aws_access_key': 'k', 'aws_secret_key': 's', 'aws_endpoint_url': '" + srv.URL + "'}")
	if got := txnsOf(dst, 1); got != 4 {
		t.Errorf("the retry recovered %d transactions, want 4", got)
	}
}

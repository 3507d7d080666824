package sim

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

func txnsOf(w *World, n int) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	return w.instances[dataSpec(n).Host].txns[defaultDB]
}

// TestCreateSnapshotWritesTheCommittedData follows interpreter.cpp 6171–6223 (one row, the
// path; no role check) and 6331–6375 (SHOW SNAPSHOTS' columns).
func TestCreateSnapshotWritesTheCommittedData(t *testing.T) {
	w, _ := setupCluster(t, 1, 2)
	d1, d2 := dial(t, w, dataBolt(1)), dial(t, w, dataBolt(2))
	for range 3 {
		d1.must("CREATE (n)")
	}
	out := d1.must("CREATE SNAPSHOT")
	if len(out.keys) != 1 || out.keys[0] != "path" || len(out.rows) != 1 {
		t.Fatalf("CREATE SNAPSHOT returned %v %v, want one row with path", out.keys, out.rows)
	}
	path := out.rows[0]["path"].(string)
	if !regexp.MustCompile(`/snapshots/20260101000000000000_timestamp_3$`).MatchString(path) {
		t.Fatalf("snapshot path %s: want <data dir>/snapshots/<time>_timestamp_3", path)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	show := d1.must("SHOW SNAPSHOTS")
	if strings.Join(show.keys, ",") != "path,timestamp,creation_time,size" || len(show.rows) != 1 {
		t.Fatalf("SHOW SNAPSHOTS: %v %v", show.keys, show.rows)
	}
	r := show.rows[0]
	if r["path"] != path || r["timestamp"] != int64(3) || r["size"] != readableSize(info.Size()) ||
		!regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}$`).MatchString(r["creation_time"].(string)) {
		t.Fatalf("SHOW SNAPSHOTS row %v", r)
	}
	// A replica writes its own snapshot, in its own directory.
	rp := d2.must("CREATE SNAPSHOT").rows[0]["path"].(string)
	if filepath.Dir(rp) == filepath.Dir(path) || !strings.HasSuffix(rp, "_timestamp_3") {
		t.Fatalf("replica snapshot %s (MAIN's %s)", rp, path)
	}
	// A wiped instance has lost its snapshots with its volume.
	must(t, w.Wipe(dataSpec(1).Host))
	if rows := dial(t, w, dataBolt(1)).must("SHOW SNAPSHOTS").rows; len(rows) != 0 {
		t.Fatalf("SHOW SNAPSHOTS after a wipe: %v", rows)
	}
}

func TestReadableSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1023: "1023B", 1024: "1.00KiB", 1536: "1.50KiB", 5 << 20: "5.00MiB"} {
		if got := readableSize(n); got != want {
			t.Errorf("readableSize(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestRecoverSnapshotRefusals: each refusal with Memgraph's text (interpreter.cpp 6225–6316).
func TestRecoverSnapshotRefusals(t *testing.T) {
	w, _ := setupCluster(t, 1, 2)
	d1, d2 := dial(t, w, dataBolt(1)), dial(t, w, dataBolt(2))
	d1.must("CREATE (n)")
	path := d1.must("CREATE SNAPSHOT").rows[0]["path"].(string)
	for _, tc := range []struct {
		c     *client
		query string
		phase string
		msg   string
	}{
		{d2, "RECOVER SNAPSHOT '" + path + "' FORCE", "PULL", msgRecoverOnReplica},
		{d1, "RECOVER SNAPSHOT '" + path + "'", "PULL", msgRecoverNotClean},
		{d1, "RECOVER SNAPSHOT '/nowhere/x' FORCE", "PULL", msgRecoverMissing},
		{d1, "RECOVER SNAPSHOT 42", "RUN", msgSnapshotLiteral},
		{d1, "RECOVER SNAPSHOT 's3://b/k' WITH CONFIG {'aws_access_key': 'a', 'aws_secret_key': 's'} FORCE", "PULL", msgAwsRegion},
		{d1, "RECOVER SNAPSHOT 's3://b/k' WITH CONFIG {'aws_region': 1}", "RUN", msgRecoverConfigMap},
		{d1, "RECOVER SNAPSHOT 's3://b/k' WITH CONFIG {'aws_region': 'r', 'aws_access_key': 'a', 'aws_secret_key': 's', 'aws_endpoint_url': 'e', 'x': 'y'}", "RUN", msgRecoverConfigSize},
	} {
		out := tc.c.run(tc.query, nil)
		if out.err == nil || out.err.Msg != tc.msg || out.phase != tc.phase {
			t.Errorf("%s: %+v, want %s: %q", tc.query, out.err, tc.phase, tc.msg)
		}
	}
	if got := txnsOf(w, 1); got != 1 {
		t.Fatalf("refusals changed the MAIN's data: %d transactions", got)
	}
}

// TestRecoverSnapshotOnMainForceRecoversEveryReplica: the MAIN loads the snapshot and recovers
// each replica from scratch (interpreter.cpp 6320–6325, replication_client.cpp 326–339): the
// replicas report "recovery", then hold exactly the snapshot's data; the other snapshot files
// are archived in .old and the recovered one is renamed for its timestamp.
func TestRecoverSnapshotOnMainForceRecoversEveryReplica(t *testing.T) {
	w, _ := setupCluster(t, 1, 3, WithReplicaRecoveryTime(2*time.Second))
	d1 := dial(t, w, dataBolt(1))
	for range 5 {
		d1.must("CREATE (n)")
	}
	path := d1.must("CREATE SNAPSHOT").rows[0]["path"].(string)
	saved := filepath.Join(t.TempDir(), "backup")
	must(t, copyFile(path, saved))
	for range 3 {
		d1.must("CREATE (n)")
	}
	advance(t, w, time.Second)
	d1.must("RECOVER SNAPSHOT '" + saved + "' FORCE")
	if got := txnsOf(w, 1); got != 5 {
		t.Fatalf("MAIN holds %d transactions after the recovery, want the snapshot's 5", got)
	}
	for _, r := range d1.must("SHOW REPLICAS").rows {
		if st := r["data_info"].(map[string]any)["memgraph"].(map[string]any)["status"]; st != "recovery" {
			t.Errorf("replica %s is %v right after the recovery, want recovery", r["name"], st)
		}
	}
	advance(t, w, 2*time.Second)
	for n := 2; n <= 3; n++ {
		if got := txnsOf(w, n); got != 5 {
			t.Errorf("replica %d holds %d transactions, want the MAIN's 5", n, got)
		}
	}
	d1.must("CREATE (n)") // the MAIN takes writes, and the replicas follow
	if got := txnsOf(w, 3); got != 6 {
		t.Errorf("replica 3 holds %d after a write, want 6", got)
	}
	rows := d1.must("SHOW SNAPSHOTS").rows
	if len(rows) != 1 || !strings.HasSuffix(rows[0]["path"].(string), "_timestamp_5") {
		t.Fatalf("snapshots after the recovery: %v", rows)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), ".old", filepath.Base(path))); err != nil {
		t.Fatalf("the old snapshot was not archived: %v", err)
	}
}

// TestRecoverSnapshotFromS3IntoAnEmptyInstance: a new instance recovers an uploaded snapshot
// with the WITH CONFIG credentials and endpoint, without FORCE.
func TestRecoverSnapshotFromS3IntoAnEmptyInstance(t *testing.T) {
	mem := s3mem.New()
	must(t, mem.CreateBucket("backups"))
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(srv.Close)

	src := startWorld(t, 0, 1)
	d := dial(t, src, dataBolt(1))
	for range 4 {
		d.must("CREATE (n)")
	}
	path := d.must("CREATE SNAPSHOT").rows[0]["path"].(string)
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	info, _ := f.Stat()
	meta := map[string]string{"Last-Modified": time.Now().UTC().Format(http.TimeFormat)} // what gofakes3's PUT records
	if _, err := mem.PutObject("backups", "prod/one", meta, f, info.Size(), nil); err != nil {
		t.Fatal(err)
	}

	dst := startWorld(t, 0, 1)
	n := dial(t, dst, dataBolt(1))
	query := "RECOVER SNAPSHOT 's3://backups/%s' WITH CONFIG {'aws_region': 'us-east-1', 'aws_access_key': 'k', 'aws_secret_key': 's', 'aws_endpoint_url': '" + srv.URL + "'}"
	if out := n.run(strings.Replace(query, "%s", "prod/missing", 1), nil); out.err == nil || out.err.Msg != "Failed to download snapshot file from s3 s3://backups/prod/missing" {
		t.Fatalf("missing object: %+v", out.err)
	}
	n.must(strings.Replace(query, "%s", "prod/one", 1))
	if got := txnsOf(dst, 1); got != 4 {
		t.Fatalf("recovered instance holds %d transactions, want 4", got)
	}
}

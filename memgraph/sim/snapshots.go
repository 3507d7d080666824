package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// Snapshots (Memgraph v3.12.0): CREATE SNAPSHOT writes the current database's committed data
// into <data directory>/snapshots (durability/paths.hpp 22) as "<local time,
// %Y%m%d%H%M%S%06d>_timestamp_<last durable timestamp>" (paths.hpp 30–37, snapshot.cpp 13221),
// on a MAIN or a REPLICA alike (interpreter.cpp 6171–6223 checks no role). The simulator's file
// holds the database's transaction count as JSON (snapshotFile); counts stand in for commit
// timestamps, as in SHOW REPLICAS.

// SnapshotFormat names the simulator's snapshot file format.
const SnapshotFormat = "memgraph-sim-snapshot/v1"

// snapshotFile is the content of a simulated snapshot.
type snapshotFile struct {
	Format       string `json:"format"`
	Database     string `json:"database"`
	Timestamp    int64  `json:"timestamp"`
	Transactions int64  `json:"transactions"`
}

var snapshotName = regexp.MustCompile(`^[0-9]{20}_timestamp_[0-9]+$`)

// snapshotDir is the instance's snapshot directory: under DataSpec.DataDir, or under a
// directory of the world's own when the spec has none. Caller holds w.mu.
func (w *World) snapshotDir(in *instance) (string, error) {
	if in.dspec.DataDir != "" {
		return filepath.Join(in.dspec.DataDir, "snapshots"), nil
	}
	if w.tempDirs == nil {
		w.tempDirs = map[string]string{}
	}
	if d, ok := w.tempDirs[in.host]; ok {
		return filepath.Join(d, "snapshots"), nil
	}
	d, err := os.MkdirTemp("", "memgraph-sim-data-")
	if err != nil {
		return "", err
	}
	w.tempDirs[in.host] = d
	return filepath.Join(d, "snapshots"), nil
}

// wipeSnapshots removes a wiped data instance's snapshot directory (its volume is new).
func (w *World) wipeSnapshots(in *instance) error {
	dir, err := w.snapshotDir(in)
	if err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// makeSnapshotName is MakeSnapshotName: the local time (the simulator's clock, UTC as in a Pod)
// to the microsecond, then the timestamp.
func makeSnapshotName(at time.Time, ts int64) string {
	at = at.UTC()
	return fmt.Sprintf("%s%06d_timestamp_%d", at.Format("20060102150405"), at.Nanosecond()/1000, ts)
}

// prepareCreateSnapshot is CREATE SNAPSHOT: one row, the new file's path.
func (w *World) prepareCreateSnapshot(in *instance, explicitTx bool) (*bolt.Prepared, *bolt.Failure) {
	if explicitTx {
		return nil, bolt.ClientError(msgMulticommand("Creating snapshots"))
	}
	return &bolt.Prepared{Fields: []string{"path"}, Exec: func(context.Context) bolt.Outcome {
		path, err := w.createSnapshot(in, defaultDB)
		if err != nil {
			return failure("Failed to create snapshot. " + err.Error() + ".")
		}
		return bolt.Outcome{Rows: [][]any{{path}}, Type: "s"}
	}}, nil
}

func (w *World) createSnapshot(in *instance, db string) (string, error) {
	dir, err := w.snapshotDir(in)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	n := in.txns[db]
	data, err := json.Marshal(snapshotFile{Format: SnapshotFormat, Database: db, Timestamp: n, Transactions: n})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, makeSnapshotName(w.cur, n))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// prepareShowSnapshots is SHOW SNAPSHOTS (interpreter.cpp 6331–6375, inmemory/storage.cpp
// 4566–4607): path, timestamp, creation_time (the file's modification time,
// %Y-%m-%dT%H:%M:%S%z) and size (GetReadableSize), newest first; files that are not snapshots
// are skipped.
func (w *World) prepareShowSnapshots(in *instance, explicitTx bool) (*bolt.Prepared, *bolt.Failure) {
	if explicitTx {
		return nil, bolt.ClientError(msgMulticommand("Show schema info query"))
	}
	return &bolt.Prepared{Fields: []string{"path", "timestamp", "creation_time", "size"}, Exec: func(context.Context) bolt.Outcome {
		rows, err := w.snapshotRows(in)
		if err != nil {
			return failure(err.Error())
		}
		return bolt.Outcome{Rows: rows, Type: "r"}
	}}, nil
}

func (w *World) snapshotRows(in *instance) ([][]any, error) {
	dir, err := w.snapshotDir(in)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return [][]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	type row struct {
		path    string
		ts      int64
		modTime time.Time
		size    int64
	}
	var rows []row
	for _, e := range entries {
		if !e.Type().IsRegular() || !snapshotName.MatchString(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		snap, err := readSnapshot(path)
		info, serr := e.Info()
		if err != nil || serr != nil {
			continue
		}
		rows = append(rows, row{path, snap.Timestamp, info.ModTime(), info.Size()})
	}
	slices.SortFunc(rows, func(a, b row) int {
		if c := b.modTime.Compare(a.modTime); c != 0 {
			return c
		}
		return strings.Compare(b.path, a.path)
	})
	out := [][]any{}
	for _, r := range rows {
		out = append(out, []any{r.path, r.ts, r.modTime.Format("2006-01-02T15:04:05-0700"), readableSize(r.size)})
	}
	return out, nil
}

// readableSize is GetReadableSize (utils/readable_size.cpp 20–36).
func readableSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	size, i := float64(n), 0
	for ; i+1 < len(units) && size >= 1024; i++ {
		size /= 1024
	}
	if i == 0 {
		return fmt.Sprintf("%.0f%s", size, units[i])
	}
	return fmt.Sprintf("%.2f%s", size, units[i])
}

func readSnapshot(path string) (snapshotFile, error) {
	var s snapshotFile
	data, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if json.Unmarshal(data, &s) != nil || s.Format != SnapshotFormat {
		return s, fmt.Errorf("Couldn't read snapshot magic and/or version!")
	}
	return s, nil
}

// msgMulticommand is MulticommandTxException's text (query/exceptions.hpp 148–156).
func msgMulticommand(what string) string {
	return what + " is not allowed in multicommand transactions. A multicommand transaction, also known as an explicit transaction, groups multiple commands into a single atomic operation. Instead, please use an implicit transaction, also known as an auto committing transaction, in order to execute this particularquery. For more details, visit https://memgraph.com/docs"
}

// copyFile copies src to dst (replacing it).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// download GETs url into dst, which must not exist (fopen "wbx").
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

// s3Object turns s3://bucket/key and the query's config into the store's object: the endpoint
// is aws_endpoint_url (its scheme picks HTTP or HTTPS), AWS's own without it.
func s3Object(uri string, cfg map[string]string) (backup.S3Object, backup.S3Credentials, bool) {
	rest := strings.TrimPrefix(uri, "s3://")
	bucket, key, ok := strings.Cut(rest, "/")
	if !ok || bucket == "" || key == "" {
		return backup.S3Object{}, backup.S3Credentials{}, false
	}
	endpoint := cfg["aws_endpoint_url"]
	if endpoint == "" {
		endpoint = "https://s3." + cfg["aws_region"] + ".amazonaws.com"
	}
	return backup.S3Object{Endpoint: endpoint, Bucket: bucket, Key: key, Region: cfg["aws_region"]},
		backup.S3Credentials{AccessKeyID: cfg["aws_access_key"], SecretAccessKey: cfg["aws_secret_key"]}, true
}

package sim

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// Snapshots (Memgraph v3.12.0): CREATE SNAPSHOT writes a snapshot of the session's database into
// that database's snapshot directory — <data directory>/snapshots for the default database,
// <data directory>/databases/<uuid>/snapshots for another (durability/paths.hpp 22,
// dbms/dbms_handler.hpp 920–941) — as "<local time, %Y%m%d%H%M%S%06d>_timestamp_<last durable
// timestamp>" (paths.hpp 30–37), directly under that final name, with no temporary file
// (snapshot.cpp 13221–13253), on a MAIN or a REPLICA alike (interpreter.cpp 6171–6223 checks no
// role). Only one snapshot of a database is written at a time: a second CREATE SNAPSHOT, or the
// periodic one, meanwhile fails with "Another snapshot creation is already in progress"
// (inmemory/storage.cpp 4224–4229), and SHOW SNAPSHOTS waits on the same lock (4239, 4567).
// CREATE SNAPSHOT answers once the file is complete (6189–6203).
//
// The simulator's file is a JSON header line (the database, its transaction count, which
// stands for the durable timestamp, and how many bytes follow) and a deterministic payload whose
// size is SnapshotCost.BytesPerTransaction per transaction; writing and loading it take
// SnapshotCost's time per GiB. A file shorter than its header says — one still being written, or
// cut off — is not a snapshot: SHOW SNAPSHOTS skips it and RECOVER SNAPSHOT refuses it, as
// Memgraph's offsets check does (snapshot.cpp 613–660, durability.cpp 128–157).

// SnapshotFormat names the simulator's snapshot file format.
const SnapshotFormat = "memgraph-sim-snapshot/v2"

// SnapshotCost is how big a snapshot is and how long writing and loading it take, in proportion
// to the data: tests set it to make snapshots that outlast a hook request.
type SnapshotCost struct {
	// BytesPerTransaction is what each committed transaction adds to a snapshot file; 0 makes
	// files of a header alone.
	BytesPerTransaction int64
	// WritePerGiB is how long writing one GiB of snapshot takes (CREATE SNAPSHOT, the periodic
	// snapshot); LoadPerGiB how long RECOVER SNAPSHOT takes to load one. 0: at once.
	WritePerGiB, LoadPerGiB time.Duration
}

// WithSnapshotCost sets the snapshots' size and time (SetSnapshotCost).
func WithSnapshotCost(c SnapshotCost) Option { return func(o *options) { o.snapshotCost = c } }

// SetSnapshotCost changes the snapshots' size and time from now on; snapshots being written or
// loaded keep theirs.
func (w *World) SetSnapshotCost(c SnapshotCost) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.opts.snapshotCost = c
}

// costOf is how long size bytes take at perGiB.
func costOf(size int64, perGiB time.Duration) time.Duration {
	return time.Duration(float64(perGiB) * float64(size) / float64(1<<30))
}

// snapshotHeader is the first line of a simulated snapshot.
type snapshotHeader struct {
	Format       string `json:"format"`
	Database     string `json:"database"`
	Timestamp    int64  `json:"timestamp"`
	Transactions int64  `json:"transactions"`
	// Payload is how many bytes follow the header line.
	Payload int64 `json:"payload"`
}

func (h snapshotHeader) line() []byte {
	b, _ := json.Marshal(h) // a struct of strings and integers: always encodes
	return append(b, '\n')
}

// size is the whole file's.
func (h snapshotHeader) size() int64 { return int64(len(h.line())) + h.Payload }

// payloadBlock is the repeated content of a snapshot's payload: a function of its database and
// timestamp, so two snapshots of different data differ.
func (h snapshotHeader) payloadBlock() []byte {
	seed := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", h.Database, h.Timestamp)))
	block := make([]byte, 64<<10)
	for i := range block {
		block[i] = seed[i%len(seed)] ^ byte(i/len(seed))
	}
	return block
}

// writeSnapshotFile writes the whole snapshot at path (created or replaced).
func writeSnapshotFile(path string, h snapshotHeader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	_, err = bw.Write(h.line())
	block := h.payloadBlock()
	for left := h.Payload; left > 0 && err == nil; {
		n := min(left, int64(len(block)))
		_, err = bw.Write(block[:n])
		left -= n
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readSnapshot reads a snapshot's header, refusing a file that is not one or is cut short.
func readSnapshot(path string) (snapshotHeader, error) {
	var h snapshotHeader
	f, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, 4096), 4096).ReadBytes('\n')
	if err != nil || json.Unmarshal(bytes.TrimSpace(line), &h) != nil || h.Format != SnapshotFormat {
		return h, errors.New("Couldn't read snapshot magic and/or version!")
	}
	info, err := f.Stat()
	if err != nil || info.Size() != int64(len(line))+h.Payload {
		return h, errors.New("Invalid snapshot format!")
	}
	return h, nil
}

// snapshotOf is the snapshot of db as in holds it now.
func (w *World) snapshotOf(in *instance, db string) snapshotHeader {
	n := in.txns[db]
	return snapshotHeader{Format: SnapshotFormat, Database: db, Timestamp: n, Transactions: n,
		Payload: n * w.opts.snapshotCost.BytesPerTransaction}
}

// dataDir is the instance's data directory: DataSpec.DataDir, or a directory of the world's
// own when the spec has none. Caller holds w.mu.
func (w *World) dataDir(in *instance) (string, error) {
	if in.dspec.DataDir != "" {
		return in.dspec.DataDir, nil
	}
	if w.tempDirs == nil {
		w.tempDirs = map[string]string{}
	}
	if d, ok := w.tempDirs[in.host]; ok {
		return d, nil
	}
	d, err := os.MkdirTemp("", "memgraph-sim-data-")
	if err != nil {
		return "", err
	}
	w.tempDirs[in.host] = d
	return d, nil
}

// snapshotDir is database db's snapshot directory on in. Caller holds w.mu.
func (w *World) snapshotDir(in *instance, db string) (string, error) {
	dir, err := w.dataDir(in)
	if err != nil {
		return "", err
	}
	if db == defaultDB {
		return filepath.Join(dir, "snapshots"), nil
	}
	return filepath.Join(dir, "databases", databaseUUID(in.host, db), "snapshots"), nil
}

// databaseUUID stands for the UUID Memgraph gives a database when it is created: one per
// instance and database, the same across restarts.
func databaseUUID(host, db string) string {
	sum := sha256.Sum256([]byte(host + "\x00" + db))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// wipeSnapshots removes a wiped data instance's snapshot directories (its volume is new).
func (w *World) wipeSnapshots(in *instance) error {
	dir, err := w.dataDir(in)
	if err != nil {
		return err
	}
	for _, sub := range []string{"snapshots", "databases"} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			return err
		}
	}
	return nil
}

// makeSnapshotName is MakeSnapshotName: the local time (the simulator's clock, UTC as in a Pod)
// to the microsecond, then the timestamp.
func makeSnapshotName(at time.Time, ts int64) string {
	at = at.UTC()
	return fmt.Sprintf("%s%06d_timestamp_%d", at.Format("20060102150405"), at.Nanosecond()/1000, ts)
}

// Messages of a snapshot that is not written (inmemory/storage.hpp 142–152, interpreter.cpp
// 6196–6201): a utils::BasicException, which Bolt reports as a TransientError.
const msgSnapshotRunning = "Another snapshot creation is already in progress"

// transient is a utils::BasicException's FAILURE (handlers.hpp 62–75).
func transient(msg string) bolt.Outcome {
	return bolt.Outcome{Err: &bolt.Failure{Code: bolt.CodeTransientError, Message: msg}}
}

// snapshotRun is a snapshot of one database being written: its file exists, incomplete, until
// endAt.
type snapshotRun struct {
	db, path string
	header   snapshotHeader
	endAt    time.Time
	state    runState
}

type runState int

const (
	runGoing runState = iota
	runDone
	runAborted // the process stopped: the file stays as far as it was written
)

// startSnapshot starts writing db's snapshot on in, or says why not (Memgraph's message).
// Caller holds w.mu.
func (w *World) startSnapshot(in *instance, db string) (*snapshotRun, string) {
	if in.snapshotRuns[db] != nil {
		return nil, msgSnapshotRunning
	}
	dir, err := w.snapshotDir(in, db)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	h := w.snapshotOf(in, db)
	path := filepath.Join(dir, makeSnapshotName(w.cur, h.Timestamp))
	if err == nil {
		err = os.WriteFile(path, h.line(), 0o644) // opened under its final name, not yet complete
	}
	if err != nil {
		return nil, "Failed to create snapshot. " + err.Error() + "."
	}
	run := &snapshotRun{db: db, path: path, header: h, endAt: w.cur.Add(costOf(h.size(), w.opts.snapshotCost.WritePerGiB))}
	if in.snapshotRuns == nil {
		in.snapshotRuns = map[string]*snapshotRun{}
	}
	in.snapshotRuns[db] = run
	if !run.endAt.After(w.cur) {
		w.finishSnapshot(in, run)
	}
	return run, ""
}

// finishSnapshot completes the file and releases the database's snapshot lock.
func (w *World) finishSnapshot(in *instance, run *snapshotRun) {
	delete(in.snapshotRuns, run.db)
	run.state = runDone
	if err := writeSnapshotFile(run.path, run.header); err != nil {
		run.state = runAborted
	}
}

// snapshotEnd is the earliest end of a snapshot being written, and how to apply it.
func (w *World) snapshotEnd() (time.Time, func(), bool) {
	run, in, ok := earliestRun(w, func(in *instance) map[string]*snapshotRun { return in.snapshotRuns })
	if !ok {
		return time.Time{}, nil, false
	}
	return run.endAt, func() { w.finishSnapshot(in, run) }, true
}

// timedRun is a snapshot being written or loaded.
type timedRun interface{ end() time.Time }

func (r *snapshotRun) end() time.Time { return r.endAt }
func (r *loadRun) end() time.Time     { return r.endAt }

// earliestRun is the run that ends first among every instance's runs (by database), and its
// instance; ties go to the first host, then the first database, by name.
func earliestRun[R timedRun](w *World, runs func(*instance) map[string]R) (R, *instance, bool) {
	var first R
	var owner *instance
	var firstDB string
	for _, in := range w.instances {
		for db, run := range runs(in) {
			at, best := run.end(), time.Time{}
			if owner != nil {
				best = first.end()
			}
			if owner == nil || at.Before(best) || at.Equal(best) && (in.host < owner.host || in.host == owner.host && db < firstDB) {
				first, owner, firstDB = run, in, db
			}
		}
	}
	return first, owner, owner != nil
}

// abortRuns is a process stopping while it writes or loads snapshots: the files stay as they
// are, nothing is loaded.
func abortRuns(in *instance) {
	for _, run := range in.snapshotRuns {
		run.state = runAborted
	}
	for _, run := range in.loadRuns {
		run.state = runAborted
	}
	in.snapshotRuns, in.loadRuns = nil, nil
}

// StartPeriodicSnapshot starts the snapshot --storage-snapshot-interval-sec takes of database
// db on host (the simulator has no timer for it: tests call this when the interval would come).
// One already being written makes it skip, as Memgraph's does ("snapshot skipped").
func (w *World) StartPeriodicSnapshot(host, db string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.settle()
	w.advance()
	in, err := w.aliveInstance(host)
	if err != nil || in.coord {
		return cmpErr(err, fmt.Errorf("sim: %s is a coordinator", host))
	}
	if _, ok := in.txns[db]; !ok {
		return fmt.Errorf("sim: %s has no database %s", host, db)
	}
	if _, msg := w.startSnapshot(in, db); msg != "" {
		return fmt.Errorf("sim: snapshot skipped: %s", msg)
	}
	return nil
}

// SnapshotRunning reports whether a snapshot of db is being written on host.
func (w *World) SnapshotRunning(host, db string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	in, ok := w.instances[host]
	return ok && in.snapshotRuns[db] != nil
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// prepareCreateSnapshot is CREATE SNAPSHOT: one row, the new file's path, once it is complete.
// The snapshot goes on when the client hangs up; it stops only with the process.
func (w *World) prepareCreateSnapshot(in *instance, db string, explicitTx bool) (*bolt.Prepared, *bolt.Failure) {
	if explicitTx {
		return nil, bolt.ClientError(msgMulticommand("Creating snapshots"))
	}
	return &bolt.Prepared{Fields: []string{"path"}, Blocking: true, Exec: func(ctx context.Context) bolt.Outcome {
		run, msg := w.startSnapshot(in, db)
		if msg != "" {
			return transient(msg)
		}
		for run.state == runGoing && ctx.Err() == nil {
			w.waitUntil(ctx, run.endAt)
		}
		switch {
		case run.state == runAborted:
			return transient("Failed to create snapshot. The instance stopped while it wrote " + run.path + ".")
		case run.state == runGoing:
			return failure("sim: the client hung up while CREATE SNAPSHOT was running; the snapshot goes on")
		}
		return bolt.Outcome{Rows: [][]any{{run.path}}, Type: "s"}
	}}, nil
}

// prepareShowSnapshots is SHOW SNAPSHOTS (interpreter.cpp 6331–6375, inmemory/storage.cpp
// 4566–4607): once no snapshot of the database is being written, path, timestamp, creation_time
// (the file's modification time, %Y-%m-%dT%H:%M:%S%z) and size (GetReadableSize) of every file
// of its snapshot directory that reads as a snapshot, newest first.
func (w *World) prepareShowSnapshots(in *instance, db string, explicitTx bool) (*bolt.Prepared, *bolt.Failure) {
	if explicitTx {
		return nil, bolt.ClientError(msgMulticommand("Show schema info query"))
	}
	return &bolt.Prepared{Fields: []string{"path", "timestamp", "creation_time", "size"}, Blocking: true, Exec: func(ctx context.Context) bolt.Outcome {
		for run := in.snapshotRuns[db]; run != nil && ctx.Err() == nil; run = in.snapshotRuns[db] {
			w.waitUntil(ctx, run.endAt)
		}
		if ctx.Err() != nil {
			return failure("sim: the client hung up while SHOW SNAPSHOTS waited for a snapshot being written")
		}
		rows, err := w.snapshotRows(in, db)
		if err != nil {
			return failure(err.Error())
		}
		return bolt.Outcome{Rows: rows, Type: "r"}
	}}, nil
}

// snapshotFileInfo is one readable snapshot file of a directory.
type snapshotFileInfo struct {
	path    string
	header  snapshotHeader
	modTime time.Time
	size    int64
}

// snapshotFiles lists the files of dir that read as snapshots, newest first.
func snapshotFiles(dir string) ([]snapshotFileInfo, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []snapshotFileInfo
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		h, err := readSnapshot(path)
		info, serr := e.Info()
		if err != nil || serr != nil {
			continue
		}
		out = append(out, snapshotFileInfo{path, h, info.ModTime(), info.Size()})
	}
	slices.SortFunc(out, func(a, b snapshotFileInfo) int {
		if c := b.modTime.Compare(a.modTime); c != 0 {
			return c
		}
		return strings.Compare(b.path, a.path)
	})
	return out, nil
}

func (w *World) snapshotRows(in *instance, db string) ([][]any, error) {
	dir, err := w.snapshotDir(in, db)
	if err != nil {
		return nil, err
	}
	files, err := snapshotFiles(dir)
	if err != nil {
		return nil, err
	}
	out := [][]any{}
	for _, f := range files {
		out = append(out, []any{f.path, f.header.Timestamp, f.modTime.Format("2006-01-02T15:04:05-0700"), readableSize(f.size)})
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

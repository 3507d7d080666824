package memgraph

// Snapshot queries, sent to a data instance (Memgraph v3.12.0 src/query/interpreter.cpp
// 6171–6375): CREATE SNAPSHOT writes a snapshot of the current database into the instance's
// snapshot directory and answers one row, its path; SHOW SNAPSHOTS lists the snapshot files,
// newest first. Neither checks the replication role; the hook sends them to the MAIN.
const (
	CreateSnapshotQuery = "CREATE SNAPSHOT"
	ShowSnapshotsQuery  = "SHOW SNAPSHOTS"
)

// Snapshot is one row of SHOW SNAPSHOTS.
type Snapshot struct {
	Path string
	// Timestamp is the snapshot's durable timestamp: the commit timestamp of the last
	// transaction it holds.
	Timestamp int64
	// CreationTime is the file's time as Memgraph prints it, Size its size as Memgraph rounds it
	// for people ("1.23KiB"): the agent reports the exact size it uploaded.
	CreationTime string
	Size         string
}

// Columns of SHOW SNAPSHOTS.
const (
	colPath         = "path"
	colTimestamp    = "timestamp"
	colCreationTime = "creation_time"
	colSize         = "size"
)

// ParseCreateSnapshot reads CREATE SNAPSHOT's one row: the new snapshot's path.
func ParseCreateSnapshot(columns []string, rows [][]any) (string, error) {
	t := table{keys: columns, rows: rows}
	col, err := t.columns(colPath)
	if err != nil {
		return "", err
	}
	if len(rows) != 1 {
		return "", protocolError("CREATE SNAPSHOT answered %d rows, want 1", len(rows))
	}
	r := rowReader{row: rows[0], col: col}
	path := r.str(colPath)
	return path, r.err
}

// ParseSnapshots reads SHOW SNAPSHOTS.
func ParseSnapshots(columns []string, rows [][]any) ([]Snapshot, error) {
	t := table{keys: columns, rows: rows}
	col, err := t.columns(colPath, colTimestamp, colCreationTime, colSize)
	if err != nil {
		return nil, err
	}
	out := make([]Snapshot, 0, len(rows))
	for i, row := range rows {
		r := rowReader{row: row, index: i, col: col}
		s := Snapshot{Path: r.str(colPath), Timestamp: r.int(colTimestamp), CreationTime: r.str(colCreationTime), Size: r.str(colSize)}
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, s)
	}
	return out, nil
}

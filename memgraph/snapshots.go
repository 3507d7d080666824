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

// S3Config is RECOVER SNAPSHOT's WITH CONFIG for an s3:// URI (interpreter.cpp 6243–6258): the
// bucket's region, credentials and endpoint.
type S3Config struct {
	Region, AccessKey, SecretKey, EndpointURL string
}

// RecoverSnapshotQuery renders RECOVER SNAPSHOT of uri, without FORCE (Memgraph refuses it on a
// storage that holds data: nothing is ever overwritten), and with s3's settings as parameters
// when set: the query's text never carries a credential.
func RecoverSnapshotQuery(uri string, s3 *S3Config) (string, map[string]any) {
	query := "RECOVER SNAPSHOT " + quoteString(uri)
	if s3 == nil {
		return query, nil
	}
	return query + " WITH CONFIG {'aws_region': $aws_region, 'aws_access_key': $aws_access_key, 'aws_secret_key': $aws_secret_key, 'aws_endpoint_url': $aws_endpoint_url}",
		map[string]any{"aws_region": s3.Region, "aws_access_key": s3.AccessKey, "aws_secret_key": s3.SecretKey, "aws_endpoint_url": s3.EndpointURL}
}

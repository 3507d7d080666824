package memgraph

import (
	"context"
	"strings"
)

// Snapshot and database queries, sent to one data instance by the backup agent that runs beside
// it, never by the hook: CREATE SNAPSHOT and RECOVER SNAPSHOT take as long as the database is big,
// and SHOW SNAPSHOTS waits for a snapshot being written (Memgraph v3.12.0
// src/storage/v2/inmemory/storage.cpp 4224–4240, 4566–4567). Each runs in the database the Bolt
// session selects (RUN's "db", src/glue/SessionHL.cpp 643–690): the snapshot of one database
// is a file of its own, in that database's snapshot directory.
const (
	CreateSnapshotQuery      = "CREATE SNAPSHOT"
	ShowSnapshotsQuery       = "SHOW SNAPSHOTS"
	ShowDatabasesQuery       = "SHOW DATABASES"
	ShowReplicationRoleQuery = "SHOW REPLICATION ROLE"
)

// DefaultDatabase is the database every instance has (dbms::kDefaultDB), the one a session
// selects when it names none.
const DefaultDatabase = "memgraph"

// SnapshotClient runs the snapshot and database queries of one data instance. The database
// argument selects the session's database ("" is DefaultDatabase). Errors are *Error values.
type SnapshotClient interface {
	// ShowDatabases lists the instance's databases (an Enterprise feature: without a license
	// Memgraph refuses it with KindLicense, and the instance has DefaultDatabase alone).
	ShowDatabases(ctx context.Context) ([]Database, error)
	// CreateDatabase creates a database; one that exists is left as it is (Memgraph answers
	// "<name> already exists."). A REPLICA refuses it.
	CreateDatabase(ctx context.Context, name string) error
	// ShowReplicationRole is "main" or "replica": the role the instance holds itself.
	ShowReplicationRole(ctx context.Context) (string, error)
	// CreateSnapshot writes a snapshot of database into its snapshot directory and answers the
	// file's path once the file is complete. A snapshot of that database already being written
	// (the periodic one or another CREATE SNAPSHOT) refuses it with KindSnapshotRunning.
	CreateSnapshot(ctx context.Context, database string) (string, error)
	// ShowSnapshots lists database's snapshot files, newest first, once no snapshot of it is
	// being written.
	ShowSnapshots(ctx context.Context, database string) ([]Snapshot, error)
	// RecoverSnapshot loads the snapshot at uri into database, which must be empty (RECOVER
	// SNAPSHOT without FORCE), on a MAIN; Memgraph then recovers every registered replica from it.
	RecoverSnapshot(ctx context.Context, database, uri string, s3 *S3Config) error
}

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

// Database is one row of SHOW DATABASES: its name, HOT (in memory) or COLD (suspended to disk),
// and ready or broken (its durability files could not be recovered).
type Database struct {
	Name   string
	State  string
	Health string
}

// The values of SHOW DATABASES' State and Health a database that can be snapshotted has.
const (
	DatabaseHot   = "HOT"
	DatabaseReady = "ready"
)

// Columns of SHOW SNAPSHOTS, SHOW DATABASES and SHOW REPLICATION ROLE.
const (
	colPath            = "path"
	colTimestamp       = "timestamp"
	colCreationTime    = "creation_time"
	colSize            = "size"
	colDatabaseName    = "Name"
	colDatabaseState   = "State"
	colDatabaseHealth  = "Health"
	colReplicationRole = "replication role"
)

// ParseCreateSnapshot reads CREATE SNAPSHOT's one row: the new snapshot's path.
func ParseCreateSnapshot(columns []string, rows [][]any) (string, error) {
	return parseOneString(columns, rows, colPath, CreateSnapshotQuery)
}

// parseOneString reads a result of exactly one row, the string in column col.
func parseOneString(columns []string, rows [][]any, col, query string) (string, error) {
	t := table{keys: columns, rows: rows}
	index, err := t.columns(col)
	if err != nil {
		return "", err
	}
	if len(rows) != 1 {
		return "", protocolError("%s answered %d rows, want 1", query, len(rows))
	}
	r := rowReader{row: rows[0], col: index}
	v := r.str(col)
	return v, r.err
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

// ParseDatabases reads SHOW DATABASES (Name, State, Health in 3.12; a release without State
// or Health lists HOT, ready databases).
func ParseDatabases(columns []string, rows [][]any) ([]Database, error) {
	t := table{keys: columns, rows: rows}
	col, err := t.columns(colDatabaseName)
	if err != nil {
		return nil, err
	}
	_, hasState := col[colDatabaseState]
	_, hasHealth := col[colDatabaseHealth]
	out := make([]Database, 0, len(rows))
	for i, row := range rows {
		r := rowReader{row: row, index: i, col: col}
		d := Database{Name: r.str(colDatabaseName), State: DatabaseHot, Health: DatabaseReady}
		if hasState {
			d.State = r.str(colDatabaseState)
		}
		if hasHealth {
			d.Health = r.str(colDatabaseHealth)
		}
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, d)
	}
	return out, nil
}

// ParseReplicationRole reads SHOW REPLICATION ROLE's one row: "main" or "replica".
func ParseReplicationRole(columns []string, rows [][]any) (string, error) {
	role, err := parseOneString(columns, rows, colReplicationRole, ShowReplicationRoleQuery)
	return strings.ToLower(role), err
}

// CreateDatabaseQuery renders CREATE DATABASE of name, back-quoted when it is not a plain
// identifier.
func CreateDatabaseQuery(name string) string { return "CREATE DATABASE " + quoteName(name) }

// ValidateDatabaseName refuses a name no database can have.
func ValidateDatabaseName(name string) error {
	if name == "" || strings.ContainsRune(name, 0) || len(name) > 512 {
		return invalidArgument("database name %q: want 1-512 characters, no NUL", name)
	}
	return nil
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

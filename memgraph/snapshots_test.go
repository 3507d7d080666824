package memgraph

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSnapshots(t *testing.T) {
	cols := []string{"path", "timestamp", "creation_time", "size"}
	rows := [][]any{
		{"/var/lib/memgraph/snapshots/20261206010000000000_timestamp_42", int64(42), "2026-12-06T01:00:00+0000", "1.20KiB"},
		{"/var/lib/memgraph/snapshots/20261206000000000000_timestamp_7", int64(7), "2026-12-06T00:00:00+0000", "312B"},
	}
	got, err := ParseSnapshots(cols, rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []Snapshot{
		{Path: "/var/lib/memgraph/snapshots/20261206010000000000_timestamp_42", Timestamp: 42, CreationTime: "2026-12-06T01:00:00+0000", Size: "1.20KiB"},
		{Path: "/var/lib/memgraph/snapshots/20261206000000000000_timestamp_7", Timestamp: 7, CreationTime: "2026-12-06T00:00:00+0000", Size: "312B"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ParseSnapshots(cols, [][]any{{"/p", "42", "t", "1B"}}); KindOf(err) != KindProtocol {
		t.Errorf("a timestamp that is a string: %v, want a protocol error", err)
	}
}

func TestParseCreateSnapshot(t *testing.T) {
	path, err := ParseCreateSnapshot([]string{"path"}, [][]any{{"/var/lib/memgraph/snapshots/x_timestamp_3"}})
	if err != nil || path != "/var/lib/memgraph/snapshots/x_timestamp_3" {
		t.Errorf("got %q, %v", path, err)
	}
	if _, err := ParseCreateSnapshot([]string{"path"}, nil); KindOf(err) != KindProtocol {
		t.Errorf("no row: %v, want a protocol error", err)
	}
}

// RECOVER SNAPSHOT's text never carries the store's credentials: they are parameters.
func TestRecoverSnapshotQueryKeepsCredentialsOutOfTheText(t *testing.T) {
	query, params := RecoverSnapshotQuery("s3://backups/prod/x_timestamp_3", &S3Config{Region: "eu-west-1", AccessKey: "AKIA", SecretKey: "s3cr3t", EndpointURL: "https://s3.example.com"})
	want := "RECOVER SNAPSHOT 's3://backups/prod/x_timestamp_3' WITH CONFIG {'aws_region': $aws_region, 'aws_access_key': $aws_access_key, 'aws_secret_key': $aws_secret_key, 'aws_endpoint_url': $aws_endpoint_url}"
	if query != want {
		t.Errorf("query %q, want %q", query, want)
	}
	if diff := cmp.Diff(map[string]any{"aws_region": "eu-west-1", "aws_access_key": "AKIA", "aws_secret_key": "s3cr3t", "aws_endpoint_url": "https://s3.example.com"}, params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	if query, params := RecoverSnapshotQuery("/var/lib/memgraph/snapshots/x", nil); query != "RECOVER SNAPSHOT '/var/lib/memgraph/snapshots/x'" || params != nil {
		t.Errorf("a local path: %q %v", query, params)
	}
}

func TestParseDatabases(t *testing.T) {
	got, err := ParseDatabases([]string{"Name", "State", "Health"}, [][]any{{"memgraph", "HOT", "ready"}, {"tenant_b", "COLD", "ready"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Database{{Name: "memgraph", State: "HOT", Health: "ready"}, {Name: "tenant_b", State: "COLD", Health: "ready"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A release that lists names alone lists databases that are in memory and ready.
	got, err = ParseDatabases([]string{"Name"}, [][]any{{"memgraph"}})
	if err != nil || !cmp.Equal(got, []Database{{Name: "memgraph", State: DatabaseHot, Health: DatabaseReady}}) {
		t.Errorf("names alone: %v, %v", got, err)
	}
	if _, err := ParseDatabases([]string{"name"}, nil); KindOf(err) != KindProtocol {
		t.Errorf("no Name column: %v, want a protocol error", err)
	}
}

func TestParseReplicationRole(t *testing.T) {
	if role, err := ParseReplicationRole([]string{"replication role"}, [][]any{{"replica"}}); err != nil || role != "replica" {
		t.Errorf("got %q, %v", role, err)
	}
	if _, err := ParseReplicationRole([]string{"replication role"}, nil); KindOf(err) != KindProtocol {
		t.Errorf("no row: %v, want a protocol error", err)
	}
}

// A database is created by its name, back-quoted when it is not a plain identifier.
func TestCreateDatabaseQuery(t *testing.T) {
	for name, want := range map[string]string{"tenant_a": "CREATE DATABASE tenant_a", "sales-eu": "CREATE DATABASE `sales-eu`",
		"odd`name": "CREATE DATABASE `odd``name`", "match": "CREATE DATABASE `match`"} {
		if got := CreateDatabaseQuery(name); got != want {
			t.Errorf("CreateDatabaseQuery(%q) = %s, want %s", name, got, want)
		}
	}
	if err := ValidateDatabaseName(""); KindOf(err) != KindInvalidArgument {
		t.Errorf("an empty name: %v", err)
	}
}

// Memgraph's refusals of a snapshot that is already being written and of multi-tenancy without
// a license have kinds of their own.
func TestSnapshotRefusalsAreClassified(t *testing.T) {
	for msg, want := range map[string]Kind{
		"Another snapshot creation is already in progress":                             KindSnapshotRunning,
		"Access to multi-tenancy requires an enterprise, ai_platform, or oem license.": KindLicense,
	} {
		if got := Classify("Memgraph.TransientError.MemgraphError.MemgraphError", msg); got != want {
			t.Errorf("Classify(%q) = %v, want %v", msg, got, want)
		}
	}
}

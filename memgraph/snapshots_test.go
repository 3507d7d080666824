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

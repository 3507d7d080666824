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

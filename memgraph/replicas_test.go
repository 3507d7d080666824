package memgraph

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var replicasKeys = []string{"name", "socket_address", "sync_mode", "system_info", "data_info"}

func replicaInfo(ts, behind, status any) map[string]any {
	return map[string]any{"ts": ts, "behind": behind, "status": status}
}

// systemInfo is system_info as Memgraph v3.12.0 fills it with a license: behind is always NULL.
func systemInfo(status string) map[string]any {
	return map[string]any{"ts": int64(4), "behind": nil, "status": status}
}

func TestParseReplicas(t *testing.T) {
	rows := [][]any{
		{"instance_2", "data-1.svc:20000", "sync", systemInfo("ready"), map[string]any{
			"memgraph": replicaInfo(int64(12), int64(0), "ready"),
			"db2":      replicaInfo(int64(3), int64(2), "replicating"),
		}},
		// Without an enterprise license system_info is NULL and only the default database is listed.
		{"instance_3", "data-2.svc:20000", "async", nil, map[string]any{"memgraph": replicaInfo(int64(0), int64(12), "invalid")}},
		{"instance_4", "data-3.svc:20000", "strict_sync", systemInfo("recovery"), map[string]any{}},
	}
	got, err := ParseReplicas(replicasKeys, rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []Replica{
		{Name: "instance_2", SocketAddress: "data-1.svc:20000", SyncMode: SyncModeSync, Databases: map[string]ReplicaDatabase{
			"memgraph": {Timestamp: 12, Status: ReplicaReady},
			"db2":      {Timestamp: 3, Behind: 2, Status: ReplicaReplicating},
		}},
		{Name: "instance_3", SocketAddress: "data-2.svc:20000", SyncMode: SyncModeAsync, Databases: map[string]ReplicaDatabase{
			"memgraph": {Behind: 12, Status: ReplicaInvalid},
		}},
		{Name: "instance_4", SocketAddress: "data-3.svc:20000", SyncMode: SyncModeStrictSync, Databases: map[string]ReplicaDatabase{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	// No rows (a MAIN without replicas) is an empty answer, not an error.
	if got, err := ParseReplicas(replicasKeys, nil); err != nil || len(got) != 0 {
		t.Errorf("no rows: %v, %v", got, err)
	}
}

// Columns are read by name: any order, and extra columns (a newer Memgraph's) are ignored.
func TestParseReplicasByNameToleratesOrderAndExtras(t *testing.T) {
	keys := []string{"data_info", "extra", "sync_mode", "name", "system_info", "socket_address"}
	rows := [][]any{{map[string]any{"memgraph": replicaInfo(int64(5), int64(1), "diverged")}, int64(9), "sync", "instance_1", nil, "h:1"}}
	got, err := ParseReplicas(keys, rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []Replica{{Name: "instance_1", SocketAddress: "h:1", SyncMode: "sync",
		Databases: map[string]ReplicaDatabase{"memgraph": {Timestamp: 5, Behind: 1, Status: ReplicaDiverged}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// A replica table that cannot be read is an error, never a silent "ready" or "0 behind".
func TestParseReplicasIsStrict(t *testing.T) {
	row := func(mut func([]any)) [][]any {
		r := []any{"instance_2", "h:20000", "sync", systemInfo("ready"), map[string]any{"memgraph": replicaInfo(int64(1), int64(0), "ready")}}
		mut(r)
		return [][]any{r}
	}
	db := func(entry any) func([]any) {
		return func(r []any) { r[4] = map[string]any{"memgraph": entry} }
	}
	tests := []struct {
		name string
		t    table
		want string
	}{
		{"missing data_info column", table{keys: replicasKeys[:4]}, `no "data_info" column`},
		{"missing system_info column", table{keys: []string{"name", "socket_address", "sync_mode", "data_info"}}, `no "system_info" column`},
		{"name twice", table{append(replicasKeys[:5:5], "name"), nil}, `two "name" columns`},
		{"short row", table{replicasKeys, [][]any{{"instance_2"}}}, "row 0 has 1 values for 5 columns"},
		{"name not a string", table{replicasKeys, row(func(r []any) { r[0] = int64(2) })}, "row 0 column name is int64"},
		{"empty name", table{replicasKeys, row(func(r []any) { r[0] = "" })}, "row 0 has an empty name"},
		{"socket_address null", table{replicasKeys, row(func(r []any) { r[1] = nil })}, "column socket_address is <nil>"},
		{"sync_mode not a string", table{replicasKeys, row(func(r []any) { r[2] = true })}, "column sync_mode is bool"},
		{"system_info a string", table{replicasKeys, row(func(r []any) { r[3] = "ready" })}, "column system_info is string, want a map or null"},
		{"null data_info", table{replicasKeys, row(func(r []any) { r[4] = nil })}, "column data_info is <nil>"},
		{"database not a map", table{replicasKeys, row(db(int64(0)))}, `data_info["memgraph"] of instance_2 is int64, want a map`},
		{"missing ts", table{replicasKeys, row(db(map[string]any{"behind": int64(0), "status": "ready"}))}, "has no ts"},
		{"missing behind", table{replicasKeys, row(db(map[string]any{"ts": int64(0), "status": "ready"}))}, "has no behind"},
		{"null behind", table{replicasKeys, row(db(replicaInfo(int64(1), nil, "ready")))}, ".behind of instance_2 is <nil>, want an integer"},
		{"float ts", table{replicasKeys, row(db(replicaInfo(1.0, int64(0), "ready")))}, ".ts of instance_2 is float64, want an integer"},
		{"missing status", table{replicasKeys, row(db(map[string]any{"ts": int64(0), "behind": int64(0)}))}, ".status of instance_2 is <nil>, want a string"},
		{"status not a string", table{replicasKeys, row(db(replicaInfo(int64(1), int64(0), int64(0))))}, ".status of instance_2 is int64, want a string"},
	}
	for _, tc := range tests {
		got, err := parseReplicas(tc.t)
		if KindOf(err) != KindProtocol || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, %v; want KindProtocol containing %q", tc.name, got, err, tc.want)
		}
	}
}

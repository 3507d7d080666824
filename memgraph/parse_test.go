package memgraph

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var showInstancesKeys = []string{"name", "bolt_server", "coordinator_server", "management_server", "health", "role", "last_succ_resp_ms"}

func TestParseInstances(t *testing.T) {
	// A healthy 3+3 leader table (Memgraph v3.12.0 ShowInstancesAsLeader) plus a dead data instance.
	rows := [][]any{
		{"coordinator_1", "localhost:7690", "localhost:10111", "localhost:10121", "up", "follower", int64(16)},
		{"coordinator_2", "", "localhost:10112", "localhost:10122", "up", "leader", int64(0)},
		{"instance_1", "localhost:7687", "", "localhost:10011", "up", "replica", int64(120)},
		{"instance_3", "localhost:7689", "", "localhost:10013", "down", "unknown", int64(7000)},
	}
	got, err := parseInstances(table{keys: showInstancesKeys, rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	want := []Instance{
		{"coordinator_1", "localhost:7690", "localhost:10111", "localhost:10121", HealthUp, RoleFollower, 16},
		{"coordinator_2", "", "localhost:10112", "localhost:10122", HealthUp, RoleLeader, 0},
		{"instance_1", "localhost:7687", "", "localhost:10011", HealthUp, RoleReplica, 120},
		{"instance_3", "localhost:7689", "", "localhost:10013", HealthDown, RoleUnknown, 7000},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if !got[0].IsCoordinator() || got[2].IsCoordinator() {
		t.Error("IsCoordinator must follow coordinator_server")
	}
}

func TestParseInstancesByNameToleratesOrderAndExtras(t *testing.T) {
	keys := []string{"role", "extra", "last_succ_resp_ms", "name", "health", "management_server", "coordinator_server", "bolt_server"}
	rows := [][]any{{"main", []any{"x"}, int64(5), "instance_2", "up", "m:1", "", "b:1"}}
	got, err := parseInstances(table{keys: keys, rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	want := []Instance{{Name: "instance_2", BoltServer: "b:1", ManagementServer: "m:1", Health: "up", Role: "main", LastSuccRespMs: 5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if got, err := parseInstances(table{keys: showInstancesKeys}); err != nil || len(got) != 0 {
		t.Errorf("empty result: %v, %v", got, err)
	}
}

func TestParseInstancesRejects(t *testing.T) {
	row := func(mut func([]any)) [][]any {
		r := []any{"instance_1", "b:1", "", "m:1", "up", "replica", int64(0)}
		mut(r)
		return [][]any{r}
	}
	tests := []struct {
		name string
		t    table
		want string
	}{
		{"missing role column", table{keys: showInstancesKeys[:5], rows: nil}, `no "role" column`},
		{"missing last_succ_resp_ms", table{keys: showInstancesKeys[:6]}, `no "last_succ_resp_ms" column`},
		{"name not a string", table{showInstancesKeys, row(func(r []any) { r[0] = int64(1) })}, "column name is int64"},
		{"health null", table{showInstancesKeys, row(func(r []any) { r[4] = nil })}, "column health is <nil>"},
		{"ms not an integer", table{showInstancesKeys, row(func(r []any) { r[6] = "5" })}, "column last_succ_resp_ms is string"},
		{"ms float", table{showInstancesKeys, row(func(r []any) { r[6] = 1.5 })}, "column last_succ_resp_ms is float64"},
		{"empty name", table{showInstancesKeys, row(func(r []any) { r[0] = "" })}, "empty name"},
		{"short row", table{showInstancesKeys, [][]any{{"a"}}}, "1 values for 7 columns"},
		{"role twice", table{append(showInstancesKeys[:7:7], "role"), row(func(r []any) {})}, `two "role" columns`},
	}
	for _, tc := range tests {
		_, err := parseInstances(tc.t)
		if KindOf(err) != KindProtocol || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want KindProtocol containing %q", tc.name, err, tc.want)
		}
	}
}

var lagKeys = []string{"instance_name", "data_info"}

func lagInfo(committed, behind any) map[string]any {
	return map[string]any{"num_committed_txns": committed, "num_txns_behind_main": behind}
}

func TestParseReplicationLag(t *testing.T) {
	rows := [][]any{
		{"instance_1", map[string]any{"memgraph": lagInfo(int64(3), int64(0))}},
		{"instance_2", map[string]any{"memgraph": lagInfo(int64(1), int64(2)), "other": lagInfo(int64(7), int64(0))}},
	}
	got, err := parseReplicationLag(table{keys: lagKeys, rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	want := []InstanceLag{
		{Instance: "instance_1", Databases: map[string]DatabaseLag{"memgraph": {CommittedTxns: 3}}},
		{Instance: "instance_2", Databases: map[string]DatabaseLag{
			"memgraph": {CommittedTxns: 1, TxnsBehindMain: 2},
			"other":    {CommittedTxns: 7},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	// No rows (no current MAIN) is an empty answer, not an error.
	if got, err := parseReplicationLag(table{keys: lagKeys}); err != nil || len(got) != 0 {
		t.Errorf("no rows: %v, %v", got, err)
	}
}

// A lag table that cannot be read is an error, never a silent "0 behind".
func TestParseReplicationLagIsStrict(t *testing.T) {
	tests := []struct {
		name string
		t    table
		want string
	}{
		{"missing data_info column", table{keys: []string{"instance_name"}}, `no "data_info" column`},
		{"missing instance_name column", table{keys: []string{"data_info"}}, `no "instance_name" column`},
		{"missing behind counter", table{lagKeys, [][]any{{"i1", map[string]any{"memgraph": map[string]any{"num_committed_txns": int64(3)}}}}}, "no num_txns_behind_main"},
		{"missing committed counter", table{lagKeys, [][]any{{"i1", map[string]any{"memgraph": map[string]any{"num_txns_behind_main": int64(0)}}}}}, "no num_committed_txns"},
		{"null counter", table{lagKeys, [][]any{{"i1", map[string]any{"memgraph": lagInfo(int64(1), nil)}}}}, "is <nil>, want an integer"},
		{"string counter", table{lagKeys, [][]any{{"i1", map[string]any{"memgraph": lagInfo("1", int64(0))}}}}, "is string, want an integer"},
		{"float counter", table{lagKeys, [][]any{{"i1", map[string]any{"memgraph": lagInfo(int64(1), 0.0)}}}}, "is float64, want an integer"},
		{"database not a map", table{lagKeys, [][]any{{"i1", map[string]any{"memgraph": int64(0)}}}}, "want a map"},
		{"empty data_info", table{lagKeys, [][]any{{"i1", map[string]any{}}}}, "no databases"},
		{"null data_info", table{lagKeys, [][]any{{"i1", nil}}}, "column data_info is <nil>"},
		{"empty instance name", table{lagKeys, [][]any{{"", map[string]any{"memgraph": lagInfo(int64(1), int64(0))}}}}, "empty instance_name"},
	}
	for _, tc := range tests {
		got, err := parseReplicationLag(tc.t)
		if KindOf(err) != KindProtocol || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, %v; want KindProtocol containing %q", tc.name, got, err, tc.want)
		}
	}
}

package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCoordinatorQueries(t *testing.T) {
	cases := []struct {
		src  string
		want statement
	}{
		{"show instances;", statement{kind: stShowInstances}},
		{"  Show   Instance  ", statement{kind: stShowInstance}},
		{"SHOW COORDINATOR SETTINGS", statement{kind: stShowCoordinatorSettings}},
		{"show replication lag ;", statement{kind: stShowReplicationLag}},
		{"unregister instance instance_2", statement{kind: stUnregisterInstance, name: "instance_2"}},
		{"DEMOTE INSTANCE `odd name`", statement{kind: stDemoteInstance, name: "odd name"}},
		{"SET INSTANCE `a``b` TO MAIN", statement{kind: stSetInstanceToMain, name: "a`b"}},
		{"set instance main to main", statement{kind: stSetInstanceToMain, name: "main"}},
		{"REMOVE COORDINATOR 3", statement{kind: stRemoveCoordinator, id: int64(3)}},
		{"YIELD LEADERSHIP", statement{kind: stYieldLeadership}},
		{"force reset cluster state", statement{kind: stForceReset}},
		{`SET COORDINATOR SETTING 'a' TO "b"`, statement{kind: stSetCoordinatorSetting, settingName: "a", settingValue: "b"}},
		{`REGISTER INSTANCE i AS ASYNC WITH CONFIG {'bolt_server': 'h\'x:1', "management_server": $m, "replication_server": "r\u0041:3"}`,
			statement{kind: stRegisterInstance, name: "i", mode: "async", config: []configEntry{
				{"bolt_server", "h'x:1"}, {"management_server", paramRef("m")}, {"replication_server", "rA:3"}}}},
		{"REGISTER INSTANCE i as strict_sync with config {}", statement{kind: stRegisterInstance, name: "i", mode: "strict_sync"}},
		{`ADD COORDINATOR 2 WITH CONFIG {"bolt_server": "b:1", "coordinator_server": "c:2", "management_server": "m:3"} // comment`,
			statement{kind: stAddCoordinator, id: int64(2), config: []configEntry{{"bolt_server", "b:1"}, {"coordinator_server", "c:2"}, {"management_server", "m:3"}}}},
		{"UPDATE CONFIG FOR COORDINATOR 1 {'bolt_server': 'x:1'}", statement{kind: stUpdateConfigCoordinator, id: int64(1), config: []configEntry{{"bolt_server", "x:1"}}}},
		{"UPDATE /* c */ CONFIG FOR INSTANCE i {'bolt_server': 'x:1'}", statement{kind: stUpdateConfigInstance, name: "i", config: []configEntry{{"bolt_server", "x:1"}}}},
		{"MATCH (n) SET n.x = 1", statement{kind: stOther, write: true, clauses: privilegeSet("MATCH", "SET")}},
		{"RETURN 1", statement{kind: stOther}},
		{"SHOW REPLICATION ROLE", statement{kind: stShowReplicationRole}},
	}
	for _, tc := range cases {
		got, err := parseQuery(tc.src)
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if d := cmp.Diff(tc.want, *got, cmp.AllowUnexported(statement{}, configEntry{})); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.src, d)
		}
	}
}

func TestParseRejectsMalformedQueries(t *testing.T) {
	for _, src := range []string{
		"SHOW INSTANCES now",
		"REGISTER INSTANCE i WITH CONFIG {bolt_server: 'x'}", // keys must be literals
		"REGISTER INSTANCE i AS SYNC WITH CONFIG {}",         // there is no AS SYNC
		"REGISTER INSTANCE 'i' WITH CONFIG {}",               // names are symbolic, not strings
		"ADD COORDINATOR $id WITH CONFIG {}",
		"SET INSTANCE i TO REPLICA",
		"DEMOTE INSTANCE i 'x'",
		"REGISTER INSTANCE i WITH CONFIG {'a': 'unterminated}",
		`SET COORDINATOR SETTING 'a' TO 'bad \q escape'`,
		"REMOVE COORDINATOR -1",
	} {
		if st, err := parseQuery(src); err == nil {
			t.Errorf("%s parsed as %+v", src, st)
		}
	}
}

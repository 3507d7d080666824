package sim

import (
	"context"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

const (
	codeClient    = "Memgraph.ClientError.MemgraphError.MemgraphError"
	codeTransient = "Memgraph.TransientError.MemgraphError.MemgraphError"
)

// refusal pins one Memgraph text, its code and the Bolt reply that carries it (§3, §3.10).
type refusal struct {
	name  string
	setup func(t *testing.T, w *World) // after setupCluster(3 coordinators, 3 data, instance_1 MAIN)
	to    string                       // Bolt address the query is sent to
	query string
	msg   string
	code  string
	phase string
}

func TestRefusalsCarryMemgraphTextAndPhase(t *testing.T) {
	dup := `REGISTER INSTANCE instance_1 WITH CONFIG {"bolt_server": "x:1", "management_server": "x:2", "replication_server": "x:3"}`
	cases := []refusal{
		{name: "non-coordinator query on a coordinator", to: coordBolt(1), query: "CREATE (n)", msg: msgCoordinatorOnly, phase: "RUN"},
		{name: "replication role on a coordinator", to: coordBolt(2), query: "SHOW REPLICATION ROLE", msg: msgCoordinatorOnly, phase: "RUN"},
		{name: "syntax error", to: coordBolt(1), query: "SHOW INSTANCES EXTRA", msg: "line 1:15 mismatched input 'EXTRA' expecting <EOF>", phase: "RUN"},
		{name: "register: exactly 3 entries", to: coordBolt(1), query: `REGISTER INSTANCE i WITH CONFIG {"bolt_server": "a:1", "management_server": "a:2"}`, msg: msgRegisterExactly3, phase: "RUN"},
		{name: "register: replication_server missing", to: coordBolt(1), query: `REGISTER INSTANCE i WITH CONFIG {"bolt_server": "a:1", "management_server": "a:2", "replication": "a:3"}`, msg: "Config map must contain replication_server entry!", phase: "RUN"},
		{name: "register: non-string value", to: coordBolt(1), query: `REGISTER INSTANCE i WITH CONFIG {"bolt_server": 1, "management_server": "a:2", "replication_server": "a:3"}`, msg: msgFailedConfigMap, phase: "RUN"},
		{name: "register: duplicate name on leader", to: coordBolt(1), query: dup, msg: msgNameExists, phase: "PULL"},
		{name: "register: duplicate name forwarded", to: coordBolt(3), query: dup, msg: msgForwardFailed, phase: "PULL"},
		{name: "register: duplicate management server", to: coordBolt(1), query: `REGISTER INSTANCE i9 WITH CONFIG {"bolt_server": "x:1", "management_server": "data-2.mg.svc:10000", "replication_server": "x:3"}`, msg: msgMgmtExists, phase: "PULL"},
		{name: "register: duplicate replication server", to: coordBolt(1), query: `REGISTER INSTANCE i9 WITH CONFIG {"bolt_server": "x:1", "management_server": "x:2", "replication_server": "data-2.mg.svc:20000"}`, msg: msgReplExists, phase: "PULL"},
		{name: "register: SYNC and STRICT_SYNC mix", to: coordBolt(1), query: `REGISTER INSTANCE i9 AS STRICT_SYNC WITH CONFIG {"bolt_server": "x:1", "management_server": "x:2", "replication_server": "x:3"}`, msg: msgModeMix, phase: "PULL"},
		{name: "register: bad bolt address", to: coordBolt(2), query: `REGISTER INSTANCE i9 WITH CONFIG {"bolt_server": "x:1:2", "management_server": "x:2", "replication_server": "x:3"}`, msg: msgInvalidAddress("bolt"), phase: "PULL"},
		{name: "second main", to: coordBolt(1), query: "SET INSTANCE instance_2 TO MAIN", msg: msgMainExists, phase: "PULL"},
		{name: "second main forwarded", to: coordBolt(2), query: "SET INSTANCE instance_2 TO MAIN", msg: msgForwardFailed, phase: "PULL"},
		{name: "second main while the main is down", setup: kill("data-1.mg.svc", "data-2.mg.svc", "data-3.mg.svc"), to: coordBolt(1), query: "SET INSTANCE instance_2 TO MAIN", msg: msgMainExists, phase: "PULL"},
		{name: "set main: unknown instance", setup: demote1, to: coordBolt(1), query: "SET INSTANCE nobody TO MAIN", msg: msgNoSuchInstance, phase: "PULL"},
		{name: "demote a replica", to: coordBolt(1), query: "DEMOTE INSTANCE instance_2", msg: "Instance instance_2 is already a replica!", phase: "PULL"},
		{name: "demote unknown", to: coordBolt(1), query: "DEMOTE INSTANCE `nobody`", msg: msgNoSuchInstance, phase: "PULL"},
		{name: "unregister the alive main", to: coordBolt(1), query: "UNREGISTER INSTANCE instance_1", msg: msgAliveMain, phase: "PULL"},
		{name: "unregister unknown", to: coordBolt(1), query: "unregister instance nobody", msg: msgNoSuchInstance, phase: "PULL"},
		{name: "add: id exists", to: coordBolt(1), query: addQuery(2), msg: msgCoordIDExists, phase: "PULL"},
		{name: "add: self twice", to: coordBolt(1), query: addQuery(1), msg: msgCoordIDExists, phase: "PULL"},
		{name: "add: exactly 3 entries", to: coordBolt(1), query: `ADD COORDINATOR 4 WITH CONFIG {"bolt_server": "a:1"}`, msg: msgAddExactly3, phase: "RUN"},
		{name: "add: coordinator_server missing", to: coordBolt(1), query: `ADD COORDINATOR 4 WITH CONFIG {"bolt_server": "a:1", "management_server": "a:2", "raft": "a:3"}`, msg: "Config map must contain coordinator_server entry!", phase: "RUN"},
		{name: "add: target not running", to: coordBolt(1), query: `ADD COORDINATOR 4 WITH CONFIG {"bolt_server": "c4:7687", "coordinator_server": "c4:12000", "management_server": "c4:10000"}`, msg: "Request for adding coordinator 4 reached a timeout!", phase: "PULL"},
		{name: "add: management endpoint taken", to: coordBolt(1), query: `ADD COORDINATOR 4 WITH CONFIG {"bolt_server": "c4:7687", "coordinator_server": "c4:12000", "management_server": "coord-2.mg.svc:10000"}`, msg: msgCoordMgmtExists, phase: "PULL"},
		{name: "remove the leader", to: coordBolt(1), query: "REMOVE COORDINATOR 1", msg: "Request for removing coordinator 1 failed because the current leader cannot be removed!", phase: "PULL"},
		{name: "remove the leader forwarded", to: coordBolt(2), query: "REMOVE COORDINATOR 1", msg: msgForwardFailed, phase: "PULL"},
		{name: "remove unknown", to: coordBolt(1), query: "REMOVE COORDINATOR 9", msg: "Couldn't remove coordinator instance because coordinator with id 9 doesn't exist!", phase: "PULL"},
		{name: "update config: exactly 1 entry", to: coordBolt(1), query: `UPDATE CONFIG FOR INSTANCE instance_1 {"bolt_server": "a:1", "management_server": "a:2"}`, msg: msgUpdateExactly1, phase: "RUN"},
		{name: "update config: unknown instance", to: coordBolt(1), query: `UPDATE CONFIG FOR INSTANCE nobody {'bolt_server': 'a:1'}`, msg: "Couldn't update config for the repl instance nobody because it doesn't exist!", phase: "PULL"},
		{name: "update config: unknown coordinator", to: coordBolt(1), query: `UPDATE CONFIG FOR COORDINATOR 7 {'bolt_server': 'a:1'}`, msg: "Couldn't update config for the coordinator 7 because it doesn't exist!", phase: "PULL"},
		{name: "yield on a follower", to: coordBolt(2), query: "YIELD LEADERSHIP", msg: msgOnlyLeaderYields, phase: "PULL"},
		{name: "setting name not a string", to: coordBolt(1), query: "SET COORDINATOR SETTING 1 TO 'x'", msg: msgSettingNameLiteral, code: codeTransient, phase: "RUN"},
		{name: "setting value not a string", to: coordBolt(1), query: "SET COORDINATOR SETTING 'global_read_only' TO true", msg: msgSettingValueLiteral, code: codeTransient, phase: "RUN"},
		{name: "unknown setting", to: coordBolt(1), query: "SET COORDINATOR SETTING 'nope' TO 'x'", msg: "Setting nope doesn't exist on coordinators.", phase: "PULL"},
		{name: "invalid setting value", to: coordBolt(1), query: "SET COORDINATOR SETTING 'instance_down_timeout_sec' TO 'soon'", msg: "Invalid argument detected while trying to update setting instance_down_timeout_sec", phase: "PULL"},
		{name: "setting on a follower", to: coordBolt(2), query: "SET COORDINATOR SETTING 'global_read_only' TO 'true'", msg: msgRaftWriteFailed, phase: "PULL"},
		{name: "no leader to forward to", setup: kill("coord-1.mg.svc", "coord-2.mg.svc"), to: coordBolt(3), query: registerQuery(9), msg: msgNoLeader, phase: "PULL"},
	}
	for kind, msg := range onlyCoordinator {
		q := map[stmtKind]string{
			stShowInstances: "SHOW INSTANCES", stShowInstance: "SHOW INSTANCE", stRegisterInstance: registerQuery(9),
			stSetInstanceToMain: "SET INSTANCE instance_1 TO MAIN", stUnregisterInstance: "UNREGISTER INSTANCE instance_1",
			stDemoteInstance: "DEMOTE INSTANCE instance_1", stAddCoordinator: addQuery(4), stRemoveCoordinator: "REMOVE COORDINATOR 2",
			stForceReset: "FORCE RESET CLUSTER STATE", stUpdateConfigInstance: "UPDATE CONFIG FOR INSTANCE instance_1 {'bolt_server': 'a:1'}",
			stUpdateConfigCoordinator: "UPDATE CONFIG FOR COORDINATOR 1 {'bolt_server': 'a:1'}", stYieldLeadership: "YIELD LEADERSHIP",
			stSetCoordinatorSetting: "SET COORDINATOR SETTING 'global_read_only' TO 'true'", stShowCoordinatorSettings: "SHOW COORDINATOR SETTINGS",
			stShowReplicationLag: "SHOW REPLICATION LAG",
		}[kind]
		cases = append(cases, refusal{name: "data instance: " + q, to: dataBolt(2), query: q, msg: msg, phase: "RUN"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := setupCluster(t, 3, 3)
			if tc.setup != nil {
				tc.setup(t, w)
			}
			before := w.Raft()
			out := dial(t, w, tc.to).run(tc.query, nil)
			if out.err == nil {
				t.Fatalf("%s succeeded with %v", tc.query, out.rows)
			}
			code := tc.code
			if code == "" {
				code = codeClient
			}
			if out.err.Msg != tc.msg || out.err.Code != code || out.phase != tc.phase {
				t.Fatalf("got %s %q on %s\nwant %s %q on %s", out.err.Code, out.err.Msg, out.phase, code, tc.msg, tc.phase)
			}
			if tc.msg != msgRaftWriteFailed && tc.msg != msgNoLeader {
				assertSameRaft(t, before, w.Raft())
			}
			log := w.QueryLog(hostOf(tc.to))
			if last := log[len(log)-1]; !last.Failed || last.Message != tc.msg || last.Phase != tc.phase {
				t.Fatalf("query log entry %+v", last)
			}
		})
	}
}

func kill(hosts ...string) func(*testing.T, *World) {
	return func(t *testing.T, w *World) {
		for _, h := range hosts {
			if err := w.Kill(h); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func demote1(t *testing.T, w *World) {
	dial(t, w, coordBolt(1)).must("DEMOTE INSTANCE instance_1")
}

func assertSameRaft(t *testing.T, before, after RaftSnapshot) {
	t.Helper()
	b, a := before.Clusters[0], after.Clusters[0]
	if b.Main != a.Main || b.Leader != a.Leader || len(b.Members) != len(a.Members) || len(b.Data) != len(a.Data) {
		t.Fatalf("a refused query changed Raft state:\nbefore %+v\nafter  %+v", b, a)
	}
}

func TestExplicitTransactionRefusesCoordinatorQueries(t *testing.T) {
	w, _ := setupCluster(t, 1, 1)
	drv := dial(t, w, coordBolt(1)).drv
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	s := drv.NewSession(ctx, neo4j.SessionConfig{})
	defer s.Close(ctx)
	tx, err := s.BeginTransaction(ctx)
	if err != nil {
		t.Fatalf("BEGIN is accepted on a coordinator: %v", err)
	}
	_, err = tx.Run(ctx, "SHOW INSTANCES", nil)
	if ne := asNeo4j(t, err); ne.Msg != msgExplicitTx {
		t.Fatalf("tx.Run: %q", ne.Msg)
	}
	_ = tx.Rollback(ctx)

	_, err = neo4j.ExecuteQuery(ctx, drv, "SHOW INSTANCES", nil, neo4j.EagerResultTransformer)
	if ne := asNeo4j(t, err); ne.Msg != msgExplicitTx {
		t.Fatalf("ExecuteQuery: %q", ne.Msg)
	}
	misuses := w.Misuses()
	if len(misuses) != 2 || misuses[0].Kind != MisuseQueryInTransaction || misuses[0].Host != "coord-1.mg.svc" || misuses[0].Query != "SHOW INSTANCES" {
		t.Fatalf("misuses: %+v", misuses)
	}
	// The connection is usable after the refusal (FAILURE → IGNORED → RESET).
	if out := dial(t, w, coordBolt(1)).must("SHOW INSTANCES"); len(out.rows) != 2 {
		t.Fatalf("rows after refusal: %v", out.rows)
	}
}

func TestMisusesAreRecordedWithHostAndQuery(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	c2 := dial(t, w, coordBolt(2))
	c2.run("SET INSTANCE instance_2 TO MAIN", nil)
	c1.run("UNREGISTER INSTANCE instance_1", nil)
	c2.run("REMOVE COORDINATOR 1", nil)
	var kinds []MisuseKind
	for _, m := range w.Misuses() {
		kinds = append(kinds, m.Kind)
		if m.Description == "" || m.Query == "" {
			t.Fatalf("incomplete misuse %+v", m)
		}
	}
	want := []MisuseKind{MisuseSecondMain, MisuseUnregisterAliveMain, MisuseRemoveLeader}
	if len(kinds) != len(want) {
		t.Fatalf("misuses %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("misuses %v, want %v", kinds, want)
		}
	}
	if m := w.Misuses()[0]; m.Host != "coord-2.mg.svc" {
		t.Fatalf("misuse host is where the client sent it: %+v", m)
	}
}

func TestSelfAddWithWrongAddressIsRefusedAndRecorded(t *testing.T) {
	w := startWorld(t, 1, 0)
	q := `ADD COORDINATOR 1 WITH CONFIG {"bolt_server": "coord-1.mg.svc:7687", "coordinator_server": "coord-1:12000", "management_server": "coord-1.mg.svc:10000"}`
	out := dial(t, w, coordBolt(1)).run(q, nil)
	want := "Request for adding coordinator 1 failed because the coordinator was started with different network configuration. Check logs for more details."
	if out.err == nil || out.err.Msg != want || out.phase != "PULL" {
		t.Fatalf("got %+v", out)
	}
	m := w.Misuses()
	if len(m) != 1 || m[0].Kind != MisuseSelfAddWrongAddress || m[0].Query != q {
		t.Fatalf("misuses %+v", m)
	}
	if w.Raft().Clusters[0].Members[0].Added {
		t.Fatal("refused self-add marked the coordinator added")
	}
}

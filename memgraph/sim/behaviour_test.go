package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFollowerForwardsWritesAndReportsNotifications(t *testing.T) {
	w, _ := setupCluster(t, 3, 3)
	if err := w.StartData(dataSpec(4)); err != nil {
		t.Fatal(err)
	}
	c3 := dial(t, w, coordBolt(3))
	out := c3.must(registerQuery(4))
	if want := []string{"Coordinator has registered replication instance on data-4.mg.svc:7687 for instance instance_4."}; !cmp.Equal(out.notes, want) {
		t.Fatalf("notifications %q", out.notes)
	}
	if len(out.keys) != 0 || len(out.rows) != 0 {
		t.Fatalf("write returned keys %v rows %v", out.keys, out.rows)
	}
	snap := w.Raft().Clusters[0]
	if got := snap.Data[3]; got.Name != "instance_4" || got.Role != "replica" || got.Health != "up" {
		t.Fatalf("registered through a follower: %+v", got)
	}
	if out := c3.must("SHOW REPLICATION LAG"); len(out.rows) != 4 {
		t.Fatalf("lag rows through a follower: %v", out.rows)
	}
}

func TestAddCoordinatorFromFollowerAndRegistrationOrderIsFree(t *testing.T) {
	w := startWorld(t, 3, 1)
	c1 := dial(t, w, coordBolt(1))
	c1.must(registerQuery(1)) // before any ADD COORDINATOR
	c1.must(addQuery(1))
	c1.must(addQuery(2))
	dial(t, w, coordBolt(2)).must(addQuery(3)) // forwarded to coordinator 1
	snap := w.Raft()
	if len(snap.Clusters) != 1 || len(snap.Clusters[0].Members) != 3 || snap.Clusters[0].Leader != 1 {
		t.Fatalf("raft %+v", snap)
	}
	got := dial(t, w, coordBolt(3)).must("SHOW INSTANCE").rows
	want := []map[string]any{{"name": "coordinator_3", "bolt_server": "coord-3.mg.svc:7687", "coordinator_server": "coord-3.mg.svc:12000", "management_server": "coord-3.mg.svc:10000", "role": "follower"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("SHOW INSTANCE (-want +got):\n%s", d)
	}
}

func TestFailoverPicksMostUpToDateSyncReplicaAndOldMainReturnsAsReplica(t *testing.T) {
	w, c1 := setupCluster(t, 3, 4)
	c1.must(`REGISTER INSTANCE instance_5 AS ASYNC WITH CONFIG {"bolt_server": "data-5.mg.svc:7687", "management_server": "data-5.mg.svc:10000", "replication_server": "data-5.mg.svc:20000"}`)
	if err := w.StartData(dataSpec(5)); err != nil {
		t.Fatal(err)
	}
	must(t, w.Commit("memgraph", 10))
	must(t, w.SetLag("data-2.mg.svc", "memgraph", 3))
	must(t, w.SetLag("data-3.mg.svc", "memgraph", 1))
	must(t, w.SetLag("data-4.mg.svc", "memgraph", 1))
	must(t, w.Kill("data-1.mg.svc"))
	advance(t, w, 5*time.Second) // instance_down_timeout_sec: the leader sees the MAIN down, fails over
	// instance_5 is ASYNC (excluded by sync_failover_only) though fully caught up; instance_3 and
	// instance_4 tie at 9, the smaller name wins.
	if main := w.Raft().Clusters[0].Main; main != "instance_3" {
		t.Fatalf("new main %q", main)
	}
	rows := table(c1.must("SHOW INSTANCES").rows)
	if rows[3] != [6]string{"instance_1", "data-1.mg.svc:7687", "", "data-1.mg.svc:10000", "down", "unknown"} || rows[5][5] != "main" {
		t.Fatalf("after failover %v", rows)
	}
	must(t, w.Restart("data-1.mg.svc"))
	if got := table(c1.must("SHOW INSTANCES").rows)[3]; got[4] != "up" || got[5] != "replica" {
		t.Fatalf("old main back as %v", got)
	}
	if got := dial(t, w, dataBolt(1)).must("SHOW REPLICATION ROLE").rows; got[0]["replication role"] != "replica" {
		t.Fatalf("old main's own role %v", got)
	}
}

func TestMainBackAsMainWhenFailoverHadNoCandidate(t *testing.T) {
	w, c1 := setupCluster(t, 1, 2)
	must(t, w.Kill("data-2.mg.svc"))
	must(t, w.Kill("data-1.mg.svc"))
	if main := w.Raft().Clusters[0].Main; main != "instance_1" {
		t.Fatalf("main %q", main)
	}
	// A dead main can be unregistered; here we bring it back instead.
	must(t, w.Restart("data-1.mg.svc"))
	if got := table(c1.must("SHOW INSTANCES").rows)[1]; got[4] != "up" || got[5] != "main" {
		t.Fatalf("main back as %v", got)
	}
	c1.must("UNREGISTER INSTANCE instance_2") // a dead replica
	must(t, w.Kill("data-1.mg.svc"))
	advance(t, w, 5*time.Second)              // until the leader sees it down
	c1.must("UNREGISTER INSTANCE instance_1") // a dead main
	if snap := w.Raft().Clusters[0]; snap.Main != "" || len(snap.Data) != 0 {
		t.Fatalf("after unregistering %+v", snap)
	}
}

func TestLeaderDeathElectsLowestAliveAndFollowerViewWithoutQuorum(t *testing.T) {
	w, _ := setupCluster(t, 3, 1)
	must(t, w.Kill("coord-1.mg.svc"))
	if id, ok := w.Leader(); !ok || id != 2 {
		t.Fatalf("leader %d %v", id, ok)
	}
	advance(t, w, 5*time.Second) // until the new leader sees coordinator_1 down
	c3 := dial(t, w, coordBolt(3))
	rows := table(c3.must("SHOW INSTANCES").rows)
	if rows[0][4] != "down" || rows[1][5] != "leader" {
		t.Fatalf("after leader death %v", rows)
	}
	must(t, w.Kill("coord-2.mg.svc"))
	if _, ok := w.Leader(); ok {
		t.Fatal("leader without majority")
	}
	want := [][6]string{
		{"coordinator_1", "coord-1.mg.svc:7687", "coord-1.mg.svc:12000", "coord-1.mg.svc:10000", "unknown", "follower"},
		{"coordinator_2", "coord-2.mg.svc:7687", "coord-2.mg.svc:12000", "coord-2.mg.svc:10000", "unknown", "follower"},
		{"coordinator_3", "coord-3.mg.svc:7687", "coord-3.mg.svc:12000", "coord-3.mg.svc:10000", "unknown", "follower"},
		{"instance_1", "data-1.mg.svc:7687", "", "data-1.mg.svc:10000", "unknown", "main"},
	}
	if d := cmp.Diff(want, table(c3.must("SHOW INSTANCES").rows)); d != "" {
		t.Fatalf("follower view (-want +got):\n%s", d)
	}
	if out := c3.must("SHOW REPLICATION LAG"); len(out.rows) != 0 {
		t.Fatalf("lag without leader %v", out.rows)
	}
	must(t, w.Restart("coord-1.mg.svc"))
	if id, ok := w.Leader(); !ok || id != 1 {
		t.Fatalf("leader after majority returns %d %v", id, ok)
	}
}

func TestQuorumLossFailsTheWriteThenLeaderIsGone(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	must(t, w.Kill("coord-2.mg.svc"))
	must(t, w.Kill("coord-3.mg.svc"))
	out := c1.run("DEMOTE INSTANCE instance_1", nil)
	if out.err == nil || out.err.Msg != msgRaftWriteFailed || out.phase != "PULL" {
		t.Fatalf("first write without quorum: %+v", out)
	}
	advance(t, w, LeadershipExpiry)
	out = c1.run("DEMOTE INSTANCE instance_1", nil)
	if out.err == nil || out.err.Msg != msgNoLeader {
		t.Fatalf("second write: %+v", out)
	}
	if main := w.Raft().Clusters[0].Main; main != "instance_1" {
		t.Fatalf("failed write changed main to %q", main)
	}
}

func TestYieldLeadershipHandsToNextAliveCyclically(t *testing.T) {
	w, c1 := setupCluster(t, 3, 1)
	out := c1.must("YIELD LEADERSHIP")
	if len(out.notes) != 1 || out.notes[0] != "The coordinator has tried to yield the current leadership." {
		t.Fatalf("notes %q", out.notes)
	}
	if id, _ := w.Leader(); id != 2 {
		t.Fatalf("after yield from 1: %d", id)
	}
	must(t, w.ForceLeader(3))
	dial(t, w, coordBolt(3)).must("YIELD LEADERSHIP")
	if id, _ := w.Leader(); id != 1 {
		t.Fatalf("after yield from 3: %d", id)
	}
	if err := w.ForceLeader(9); err == nil {
		t.Fatal("ForceLeader of an unknown id succeeded")
	}
}

func TestYieldChooserOption(t *testing.T) {
	var seen []int
	w, c1 := setupCluster(t, 3, 0, WithYieldChooser(func(leader int, alive []int) int {
		seen = append(seen, alive...)
		return alive[len(alive)-1]
	}))
	c1.must("YIELD LEADERSHIP")
	if id, _ := w.Leader(); id != 3 || !cmp.Equal(seen, []int{2, 3}) {
		t.Fatalf("leader %d, chooser saw %v", id, seen)
	}
}

func TestWipedCoordinatorLeadsItselfAndOldClusterListsItDown(t *testing.T) {
	w, c1 := setupCluster(t, 3, 1)
	must(t, w.Wipe("coord-3.mg.svc"))
	advance(t, w, 5*time.Second)
	got := table(dial(t, w, coordBolt(3)).must("SHOW INSTANCES").rows)
	if len(got) != 1 || got[0] != [6]string{"coordinator_3", "", "coord-3.mg.svc:12000", "coord-3.mg.svc:10000", "up", "leader"} {
		t.Fatalf("wiped coordinator %v", got)
	}
	if row := table(c1.must("SHOW INSTANCES").rows)[2]; row[4] != "down" {
		t.Fatalf("old cluster sees %v", row)
	}
	// Re-adding the same id needs REMOVE first.
	if out := c1.run(addQuery(3), nil); out.err == nil || out.err.Msg != msgCoordIDExists {
		t.Fatalf("re-add: %+v", out)
	}
	c1.must("REMOVE COORDINATOR 3")
	c1.must(addQuery(3))
	if snap := w.Raft(); len(snap.Clusters) != 1 || !snap.Clusters[0].Members[2].Alive {
		t.Fatalf("raft %+v", snap)
	}
}

func TestRemoveUnresolvesAndRestartKeepsState(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	must(t, w.Commit("memgraph", 4))
	must(t, w.Kill("data-2.mg.svc"))
	must(t, w.Commit("memgraph", 2))
	must(t, w.Restart("data-2.mg.svc"))
	lag := c1.must("SHOW REPLICATION LAG").rows
	want := map[string]any{"memgraph": map[string]any{"num_committed_txns": int64(6), "num_txns_behind_main": int64(0)}}
	if d := cmp.Diff(want, lag[1]["data_info"]); d != "" {
		t.Fatalf("restarted replica (-want +got):\n%s", d)
	}
	must(t, w.Remove("coord-3.mg.svc"))
	if got := w.Resolve(coordBolt(3)); got != coordBolt(3) {
		t.Fatalf("removed instance still resolves to %s", got)
	}
	if w.Resolve("elsewhere:1") != "elsewhere:1" {
		t.Fatal("unknown address rewritten")
	}
	must(t, w.StartCoordinator(coordSpec(3)))
	must(t, w.StartCoordinator(coordSpec(3))) // idempotent
	if err := w.StartData(DataSpec{Host: "coord-3.mg.svc", BoltPort: 1, ManagementPort: 2}); err == nil {
		t.Fatal("host reused with another spec")
	}
}

func TestReplicationLagRowsIncludeMainAndVanishWithoutLiveMain(t *testing.T) {
	w, c1 := setupCluster(t, 1, 2)
	must(t, w.Commit("memgraph", 3))
	must(t, w.SetLag("data-2.mg.svc", "memgraph", 2))
	rows := c1.must("SHOW REPLICATION LAG").rows
	want := []map[string]any{
		{"instance_name": "instance_1", "data_info": map[string]any{"memgraph": map[string]any{"num_committed_txns": int64(3), "num_txns_behind_main": int64(0)}}},
		{"instance_name": "instance_2", "data_info": map[string]any{"memgraph": map[string]any{"num_committed_txns": int64(1), "num_txns_behind_main": int64(2)}}},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Fatalf("lag (-want +got):\n%s", d)
	}
	c1.must("DEMOTE INSTANCE instance_1")
	if rows := c1.must("SHOW REPLICATION LAG").rows; len(rows) != 0 {
		t.Fatalf("lag without main %v", rows)
	}
}

func TestQueryLogCountsRoundTripsAndLatencyDelaysReplies(t *testing.T) {
	w, c1 := setupCluster(t, 3, 1)
	c1.must("SHOW INSTANCES")
	c1.run("SET INSTANCE instance_1 TO MAIN", nil)
	log := w.QueryLog("coord-1.mg.svc")
	if len(log) != 2 || log[0].Failed || !log[1].Failed || log[1].Phase != "PULL" || log[1].Message != msgMainExists {
		t.Fatalf("log %+v", log)
	}
	if n := len(w.Queries()); n != 2 {
		t.Fatalf("world log has %d entries", n)
	}
	must(t, w.SetLatency("coord-1.mg.svc", 80*time.Millisecond))
	start := time.Now()
	c1.must("SHOW INSTANCES")
	if time.Since(start) < 80*time.Millisecond {
		t.Fatal("latency not applied")
	}
}

func TestDroppedConnectionsAreReestablished(t *testing.T) {
	w, c1 := setupCluster(t, 1, 0)
	c1.must("SHOW INSTANCES")
	must(t, w.DropConnections("coord-1.mg.svc"))
	// The pooled connection is dead; auto-commit Run does not retry, so the first query may fail
	// with a connectivity error. A fresh driver connects at once.
	if out := dial(t, w, coordBolt(1)).must("SHOW INSTANCES"); len(out.rows) != 1 {
		t.Fatalf("rows %v", out.rows)
	}
}

func TestCoordinatorSettingsRoundTrip(t *testing.T) {
	_, c1 := setupCluster(t, 1, 0)
	c1.must(`SET COORDINATOR SETTING "instance_down_timeout_sec" TO "7"`)
	rows := c1.must("SHOW COORDINATOR SETTINGS").rows
	if len(rows) != 8 || rows[0]["setting_name"] != "enabled_reads_on_main" || rows[5]["setting_value"] != "7" {
		t.Fatalf("settings %v", rows)
	}
}

func TestDataInstanceAnswersRoleAndRefusesWritesOnReplica(t *testing.T) {
	w, _ := setupCluster(t, 1, 2)
	if out := dial(t, w, dataBolt(2)).run("CREATE (n)", nil); out.err == nil || out.err.Msg != msgWriteOnReplica || out.phase != "RUN" {
		t.Fatalf("write on replica %+v", out)
	}
	dial(t, w, dataBolt(1)).must("CREATE (n)")
	if c := w.Raft().Clusters[0].Data[1].Committed["memgraph"]; c != 1 {
		t.Fatalf("replica committed %d", c)
	}
	if out := dial(t, w, dataBolt(2)).run("REGISTER REPLICA x SYNC TO 'a:1'", nil); out.err == nil || out.err.Msg != msgManualRegister {
		t.Fatalf("manual register %+v", out)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestConfigValuesMayBeParameters(t *testing.T) {
	w := startWorld(t, 1, 1)
	c1 := dial(t, w, coordBolt(1))
	q := `REGISTER INSTANCE instance_1 WITH CONFIG {"bolt_server": $b, "management_server": $m, "replication_server": 'data-1.mg.svc:20000'}`
	c1.must("ADD COORDINATOR 1 WITH CONFIG {'bolt_server': 'coord-1.mg.svc:7687', 'coordinator_server': 'coord-1.mg.svc:12000', 'management_server': 'coord-1.mg.svc:10000'}")
	if out := c1.run(q, map[string]any{"b": "data-1.mg.svc:7687", "m": "data-1.mg.svc:10000"}); out.err != nil {
		t.Fatal(out.err.Msg)
	}
	if out := c1.run(q, map[string]any{"b": 1, "m": "x:1"}); out.err == nil || out.err.Msg != msgFailedConfigMap || out.phase != "RUN" {
		t.Fatalf("non-string parameter: %+v", out)
	}
	if got := w.Raft().Clusters[0].Data[0]; got.BoltServer != "data-1.mg.svc:7687" || got.Health != "up" {
		t.Fatalf("registered %+v", got)
	}
}

// A coordinator removed from its cluster while still running accepts a later ADD COORDINATOR
// (NuRaft's join request resets its configuration), as a scale-down reverted before its pod is
// shed, or a pod that comes back on its retained volume, needs.
func TestRemovedCoordinatorCanBeAddedAgain(t *testing.T) {
	w, c1 := setupCluster(t, 3, 1)
	c1.must("REMOVE COORDINATOR 3")
	c1.must(addQuery(3))
	snap := w.Raft()
	var members int
	for _, c := range snap.Clusters {
		if c.Leader == 1 {
			members = len(c.Members)
		}
	}
	if members != 3 {
		t.Fatalf("cluster led by 1 has %d members after re-adding 3, want 3: %+v", members, snap)
	}
	if m := w.Misuses(); len(m) > 0 {
		t.Fatalf("misuses %+v", m)
	}
}

// A removed coordinator that still runs keeps its last view of the cluster, MAIN included, but
// no leader can ever act on it: the data instances follow the cluster's leader alone. Here the
// orphaned view still names instance_1 MAIN after the cluster moved MAIN to instance_2; a restart
// of instance_1 (lagged) must not make instance_2, the real MAIN, follow it.
func TestAnOrphanedViewDrivesNoDataInstance(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	must(t, w.Commit("memgraph", 3))
	c1.must("REMOVE COORDINATOR 3") // coordinator 3 keeps running with its view: MAIN instance_1
	c1.must("DEMOTE INSTANCE instance_1")
	c1.must("SET INSTANCE instance_2 TO MAIN")
	must(t, w.Kill("data-1.mg.svc"))
	must(t, w.SetLag("data-1.mg.svc", "memgraph", 3))
	must(t, w.Restart("data-1.mg.svc"))
	for _, c := range w.Raft().Clusters {
		for _, d := range c.Data {
			if d.Name == "instance_2" && d.Committed["memgraph"] != 3 {
				t.Fatalf("the MAIN instance_2 holds %d, want 3: an orphaned view replicated into it", d.Committed["memgraph"])
			}
		}
	}
}

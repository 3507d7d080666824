package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestVersionsParseAndOrder(t *testing.T) {
	cases := []struct {
		a, b  string
		older bool
	}{
		{"3.12.0", "3.13.0", true},
		{"3.12.0", "3.12.1-relwithdebinfo", true},
		{"3.9.9", "3.12.0", true},
		{"3.12.0-relwithdebinfo", "3.12.0", false}, // suffixes do not order
		{"3.13.0", "3.12.0", false},
		{"", "3.12.0", false}, // unknown: no rule applies
		{"latest", "3.12.0", false},
		{"3.12", "3.13.0", false},
		{"v3.12.0", "3.13.0", false},
		{"3.12.0.1", "3.13.0", false},
	}
	for _, tc := range cases {
		if got := olderVersion(tc.a, tc.b); got != tc.older {
			t.Errorf("olderVersion(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

// versionedCluster is one coordinator and data instances at the given versions, registered as
// SYNC, instance_1 MAIN.
func versionedCluster(t *testing.T, versions ...string) (*World, *client) {
	t.Helper()
	w := startWorld(t, 1, 0)
	for n, v := range versions {
		spec := dataSpec(n + 1)
		spec.Version = v
		must(t, w.StartData(spec))
	}
	c1 := dial(t, w, coordBolt(1))
	c1.must(addQuery(1))
	for n := range versions {
		c1.must(registerQuery(n + 1))
	}
	c1.must("SET INSTANCE instance_1 TO MAIN")
	return w, c1
}

func misuseDescriptions(w *World) []string {
	var out []string
	for _, m := range w.Misuses() {
		out = append(out, string(m.Kind)+" @"+m.Host+" "+m.Query+": "+m.Description)
	}
	return out
}

// TestNewerMainCannotReplicateToAnOlderReplica follows Memgraph v3.12.0 src/rpc/utils.hpp 29–87
// (an older server cannot read a newer message), replication_client.cpp 341–350 (the replica
// goes MAYBE_BEHIND, "invalid") and tests/issu/test_upgrade.sh 860–884 (replicas are upgraded
// before the MAIN): upgrading the MAIN first is a misuse, its SYNC replica gets nothing and
// every write reports it (storage.cpp 1221–1236); once the replica is upgraded too it catches up.
func TestNewerMainCannotReplicateToAnOlderReplica(t *testing.T) {
	w, c1 := versionedCluster(t, "3.12.0", "3.12.0")
	must(t, w.Commit("memgraph", 3))
	must(t, w.RestartAt("data-1.mg.svc", "3.13.0"))
	want := []string{"newer-main-older-replica @data-1.mg.svc : MAIN instance_1 started at 3.13.0 while instance_2 runs 3.12.0: an older replica cannot read a newer MAIN's replication messages"}
	if d := cmp.Diff(want, misuseDescriptions(w)); d != "" {
		t.Fatalf("misuses (-want +got):\n%s", d)
	}
	advance(t, w, time.Second) // the leader re-promotes the restarted MAIN
	out := dial(t, w, dataBolt(1)).run("CREATE (n)", nil)
	if out.err == nil || out.err.Msg != msgReplication([]replicaFailure{{"instance_2", "sync"}}, true) {
		t.Fatalf("write on the newer MAIN: %+v", out)
	}
	if got := [2]int64{committed(t, w, "instance_1"), committed(t, w, "instance_2")}; got != [2]int64{4, 3} {
		t.Fatalf("committed (MAIN, replica) %v, want [4 3]", got)
	}
	wantRows := map[string]map[string]any{"instance_2": replicaRow(2, "sync", "invalid", 0, -4, "invalid")}
	if d := cmp.Diff(wantRows, replicasOn(t, w, 1)); d != "" {
		t.Fatalf("SHOW REPLICAS (-want +got):\n%s", d)
	}
	if d := cmp.Diff(lagCell(0, 4), lagOf(t, c1, "instance_2")); d != "" {
		t.Fatalf("lag of the unreadable replica (-want +got):\n%s", d)
	}
	must(t, w.RestartAt("data-2.mg.svc", "3.13.0-relwithdebinfo"))
	if n := committed(t, w, "instance_2"); n != 4 {
		t.Fatalf("the upgraded replica holds %d, want 4", n)
	}
	if len(w.Misuses()) != 1 {
		t.Fatalf("upgrading the replica recorded %v", misuseDescriptions(w))
	}
}

// TestOlderMainReplicatesToANewerReplica: the newer replica upgrades the older requests
// (src/rpc/utils.hpp 64–87); upgrading replicas first is the documented order.
func TestOlderMainReplicatesToANewerReplica(t *testing.T) {
	w, _ := versionedCluster(t, "3.12.0", "3.12.0")
	must(t, w.RestartAt("data-2.mg.svc", "3.13.0"))
	must(t, w.Commit("memgraph", 2))
	dial(t, w, dataBolt(1)).must("CREATE (n)")
	if n := committed(t, w, "instance_2"); n != 3 {
		t.Fatalf("the newer replica holds %d, want 3", n)
	}
	if m := w.Misuses(); len(m) != 0 {
		t.Fatalf("misuses %v", misuseDescriptions(w))
	}
}

// TestPromotingANewerInstanceIsAMisuseAFailoverIsNot: SET INSTANCE … TO MAIN on a newer
// instance leaves every older alive one unable to replicate; a failover the coordinators chose
// does the same but is not the client's doing. The MAIN a handover demoted right before is the
// one exception: the last step of an upgrade hands MAIN to an updated replica and then replaces
// the old MAIN's pod (replicas first, MAIN last: tests/issu/test_upgrade.sh 860–884).
func TestPromotingANewerInstanceIsAMisuseAFailoverIsNot(t *testing.T) {
	t.Run("client", func(t *testing.T) {
		w, c1 := versionedCluster(t, "3.12.0", "3.13.0", "3.12.0", "")
		c1.must("DEMOTE INSTANCE instance_1")
		c1.must("SET INSTANCE instance_2 TO MAIN")
		q := "SET INSTANCE instance_2 TO MAIN"
		want := []string{
			"newer-main-older-replica @coord-1.mg.svc " + q + ": SET INSTANCE instance_2 TO MAIN makes a MAIN at 3.13.0 while instance_3 runs 3.12.0: an older replica cannot read a newer MAIN's replication messages",
		}
		if d := cmp.Diff(want, misuseDescriptions(w)); d != "" {
			t.Fatalf("misuses (-want +got):\n%s", d)
		}
		must(t, w.Commit("memgraph", 2))
		got := [4]int64{committed(t, w, "instance_1"), committed(t, w, "instance_2"), committed(t, w, "instance_3"), committed(t, w, "instance_4")}
		if got != [4]int64{0, 2, 0, 2} { // instance_4's version is unknown: no rule applies
			t.Fatalf("committed %v", got)
		}
	})
	t.Run("a SET that does not follow its DEMOTE at once has no exception", func(t *testing.T) {
		w, c1 := versionedCluster(t, "3.12.0", "3.13.0")
		c1.must("DEMOTE INSTANCE instance_1")
		if out := c1.run("DEMOTE INSTANCE instance_1", nil); out.err == nil {
			t.Fatal("a second DEMOTE of a replica was accepted")
		}
		c1.must("SET INSTANCE instance_2 TO MAIN")
		if len(w.Misuses()) != 1 {
			t.Fatalf("misuses %v, want the newer MAIN over instance_1", misuseDescriptions(w))
		}
	})
	t.Run("failover", func(t *testing.T) {
		w, _ := versionedCluster(t, "3.12.0", "3.13.0")
		must(t, w.Kill("data-1.mg.svc"))
		advance(t, w, 5*time.Second)
		must(t, w.Restart("data-1.mg.svc"))
		must(t, w.Commit("memgraph", 1))
		if main, n := w.Raft().Clusters[0].Main, committed(t, w, "instance_1"); main != "instance_2" || n != 0 {
			t.Fatalf("main %s, the older old MAIN holds %d", main, n)
		}
		if m := w.Misuses(); len(m) != 0 {
			t.Fatalf("misuses %v", misuseDescriptions(w))
		}
	})
	t.Run("failover, the old MAIN's pod recreated at the version it ran", func(t *testing.T) {
		w, _ := versionedCluster(t, "3.12.0", "3.13.0")
		must(t, w.Kill("data-1.mg.svc"))
		advance(t, w, 5*time.Second)
		must(t, w.RestartAt("data-1.mg.svc", "3.12.0"))
		if main := w.Raft().Clusters[0].Main; main != "instance_2" {
			t.Fatalf("main %s, want the failover's instance_2", main)
		}
		if m := w.Misuses(); len(m) != 0 {
			t.Fatalf("misuses %v", misuseDescriptions(w))
		}
		must(t, w.RestartAt("data-1.mg.svc", "3.11.0")) // a version change is someone's choice
		if len(w.Misuses()) != 1 {
			t.Fatalf("misuses %v, want the older replica started under MAIN instance_2", misuseDescriptions(w))
		}
	})
}

// TestStartingAnOlderReplicaIsAMisuse: a data instance (re)started older than its cluster's
// alive MAIN while registered.
func TestStartingAnOlderReplicaIsAMisuse(t *testing.T) {
	w, _ := versionedCluster(t, "3.13.0", "3.13.0")
	must(t, w.RestartAt("data-2.mg.svc", "3.12.0"))
	want := []string{"newer-main-older-replica @data-2.mg.svc : instance_2 started at 3.12.0 while its MAIN instance_1 runs 3.13.0: an older replica cannot read a newer MAIN's replication messages"}
	if d := cmp.Diff(want, misuseDescriptions(w)); d != "" {
		t.Fatalf("misuses (-want +got):\n%s", d)
	}
	must(t, w.RestartAt("coord-1.mg.svc", "3.12.0")) // coordinators: no rule
	if len(w.Misuses()) != 1 {
		t.Fatalf("misuses %v", misuseDescriptions(w))
	}
}

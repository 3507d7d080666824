package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// statusOf is the data_info status the MAIN instance_<main>'s SHOW REPLICAS reports for a replica
// on the default database.
func statusOf(t *testing.T, w *World, main int, replica string) string {
	t.Helper()
	row, ok := replicasOn(t, w, main)[replica]
	if !ok {
		t.Fatalf("SHOW REPLICAS on instance_%d does not list %s", main, replica)
	}
	return row["data_info"].(map[string]any)["memgraph"].(map[string]any)["status"].(string)
}

// TestDivergedReplica follows Memgraph v3.12.0 replication_client.cpp: a replica found
// DIVERGED_FROM_MAIN (196–207) is reported "diverged" (interpreter.cpp 2079–2080), is sent
// nothing (StartTransactionReplication, 395–399: a SYNC write is not confirmed), is "invalid"
// while down (a lost connection sets every client MAYBE_BEHIND, replication_handler.cpp
// 186–195) and diverged again once back; unregistering and registering it again changes
// nothing, fresh data does.
func TestDivergedReplica(t *testing.T) {
	w, c1 := setupCluster(t, 1, 3)
	must(t, w.Commit("memgraph", 3))
	must(t, w.Diverge("data-3.mg.svc"))
	if got := statusOf(t, w, 1, "instance_3"); got != "diverged" {
		t.Fatalf("status %q, want diverged", got)
	}
	must(t, w.Commit("memgraph", 2))
	if n := committed(t, w, "instance_3"); n != 3 {
		t.Fatalf("the diverged replica took commits: holds %d", n)
	}
	write := dial(t, w, dataBolt(1)).run("CREATE (:N)", nil)
	if write.err == nil || !strings.Contains(write.err.Msg, "Failed to replicate to SYNC replica") {
		t.Fatalf("a write with a diverged SYNC replica: %v, want a replication error", write.err)
	}
	must(t, w.Kill("data-3.mg.svc"))
	if got := statusOf(t, w, 1, "instance_3"); got != "invalid" {
		t.Fatalf("down: status %q, want invalid", got)
	}
	must(t, w.Restart("data-3.mg.svc"))
	if got := statusOf(t, w, 1, "instance_3"); got != "diverged" {
		t.Fatalf("back on its data: status %q, want diverged", got)
	}
	c1.must("UNREGISTER INSTANCE instance_3")
	if _, listed := replicasOn(t, w, 1)["instance_3"]; listed {
		t.Fatal("SHOW REPLICAS lists an unregistered replica")
	}
	c1.must(registerQuery(3))
	if got := statusOf(t, w, 1, "instance_3"); got != "diverged" {
		t.Fatalf("registered again on the same data: status %q, want diverged", got)
	}
	c1.must("UNREGISTER INSTANCE instance_3")
	must(t, w.Wipe("data-3.mg.svc"))
	c1.must(registerQuery(3))
	if got := statusOf(t, w, 1, "instance_3"); got != "ready" {
		t.Fatalf("registered again on fresh data: status %q, want ready", got)
	}
	if n, main := committed(t, w, "instance_3"), committed(t, w, "instance_1"); n != main {
		t.Fatalf("the rebuilt replica holds %d of the MAIN's %d", n, main)
	}
}

// TestFailedRecoveryLoops follows replication_client.cpp 664–711 and 880–912: a recovery step
// that fails sets the replica MAYBE_BEHIND ("invalid"); the MAIN's next check, every
// --replication-replica-check-frequency-sec, finds it behind and recovers it again ("recovery").
func TestFailedRecoveryLoops(t *testing.T) {
	w, _ := setupCluster(t, 1, 2, WithReplicaRecoveryTime(3*time.Second))
	must(t, w.Commit("memgraph", 4))
	must(t, w.Kill("data-2.mg.svc"))
	must(t, w.Commit("memgraph", 2))
	must(t, w.FailRecovery("data-2.mg.svc", true))
	must(t, w.Restart("data-2.mg.svc"))
	var seen []string
	for range 6 {
		seen = append(seen, statusOf(t, w, 1, "instance_2"))
		advance(t, w, 1500*time.Millisecond)
	}
	want := []string{"recovery", "recovery", "invalid", "recovery", "recovery", "invalid"}
	if d := cmp.Diff(want, seen); d != "" {
		t.Fatalf("statuses every 1.5 s (-want +got):\n%s", d)
	}
	if n := committed(t, w, "instance_2"); n != 4 {
		t.Fatalf("the replica whose recovery fails holds %d, want its own 4", n)
	}
	must(t, w.FailRecovery("data-2.mg.svc", false))
	advance(t, w, 4*time.Second)
	if got := statusOf(t, w, 1, "instance_2"); got != "ready" {
		t.Fatalf("recoveries succeed again: status %q, want ready", got)
	}
}

// TestWipeEndsAFailingRecovery: fresh data recovers from the MAIN (the fault stands for a volume
// that cannot take the MAIN's files).
func TestWipeEndsAFailingRecovery(t *testing.T) {
	w, _ := setupCluster(t, 1, 2)
	must(t, w.Commit("memgraph", 4))
	must(t, w.Kill("data-2.mg.svc"))
	must(t, w.Commit("memgraph", 1))
	must(t, w.FailRecovery("data-2.mg.svc", true))
	must(t, w.Restart("data-2.mg.svc"))
	if got := statusOf(t, w, 1, "instance_2"); got != "invalid" {
		t.Fatalf("a recovery that fails at once: status %q, want invalid", got)
	}
	must(t, w.Wipe("data-2.mg.svc"))
	if got := statusOf(t, w, 1, "instance_2"); got != "ready" {
		t.Fatalf("wiped: status %q, want ready", got)
	}
}

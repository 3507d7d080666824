package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// lagOf is one instance's SHOW REPLICATION LAG entry for the default database.
func lagOf(t *testing.T, c *client, name string) map[string]any {
	t.Helper()
	for _, r := range c.must("SHOW REPLICATION LAG").rows {
		if r["instance_name"] == name {
			return r["data_info"].(map[string]any)["memgraph"].(map[string]any)
		}
	}
	t.Fatalf("no lag row for %s", name)
	return nil
}

func lagCell(committed, behind int64) map[string]any {
	return map[string]any{"num_committed_txns": committed, "num_txns_behind_main": behind}
}

// replicasOn is SHOW REPLICAS on a data instance, as name → row without the name.
func replicasOn(t *testing.T, w *World, n int) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, r := range dial(t, w, dataBolt(n)).must("SHOW REPLICAS").rows {
		out[r["name"].(string)] = r
		delete(r, "name")
	}
	return out
}

func replicaRow(n int, mode, system string, ts, behind int64, status string) map[string]any {
	return map[string]any{"socket_address": dataHostPort(n, 20000), "sync_mode": mode,
		"system_info": map[string]any{"ts": int64(0), "behind": nil, "status": system},
		"data_info":   map[string]any{"memgraph": map[string]any{"ts": ts, "behind": behind, "status": status}}}
}

func dataHostPort(n, port int) string { return fmt.Sprintf("data-%d.mg.svc:%d", n, port) }

func committed(t *testing.T, w *World, name string) int64 {
	t.Helper()
	for _, d := range w.Raft().Clusters[0].Data {
		if d.Name == name {
			return d.Committed["memgraph"]
		}
	}
	t.Fatalf("no data instance %s", name)
	return 0
}

// TestWipedReplicaRecoversWhileTheLagStaysStale follows Memgraph v3.12.0
// src/storage/v2/replication/replication_client.cpp: the MAIN caches each replica's count with
// an advance-only Max (264–265) and skips it while the replica recovers (248–252), so a wiped
// replica still shows its old count and 0 behind in SHOW REPLICATION LAG
// (replication_handler.cpp 423–460), while SHOW REPLICAS has it in RECOVERY (behind the MAIN,
// 284–300; interpreter.cpp 2022–2120).
func TestWipedReplicaRecoversWhileTheLagStaysStale(t *testing.T) {
	w, c1 := setupCluster(t, 1, 2, WithReplicaRecoveryTime(10*time.Second))
	must(t, w.Commit("memgraph", 5))
	must(t, w.Wipe("data-2.mg.svc"))
	if d := cmp.Diff(lagCell(5, 0), lagOf(t, c1, "instance_2")); d != "" {
		t.Fatalf("lag of the wiped replica (-want +got):\n%s", d)
	}
	want := map[string]map[string]any{"instance_2": replicaRow(2, "sync", "ready", 5, 0, "recovery")}
	if d := cmp.Diff(want, replicasOn(t, w, 1)); d != "" {
		t.Fatalf("SHOW REPLICAS while recovering (-want +got):\n%s", d)
	}
	if n := committed(t, w, "instance_2"); n != 0 {
		t.Fatalf("the recovering replica holds %d", n)
	}
	advance(t, w, 9900*time.Millisecond)
	must(t, w.Commit("memgraph", 2)) // not replicated to a recovering replica
	if n := committed(t, w, "instance_2"); n != 0 {
		t.Fatalf("the recovering replica took a commit: %d", n)
	}
	advance(t, w, 100*time.Millisecond)
	want = map[string]map[string]any{"instance_2": replicaRow(2, "sync", "ready", 7, 0, "ready")}
	if d := cmp.Diff(want, replicasOn(t, w, 1)); d != "" {
		t.Fatalf("SHOW REPLICAS once recovered (-want +got):\n%s", d)
	}
	if n := committed(t, w, "instance_2"); n != 7 {
		t.Fatalf("the recovered replica holds %d, want 7", n)
	}
}

// TestShowReplicasStatusPerReplica follows Memgraph v3.12.0 src/query/interpreter.cpp 2065–2080
// (READY → ready, RECOVERY → recovery, MAYBE_BEHIND → invalid) and replication_client.cpp
// 284–300 (a replica behind its MAIN is in RECOVERY; a lagged one too) and 341–359 (an
// unreachable replica is MAYBE_BEHIND); behind is the cached ts minus the MAIN's (≤ 0).
func TestShowReplicasStatusPerReplica(t *testing.T) {
	w, _ := setupCluster(t, 1, 4)
	must(t, w.Commit("memgraph", 3))
	must(t, w.SetLag("data-2.mg.svc", "memgraph", 2))
	must(t, w.Kill("data-3.mg.svc"))
	must(t, w.Commit("memgraph", 1))
	want := map[string]map[string]any{
		"instance_2": replicaRow(2, "sync", "ready", 2, -2, "recovery"),
		"instance_3": replicaRow(3, "sync", "invalid", 3, -1, "invalid"),
		"instance_4": replicaRow(4, "sync", "ready", 4, 0, "ready"),
	}
	if d := cmp.Diff(want, replicasOn(t, w, 1)); d != "" {
		t.Fatalf("SHOW REPLICAS (-want +got):\n%s", d)
	}
}

// TestTheCacheBelongsToTheMainProcess: a restarted (or new) MAIN starts with an empty cache that
// its heartbeats fill, except for a replica in RECOVERY (replication_client.cpp 248–252).
func TestTheCacheBelongsToTheMainProcess(t *testing.T) {
	w, c1 := setupCluster(t, 1, 3, WithReplicaRecoveryTime(time.Minute))
	must(t, w.Commit("memgraph", 4))
	must(t, w.Wipe("data-2.mg.svc"))
	if d := cmp.Diff(lagCell(4, 0), lagOf(t, c1, "instance_2")); d != "" {
		t.Fatalf("before the MAIN restarts (-want +got):\n%s", d)
	}
	must(t, w.Restart("data-1.mg.svc"))
	for name, want := range map[string]map[string]any{"instance_2": lagCell(0, 4), "instance_3": lagCell(4, 0)} {
		if d := cmp.Diff(want, lagOf(t, c1, name)); d != "" {
			t.Fatalf("%s after the MAIN restarted (-want +got):\n%s", name, d)
		}
	}
}

// TestFailoverSkipsARecoveringReplica: candidates are ranked on their own counts
// (coordinator_instance.cpp ChooseMostUpToDateInstance), so a wiped replica still recovering
// is not promoted.
func TestFailoverSkipsARecoveringReplica(t *testing.T) {
	w, _ := setupCluster(t, 1, 3, WithReplicaRecoveryTime(time.Minute))
	must(t, w.Commit("memgraph", 5))
	must(t, w.Wipe("data-2.mg.svc"))
	must(t, w.Kill("data-1.mg.svc"))
	advance(t, w, 5*time.Second)
	if main := w.Raft().Clusters[0].Main; main != "instance_3" {
		t.Fatalf("failed over to %q, want the caught-up instance_3", main)
	}
}

// TestPromotingARecoveringReplicaLosesAcknowledgedWrites: a client that trusts the stale lag
// and promotes a wiped replica makes the cluster follow its empty history; the demoted old MAIN
// is force-reset to it (replication_client.cpp 188–230), so acknowledged writes are gone.
func TestPromotingARecoveringReplicaLosesAcknowledgedWrites(t *testing.T) {
	w, c1 := setupCluster(t, 1, 2, WithReplicaRecoveryTime(10*time.Second))
	must(t, w.Commit("memgraph", 5))
	must(t, w.Wipe("data-2.mg.svc"))
	c1.must("DEMOTE INSTANCE instance_1")
	c1.must("SET INSTANCE instance_2 TO MAIN")
	if got, acked := committed(t, w, "instance_2"), w.Acknowledged("memgraph"); got != 0 || acked != 5 {
		t.Fatalf("new MAIN holds %d of %d acknowledged", got, acked)
	}
	if n := committed(t, w, "instance_1"); n != 5 {
		t.Fatalf("the old MAIN recovering from the new one already holds %d", n)
	}
	advance(t, w, 10*time.Second)
	if n := committed(t, w, "instance_1"); n != 0 {
		t.Fatalf("the old MAIN holds %d after its recovery, want the new MAIN's 0", n)
	}
}

// TestPromotingABehindReplicaIsAMisuse: a handover whose target holds fewer transactions than
// the MAIN it demotes loses them (the demoted MAIN is reset to the new one's history:
// replication_client.cpp 188–230), so the simulator records it. A lag of 0 does not prevent
// it: a wiped replica still recovering shows 0 behind.
func TestPromotingABehindReplicaIsAMisuse(t *testing.T) {
	w, c1 := versionedCluster(t, "", "")
	must(t, w.Commit("memgraph", 3))
	must(t, w.SetLag("data-2.mg.svc", "memgraph", 2))
	c1.must("DEMOTE INSTANCE instance_1")
	c1.must("SET INSTANCE instance_2 TO MAIN")
	want := []string{"promote-behind @coord-1.mg.svc SET INSTANCE instance_2 TO MAIN: SET INSTANCE instance_2 TO MAIN after " +
		"DEMOTE INSTANCE instance_1: instance_2 holds 1 of the 3 transactions instance_1 committed on database memgraph; the " +
		"cluster follows instance_2 and the rest are lost"}
	if d := cmp.Diff(want, misuseDescriptions(w)); d != "" {
		t.Fatalf("misuses (-want +got):\n%s", d)
	}
}

package sim

import (
	"testing"
	"time"
)

// TestElectionTimeoutLeavesTheClusterLeaderless follows Memgraph v3.12.0
// src/coordination/raft_state.cpp 320–321 (election timeout 2000–4000 ms): after the leader dies,
// or its leadership expires (329), nobody leads until the timeout has passed.
func TestElectionTimeoutLeavesTheClusterLeaderless(t *testing.T) {
	w, _ := setupCluster(t, 3, 1, WithElectionTimeout(3*time.Second))
	must(t, w.Kill("coord-1.mg.svc"))
	c3 := dial(t, w, coordBolt(3))
	if _, ok := w.Leader(); ok {
		t.Fatal("a leader right after the leader died")
	}
	if out := c3.run(registerQuery(9), nil); out.err == nil || out.err.Msg != msgNoLeader {
		t.Fatalf("write without a leader: %+v", out)
	}
	advance(t, w, 3*time.Second-time.Millisecond)
	if _, ok := w.Leader(); ok {
		t.Fatal("a leader before the election timeout")
	}
	advance(t, w, time.Millisecond)
	if id, ok := w.Leader(); !ok || id != 2 {
		t.Fatalf("leader %d %v after the timeout, want 2", id, ok)
	}

	// Leadership expiry, then a majority back: the timeout runs from the majority's return.
	must(t, w.Kill("coord-3.mg.svc"))
	advance(t, w, LeadershipExpiry)
	if _, ok := w.Leader(); ok {
		t.Fatal("a leader after its leadership expired")
	}
	must(t, w.Restart("coord-1.mg.svc"))
	advance(t, w, 3*time.Second-time.Millisecond)
	if _, ok := w.Leader(); ok {
		t.Fatal("a leader before the election timeout")
	}
	advance(t, w, time.Millisecond)
	if id, ok := w.Leader(); !ok || id != 1 {
		t.Fatalf("leader %d %v, want the lowest alive id 1", id, ok)
	}
}

// TestYieldPausesRaftWritesUntilTheHandover follows NuRaft v2.1.0 raft_server.cxx 1169–1264 (a
// yield pauses writes and nominates a successor; a second yield is a no-op),
// handle_client_request.cxx 100 (writes refused while paused, Memgraph's "Writing to Raft log
// failed" text) and handle_append_entries.cxx 955–990 (the leader resigns and the successor
// takes over in a new term).
func TestYieldPausesRaftWritesUntilTheHandover(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2, WithLeadershipTransferTime(time.Second), WithLeaderReadyDelay(500*time.Millisecond))
	c1.must("YIELD LEADERSHIP")
	c1.must("YIELD LEADERSHIP") // already yielding: nothing more happens
	if snap := w.Raft().Clusters[0]; snap.Leader != 1 || !snap.Ready {
		t.Fatalf("during the yield: %+v", snap)
	}
	if got := row(t, c1.must("SHOW INSTANCES").rows, "coordinator_1"); got[5] != "leader" {
		t.Fatalf("the yielding leader shows %v", got)
	}
	if out := c1.run("SET COORDINATOR SETTING 'instance_down_timeout_sec' TO '7'", nil); out.err == nil || out.err.Msg != msgRaftWriteFailed {
		t.Fatalf("write on the yielding leader: %+v", out)
	}
	if out := dial(t, w, coordBolt(2)).run("DEMOTE INSTANCE instance_1", nil); out.err == nil || out.err.Msg != msgForwardFailed {
		t.Fatalf("write forwarded to the yielding leader: %+v", out)
	}
	advance(t, w, time.Second)
	if snap := w.Raft().Clusters[0]; snap.Leader != 2 || snap.Ready {
		t.Fatalf("after the handover, want coordinator_2 leading, not ready yet: %+v", snap)
	}
	advance(t, w, 500*time.Millisecond)
	dial(t, w, coordBolt(2)).must("SET COORDINATOR SETTING 'instance_down_timeout_sec' TO '7'")
}

// TestYieldChooserMayReelectTheLeader: NuRaft's successor may end up the leader itself, which
// then leads in a new term and must reconcile again before it answers writes.
func TestYieldChooserMayReelectTheLeader(t *testing.T) {
	w, c1 := setupCluster(t, 3, 1, WithLeaderReadyDelay(time.Second),
		WithYieldChooser(func(leader int, _ []int) int { return leader }))
	c1.must("YIELD LEADERSHIP")
	if snap := w.Raft().Clusters[0]; snap.Leader != 1 || snap.Ready {
		t.Fatalf("after a yield back to itself: %+v", snap)
	}
	if out := c1.run(registerQuery(9), nil); out.err == nil || out.err.Msg != msgNoLeader {
		t.Fatalf("write in the new term before reconciling: %+v", out)
	}
	advance(t, w, time.Second)
	c1.must(registerQuery(9))
}

// TestYieldWithoutAnAlivePeerResignsAfterFourSeconds follows NuRaft v2.1.0 raft_server.cxx
// 1245–1262 (no candidate: writes pause, the re-election timer is the election timeout's upper
// bound, 4000 ms in raft_state.cpp 321) and handle_timeout.cxx 62–70 (then it resigns); it may
// be elected again.
func TestYieldWithoutAnAlivePeerResignsAfterFourSeconds(t *testing.T) {
	w, c1 := setupCluster(t, 3, 1)
	must(t, w.Kill("coord-2.mg.svc"))
	must(t, w.Kill("coord-3.mg.svc"))
	c1.must("YIELD LEADERSHIP")
	advance(t, w, time.Second)
	must(t, w.Restart("coord-2.mg.svc")) // a majority again, but the leader is yielding
	advance(t, w, YieldResignTimeout-time.Second-time.Millisecond)
	if out := c1.run(registerQuery(9), nil); out.err == nil || out.err.Msg != msgRaftWriteFailed {
		t.Fatalf("write just before the resignation: %+v", out)
	}
	advance(t, w, time.Millisecond)
	if snap := w.Raft().Clusters[0]; snap.Leader != 1 || !snap.Ready {
		t.Fatalf("after resigning, coordinator_1 is the lowest alive id of a majority: %+v", snap)
	}
	c1.must(registerQuery(9))
}

// TestCoordinatorThatLearnsNoLeaderExits follows Memgraph v3.12.0
// src/coordination/raft_state.cpp 392–401: a coordinator not initialized (no leader heard) within
// 1200 × 100 ms of its start throws and its process exits.
func TestCoordinatorThatLearnsNoLeaderExits(t *testing.T) {
	w, _ := setupCluster(t, 3, 1)
	for _, h := range []string{"coord-1.mg.svc", "coord-2.mg.svc", "coord-3.mg.svc"} {
		must(t, w.Kill(h))
	}
	must(t, w.Restart("coord-1.mg.svc")) // alone: no majority of 3, no leader
	advance(t, w, CoordinatorInitTimeout-time.Millisecond)
	if !w.Running("coord-1.mg.svc") {
		t.Fatal("exited before the timeout")
	}
	advance(t, w, time.Millisecond)
	if w.Running("coord-1.mg.svc") {
		t.Fatal("coordinator_1 heard no leader for 120 s and still runs")
	}

	// One that learns a leader within the window stays, even once the leader is gone again.
	must(t, w.Restart("coord-1.mg.svc"))
	advance(t, w, time.Minute)
	must(t, w.Restart("coord-2.mg.svc")) // a majority: coordinator_1 leads, both are initialized
	must(t, w.Kill("coord-1.mg.svc"))
	advance(t, w, 10*CoordinatorInitTimeout)
	if !w.Running("coord-2.mg.svc") {
		t.Fatal("coordinator_2 had heard a leader since its start and exited")
	}
}

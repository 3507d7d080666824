package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

func TestDeadInstancesShowUpUntilInstanceDownTimeout(t *testing.T) {
	w, c1 := setupCluster(t, 3, 3)
	must(t, w.Kill("data-2.mg.svc"))
	advance(t, w, 4900*time.Millisecond)
	if got := row(t, c1.must("SHOW INSTANCES").rows, "instance_2"); got[4] != "up" || got[5] != "replica" {
		t.Fatalf("a replica dead for 4.9 s shows %v, want up/replica", got)
	}
	advance(t, w, 100*time.Millisecond)
	if got := row(t, c1.must("SHOW INSTANCES").rows, "instance_2"); got[4] != "down" || got[5] != "unknown" {
		t.Fatalf("a replica dead for 5 s shows %v, want down/unknown", got)
	}

	// The timeout is the coordinator setting.
	c1.must(`SET COORDINATOR SETTING 'instance_down_timeout_sec' TO '2'`)
	must(t, w.Kill("data-1.mg.svc"))
	advance(t, w, 1900*time.Millisecond)
	if got := row(t, c1.must("SHOW INSTANCES").rows, "instance_1"); got[4] != "up" || got[5] != "main" {
		t.Fatalf("a MAIN dead for 1.9 s of a 2 s timeout shows %v, want up/main", got)
	}
	if main := w.Raft().Clusters[0].Main; main != "instance_1" {
		t.Fatalf("failed over to %s before the leader saw the MAIN down", main)
	}
	advance(t, w, 100*time.Millisecond)
	if main := w.Raft().Clusters[0].Main; main != "instance_3" {
		t.Fatalf("main %q once the leader sees instance_1 down, want the only alive replica instance_3", main)
	}
	if got := row(t, c1.must("SHOW INSTANCES").rows, "instance_1"); got[4] != "down" || got[5] != "unknown" {
		t.Fatalf("the dead old MAIN shows %v", got)
	}
}

func TestConnectorsStartAlive(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	must(t, w.Kill("data-2.mg.svc"))
	advance(t, w, 10*time.Second)
	if got := row(t, c1.must("SHOW INSTANCES").rows, "instance_2"); got[4] != "down" {
		t.Fatalf("dead replica %v", got)
	}

	// REGISTER creates a connector: an instance that never ran shows up for the timeout.
	c1.must(`REGISTER INSTANCE instance_9 WITH CONFIG {"bolt_server": "nowhere:7687", "management_server": "nowhere:10000", "replication_server": "nowhere:20000"}`)
	if got := row(t, c1.must("SHOW INSTANCES").rows, "instance_9"); got[4] != "up" || got[5] != "replica" {
		t.Fatalf("freshly registered, never started: %v, want up/replica", got)
	}

	// A leader change builds new connectors: the long-dead replica shows up again.
	must(t, w.ForceLeader(2))
	if got := row(t, c1.must("SHOW INSTANCES").rows, "instance_2"); got[4] != "up" {
		t.Fatalf("after a leader change the dead replica shows %v, want up", got)
	}
	advance(t, w, 5*time.Second)
	rows := c1.must("SHOW INSTANCES").rows
	if got := row(t, rows, "instance_2"); got[4] != "down" {
		t.Fatalf("5 s after the leader change: %v", got)
	}
	if got := row(t, rows, "instance_9"); got[4] != "down" {
		t.Fatalf("5 s after the leader change: %v", got)
	}

	// So does FORCE RESET.
	c1.must("FORCE RESET CLUSTER STATE")
	if got := row(t, c1.must("SHOW INSTANCES").rows, "instance_2"); got[4] != "up" {
		t.Fatalf("after FORCE RESET the dead replica shows %v, want up", got)
	}
}

func TestNewLeaderKeepsADeadMainAndFailsOverLater(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	must(t, w.Kill("data-1.mg.svc"))
	must(t, w.ForceLeader(3)) // within the timeout: Raft still has instance_1 as MAIN
	snap := w.Raft().Clusters[0]
	if !snap.Ready || snap.Main != "instance_1" {
		t.Fatalf("a new leader with a MAIN in Raft reconciles at once without a failover: %+v", snap)
	}
	advance(t, w, 4*time.Second)
	if main := w.Raft().Clusters[0].Main; main != "instance_1" {
		t.Fatalf("failed over after 4 s on the new leader's connectors: %s", main)
	}
	advance(t, w, time.Second)
	if main := w.Raft().Clusters[0].Main; main != "instance_2" {
		t.Fatalf("main %q 5 s after the new leader's connectors were made", main)
	}
	if got := row(t, c1.must("SHOW INSTANCES").rows, "coordinator_3"); got[5] != "leader" {
		t.Fatalf("leader row %v", got)
	}
}

func TestLeaderWithoutQuorumLeadsUntilItsLeadershipExpires(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	must(t, w.Kill("coord-2.mg.svc"))
	must(t, w.Kill("coord-3.mg.svc"))
	advance(t, w, LeadershipExpiry-100*time.Millisecond)
	rows := c1.must("SHOW INSTANCES").rows
	if got := row(t, rows, "coordinator_1"); got[4] != "up" || got[5] != "leader" {
		t.Fatalf("a leader inside its expiry window shows %v", got)
	}
	if got := row(t, rows, "instance_1"); got[4] != "up" || got[5] != "main" {
		t.Fatalf("the leader's own table: %v", got)
	}
	for i := 0; i < 2; i++ {
		if out := c1.run(registerQuery(9), nil); out.err == nil || out.err.Msg != msgRaftWriteFailed {
			t.Fatalf("write %d in the expiry window: %+v", i, out)
		}
	}
	advance(t, w, 100*time.Millisecond)
	if out := c1.run(registerQuery(9), nil); out.err == nil || out.err.Msg != msgNoLeader {
		t.Fatalf("write after the expiry: %+v", out)
	}
	if got := row(t, c1.must("SHOW INSTANCES").rows, "coordinator_1"); got[4] != "unknown" || got[5] != "follower" {
		t.Fatalf("the old leader after the expiry shows %v", got)
	}
	must(t, w.Restart("coord-3.mg.svc"))
	if id, ok := w.Leader(); !ok || id != 1 {
		t.Fatalf("leader once a majority is back: %d %v", id, ok)
	}
}

func TestLeaderThatRegainsQuorumInTimeKeepsLeading(t *testing.T) {
	w, c1 := setupCluster(t, 3, 1)
	must(t, w.Kill("coord-2.mg.svc"))
	must(t, w.Kill("coord-3.mg.svc"))
	advance(t, w, time.Second)
	must(t, w.Restart("coord-2.mg.svc"))
	advance(t, w, 10*time.Second)
	if snap := w.Raft().Clusters[0]; snap.Leader != 1 || !snap.Ready {
		t.Fatalf("%+v", snap)
	}
	c1.must(registerQuery(9))
}

func TestNotReadyLeaderAnswersItsLocalViewAndRefusesWrites(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2, WithLeaderReadyDelay(3*time.Second))
	must(t, w.Commit("memgraph", 2))
	must(t, w.ForceLeader(2))
	want := [][6]string{
		{"coordinator_1", "coord-1.mg.svc:7687", "coord-1.mg.svc:12000", "coord-1.mg.svc:10000", "unknown", "follower"},
		{"coordinator_2", "coord-2.mg.svc:7687", "coord-2.mg.svc:12000", "coord-2.mg.svc:10000", "unknown", "leader"},
		{"coordinator_3", "coord-3.mg.svc:7687", "coord-3.mg.svc:12000", "coord-3.mg.svc:10000", "unknown", "follower"},
		{"instance_1", "data-1.mg.svc:7687", "", "data-1.mg.svc:10000", "unknown", "main"},
		{"instance_2", "data-2.mg.svc:7687", "", "data-2.mg.svc:10000", "unknown", "replica"},
	}
	c2 := dial(t, w, coordBolt(2))
	for _, c := range []*client{c1, c2} {
		if d := cmp.Diff(want, table(c.must("SHOW INSTANCES").rows)); d != "" {
			t.Fatalf("not-ready view (-want +got):\n%s", d)
		}
		if rows := c.must("SHOW REPLICATION LAG").rows; len(rows) != 0 {
			t.Fatalf("lag rows from a not-ready leader: %v", rows)
		}
	}
	if out := c2.run("UNREGISTER INSTANCE instance_2", nil); out.err == nil || out.err.Msg != msgNoLeader {
		t.Fatalf("write on the not-ready leader: %+v", out)
	}
	if out := c1.run("UNREGISTER INSTANCE instance_2", nil); out.err == nil || out.err.Msg != msgForwardFailed {
		t.Fatalf("write forwarded to the not-ready leader: %+v", out)
	}
	if out := c2.run("FORCE RESET CLUSTER STATE", nil); out.err == nil || out.err.Msg != msgNoLeader {
		t.Fatalf("FORCE RESET on the not-ready leader: %+v", out)
	}
	advance(t, w, 3*time.Second)
	if got := row(t, c1.must("SHOW INSTANCES").rows, "coordinator_2"); got[4] != "up" || got[5] != "leader" {
		t.Fatalf("once ready: %v", got)
	}
	if rows := c1.must("SHOW REPLICATION LAG").rows; len(rows) != 2 {
		t.Fatalf("lag rows once ready: %v", rows)
	}
	c1.must("UNREGISTER INSTANCE instance_2")
}

func TestNotReadyLeaderWithoutCandidateRetriesWithBackoff(t *testing.T) {
	w, _ := noMainToPromote(t)
	must(t, w.ForceLeader(2)) // no MAIN and nobody to promote: reconciliation fails, retries 1 s, 2 s, 4 s …
	advance(t, w, 2500*time.Millisecond)
	must(t, w.Restart("data-2.mg.svc"))
	if snap := w.Raft().Clusters[0]; snap.Ready || snap.Main != "" {
		t.Fatalf("ready before the next attempt (t=3 s): %+v", snap)
	}
	advance(t, w, 500*time.Millisecond)
	if snap := w.Raft().Clusters[0]; !snap.Ready || snap.Main != "instance_2" {
		t.Fatalf("after the attempt at t=3 s: %+v", snap)
	}
}

func TestForceResetWithAMainSucceedsWithoutFailover(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	must(t, w.Kill("data-1.mg.svc"))
	out := dial(t, w, coordBolt(3)).must("FORCE RESET CLUSTER STATE") // forwarded to the leader
	if len(out.notes) != 1 || out.notes[0] != "Coordinator has force reset cluster state." {
		t.Fatalf("notifications %q", out.notes)
	}
	if main := w.Raft().Clusters[0].Main; main != "instance_1" {
		t.Fatalf("FORCE RESET with a (dead) MAIN in Raft failed over to %s", main)
	}
	failsOverOnceSeenDown(t, w, c1, "instance_1", "instance_2")
}

// failsOverOnceSeenDown: the dead MAIN still shows up/main, and the leader fails over to
// next once instance_down_timeout_sec (5 s) has passed.
func failsOverOnceSeenDown(t *testing.T, w *World, c *client, dead, next string) {
	t.Helper()
	if got := row(t, c.must("SHOW INSTANCES").rows, dead); got[4] != "up" || got[5] != "main" {
		t.Fatalf("the dead MAIN %s shows %v, want up/main until the timeout", dead, got)
	}
	advance(t, w, 5*time.Second)
	if main := w.Raft().Clusters[0].Main; main != next {
		t.Fatalf("main %q once the leader sees %s down, want %s", main, dead, next)
	}
}

// noMainToPromote leaves a cluster without a MAIN in Raft and no data instance alive: a
// reconciliation has nothing to promote and retries with backoff.
func noMainToPromote(t *testing.T) (*World, *client) {
	t.Helper()
	w, c1 := setupCluster(t, 3, 2)
	c1.must("DEMOTE INSTANCE instance_1")
	must(t, w.Kill("data-1.mg.svc"))
	must(t, w.Kill("data-2.mg.svc"))
	return w, c1
}

// blockedForceReset sends FORCE RESET where it cannot finish and returns where its outcome
// arrives.
func blockedForceReset(t *testing.T) (*World, <-chan outcome) {
	t.Helper()
	w, c1 := noMainToPromote(t)
	done := make(chan outcome, 1)
	go func() { done <- c1.run("FORCE RESET CLUSTER STATE", nil) }()
	waitForBlockedQuery(t, w)
	return w, done
}

func TestForceResetBlocksUntilReconciled(t *testing.T) {
	w, c1 := noMainToPromote(t)

	// The client gives up; the leader keeps reconciling. (The driver watches a context only when
	// it has a deadline.)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- runCtx(ctx, c1, "FORCE RESET CLUSTER STATE") }()
	waitForBlockedQuery(t, w)
	cancel()
	if err := receive(t, errc); err == nil {
		t.Fatal("FORCE RESET returned while nothing could be promoted")
	}
	if snap := w.Raft().Clusters[0]; snap.Ready {
		t.Fatalf("leader ready during the reset: %+v", snap)
	}
	if got := row(t, c1.must("SHOW INSTANCES").rows, "coordinator_1"); got[4] != "unknown" || got[5] != "leader" {
		t.Fatalf("leader row during the reset: %v", got)
	}

	// A second FORCE RESET finds a not-ready leader.
	if out := c1.run("FORCE RESET CLUSTER STATE", nil); out.err == nil || out.err.Msg != msgNoLeader {
		t.Fatalf("FORCE RESET during a reset: %+v", out)
	}
	must(t, w.Restart("data-1.mg.svc"))
	advance(t, w, time.Second)
	if snap := w.Raft().Clusters[0]; !snap.Ready || snap.Main != "instance_1" {
		t.Fatalf("after the retry: %+v", snap)
	}
}

func TestBlockedForceResetReturnsOnceReconciledOrWhenLeadershipIsLost(t *testing.T) {
	t.Run("reconciled", func(t *testing.T) {
		w, done := blockedForceReset(t)
		must(t, w.Restart("data-2.mg.svc"))
		select {
		case out := <-done:
			t.Fatalf("returned before the next attempt: %+v", out)
		case <-time.After(50 * time.Millisecond):
		}
		advance(t, w, time.Second)
		if out := receive(t, done); out.err != nil || len(out.notes) != 1 {
			t.Fatalf("FORCE RESET after the retry: %+v", out)
		}
		if main := w.Raft().Clusters[0].Main; main != "instance_2" {
			t.Fatalf("main %q", main)
		}
	})
	t.Run("leadership lost", func(t *testing.T) {
		w, done := blockedForceReset(t)
		must(t, w.Kill("coord-2.mg.svc"))
		must(t, w.Kill("coord-3.mg.svc"))
		advance(t, w, LeadershipExpiry)
		if out := receive(t, done); out.err == nil || out.err.Msg != msgForceResetNotLeader {
			t.Fatalf("FORCE RESET when the leadership expired: %+v", out)
		}
	})
}

// waitForBlockedQuery returns once a query waits inside the World with its wake-up scheduled on
// the World's clock, so the test's next Advance reaches it.
func waitForBlockedQuery(t *testing.T, w *World) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); w.BlockedQueries() == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no query blocked within 10s")
		}
	}
}

// receive is the outcome from done, or a failure (not a hung test) when none arrives in 10s.
func receive[T any](t *testing.T, done <-chan T) T {
	t.Helper()
	select {
	case out := <-done:
		return out
	case <-time.After(10 * time.Second):
		t.Fatal("no outcome within 10s")
		panic("unreachable")
	}
}

// runCtx runs one auto-commit query bounded by ctx and returns its error.
func runCtx(ctx context.Context, c *client, query string) error {
	s := c.drv.NewSession(ctx, sessionConfig)
	defer s.Close(ctx)
	res, err := s.Run(ctx, query, nil)
	if err != nil {
		return err
	}
	_, err = res.Consume(ctx)
	return err
}

func TestSetMainOnADeadInstanceSucceedsAndTheLeaderFailsOverLater(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	c1.must("DEMOTE INSTANCE instance_1")
	must(t, w.Kill("data-2.mg.svc"))
	c1.must("SET INSTANCE instance_2 TO MAIN")
	if rows := c1.must("SHOW REPLICATION LAG").rows; len(rows) != 0 {
		t.Fatalf("lag rows while the MAIN does not answer: %v", rows)
	}
	failsOverOnceSeenDown(t, w, c1, "instance_2", "instance_1") // back to the demoted instance
}

func TestUnregisterRefusesAMainTheLeaderStillSeesAlive(t *testing.T) {
	w, c1 := setupCluster(t, 1, 1)
	must(t, w.Kill("data-1.mg.svc"))
	if out := c1.run("UNREGISTER INSTANCE instance_1", nil); out.err == nil || out.err.Msg != msgAliveMain {
		t.Fatalf("UNREGISTER of a MAIN dead for less than the timeout: %+v", out)
	}
	advance(t, w, 5*time.Second)
	c1.must("UNREGISTER INSTANCE instance_1")
}

func TestReplicationLagIsSortedByName(t *testing.T) {
	w := startWorld(t, 1, 3)
	c1 := dial(t, w, coordBolt(1))
	c1.must(addQuery(1))
	for _, n := range []int{3, 1, 2} {
		c1.must(registerQuery(n))
	}
	c1.must("SET INSTANCE instance_2 TO MAIN")
	var names []string
	for _, r := range c1.must("SHOW REPLICATION LAG").rows {
		names = append(names, r["instance_name"].(string))
	}
	if d := cmp.Diff([]string{"instance_1", "instance_2", "instance_3"}, names); d != "" {
		t.Fatalf("lag row order (-want +got):\n%s", d)
	}
}

func TestSlowJoinLeavesAHalfJoinedMember(t *testing.T) {
	w, c1 := setupCluster(t, 3, 1)
	must(t, w.StartCoordinator(coordSpec(4)))
	must(t, w.SetJoinDelay("coord-4.mg.svc", 3*time.Second))
	if out := c1.run(addQuery(4), nil); out.err == nil || out.err.Msg != "Request for adding coordinator 4 reached a timeout!" {
		t.Fatalf("ADD of a slow coordinator: %+v", out)
	}
	if n := len(c1.must("SHOW INSTANCES").rows); n != 4 {
		t.Fatalf("%d rows before the late join", n)
	}
	advance(t, w, 3*time.Second)
	want := [6]string{"coordinator_4", "", "coord-4.mg.svc:12000", "coord-4.mg.svc:10000", "up", "follower"}
	if got := row(t, c1.must("SHOW INSTANCES").rows, "coordinator_4"); got != want {
		t.Fatalf("late joiner %v, want %v", got, want)
	}
	if out := c1.run(addQuery(4), nil); out.err == nil || out.err.Msg != msgCoordIDExists {
		t.Fatalf("ADD of the half-joined id: %+v", out)
	}
	if snap := w.Raft().Clusters[0]; len(snap.Members) != 4 || snap.Members[3].Added {
		t.Fatalf("raft %+v", snap)
	}
	if m := w.Misuses(); len(m) != 0 {
		t.Fatalf("misuses %+v", m)
	}
}

func TestRemovingAHalfJoinedMemberCrashesTheLeader(t *testing.T) {
	for _, via := range []int{1, 2} {
		w, _ := setupCluster(t, 3, 1)
		must(t, w.StartCoordinator(coordSpec(4)))
		must(t, w.SetJoinDelay("coord-4.mg.svc", 3*time.Second))
		dial(t, w, coordBolt(1)).run(addQuery(4), nil)
		advance(t, w, 3*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := runCtx(ctx, dial(t, w, coordBolt(via)), "REMOVE COORDINATOR 4")
		var ne *neo4j.Neo4jError
		switch {
		case err == nil:
			t.Fatalf("via coordinator %d: REMOVE of a half-joined member answered success", via)
		case via == 1 && errors.As(err, &ne):
			t.Fatalf("sent to the leader: got an answer %v, want the connection to drop", err)
		case via == 2 && (!errors.As(err, &ne) || ne.Msg != msgForwardFailed):
			t.Fatalf("sent to a follower: %v, want the forwarding failure", err)
		}
		m := w.Misuses()
		if len(m) != 1 || m[0].Kind != MisuseRemoveHalfJoined || m[0].Host != "coord-"+string(rune('0'+via))+".mg.svc" {
			t.Fatalf("via coordinator %d: misuses %+v", via, m)
		}
		snap := w.Raft()
		led := snap.Clusters[0] // the oldest: the real cluster (coordinator_4 now holds an orphaned copy)
		if len(led.Members) != 3 || led.Members[0].Alive || led.Leader != 2 {
			t.Fatalf("via coordinator %d: the leader should have exited and coordinator_2 taken over: %+v", via, snap)
		}
		if w.Running("coord-1.mg.svc") {
			t.Fatalf("via coordinator %d: the crashed leader's process still runs", via)
		}
		must(t, w.Restart("coord-1.mg.svc"))
		if got := row(t, dial(t, w, coordBolt(1)).must("SHOW INSTANCES").rows, "coordinator_1"); got[4] != "up" {
			t.Fatalf("via coordinator %d: the restarted coordinator_1 shows %v", via, got)
		}
	}
}

func TestUnreachableTargetWithoutJoinDelayNeverJoins(t *testing.T) {
	w, c1 := setupCluster(t, 3, 1)
	must(t, w.StartCoordinator(coordSpec(4)))
	must(t, w.Kill("coord-4.mg.svc"))
	if out := c1.run(addQuery(4), nil); out.err == nil || out.err.Msg != "Request for adding coordinator 4 reached a timeout!" {
		t.Fatalf("ADD of a dead coordinator: %+v", out)
	}
	must(t, w.Restart("coord-4.mg.svc"))
	advance(t, w, time.Minute)
	if n := len(w.Raft().Clusters[0].Members); n != 3 {
		t.Fatalf("%d members", n)
	}
	must(t, w.SetJoinDelay("coord-4.mg.svc", time.Second)) // slow but within the 2 s poll
	c1.must(addQuery(4))
	if got := row(t, c1.must("SHOW INSTANCES").rows, "coordinator_4"); got[1] != "coord-4.mg.svc:7687" {
		t.Fatalf("joined within the poll: %v", got)
	}
}

func TestManualClockRunsDueFunctionsInTimeOrder(t *testing.T) {
	c := NewManualClock(epoch)
	var got []string
	c.At(epoch.Add(3*time.Second), func() { got = append(got, "3s") })
	stop := c.At(epoch.Add(2*time.Second), func() { got = append(got, "2s stopped") })
	c.At(epoch.Add(time.Second), func() { got = append(got, "1s") })
	c.At(epoch.Add(time.Second), func() { got = append(got, "1s again") })
	if !stop() {
		t.Fatal("stop of a pending call reported false")
	}
	c.Advance(1500 * time.Millisecond)
	c.Advance(1500 * time.Millisecond)
	if d := cmp.Diff([]string{"1s", "1s again", "3s"}, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	if !c.Now().Equal(epoch.Add(3 * time.Second)) {
		t.Fatalf("now %v", c.Now())
	}
}

// TestManualClockKeepsTheTimeAskedFor is the wake-up a blocked query schedules while a test
// moves the clock: a time read before the move is still the time it fires at, and a time the
// clock has already passed fires at once.
func TestManualClockKeepsTheTimeAskedFor(t *testing.T) {
	c := NewManualClock(epoch)
	at := c.Now().Add(time.Second)
	c.Advance(500 * time.Millisecond) // between the caller's Now and its At
	fired := make(chan string, 2)
	c.At(at, func() { fired <- "at 1s" })
	c.Advance(500 * time.Millisecond)
	select {
	case got := <-fired:
		if got != "at 1s" {
			t.Fatalf("fired %q", got)
		}
	default:
		t.Fatal("the call for 1s did not happen when the clock reached 1s")
	}
	c.At(epoch, func() { fired <- "past" })
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("a call for a time already passed did not happen")
	}
}

func TestReplicasCatchUpWithAFailedOverMain(t *testing.T) {
	w, c1 := setupCluster(t, 1, 3)
	must(t, w.Commit("memgraph", 4))
	must(t, w.SetLag("data-3.mg.svc", "memgraph", 2))
	must(t, w.Kill("data-1.mg.svc"))
	must(t, w.SetLag("data-3.mg.svc", "memgraph", 0)) // the old MAIN is dead: nothing to catch up from yet
	advance(t, w, 5*time.Second)
	if main := w.Raft().Clusters[0].Main; main != "instance_2" {
		t.Fatalf("main %q", main)
	}
	for _, r := range c1.must("SHOW REPLICATION LAG").rows {
		// The dead old MAIN never answered the new MAIN's heartbeats: its cache has nothing for
		// it (replication_client.cpp 120–135), so it shows all 4 behind.
		want := int64(0)
		if r["instance_name"] == "instance_1" {
			want = 4
		}
		if behind := r["data_info"].(map[string]any)["memgraph"].(map[string]any)["num_txns_behind_main"]; behind != want {
			t.Fatalf("%s is %v behind the new MAIN, want %d", r["instance_name"], behind, want)
		}
	}
}

func TestDivergedOldMainIsRecoveredFromTheNewMain(t *testing.T) {
	w, c1 := setupCluster(t, 1, 2)
	must(t, w.SetLag("data-2.mg.svc", "memgraph", 3))
	must(t, w.Commit("memgraph", 5)) // instance_2 holds 2 of instance_1's 5
	must(t, w.Kill("data-1.mg.svc"))
	must(t, w.SetLag("data-2.mg.svc", "memgraph", 0))
	advance(t, w, 5*time.Second) // failover to instance_2: the 3 transactions only instance_1 had are lost
	must(t, w.Restart("data-1.mg.svc"))
	for _, r := range c1.must("SHOW REPLICATION LAG").rows {
		info := r["data_info"].(map[string]any)["memgraph"].(map[string]any)
		if info["num_committed_txns"] != int64(2) || info["num_txns_behind_main"] != int64(0) {
			t.Fatalf("%s: %v, want the new MAIN's 2 transactions and nothing behind", r["instance_name"], info)
		}
	}
}

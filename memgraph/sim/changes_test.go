package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestChangesLogWhatMemgraphWouldReport: queries change nothing; a dead leader, the election
// after the election timeout, the new leader's reconciliation and a failover of a dead MAIN are
// each logged, at the simulated time they happen, under the process's host or the Raft group's
// first member's.
func TestChangesLogWhatMemgraphWouldReport(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2, WithElectionTimeout(3*time.Second))
	mark := len(w.Changes())
	for range 3 {
		c1.must("SHOW INSTANCES")
		c1.must("SHOW REPLICATION LAG")
		advance(t, w, time.Second)
	}
	if got := w.Changes()[mark:]; len(got) != 0 {
		t.Fatalf("reads changed what Memgraph reports: %v", got)
	}

	killedAt := w.opts.clock.Now()
	must(t, w.Kill("coord-1.mg.svc"))
	advance(t, w, 3*time.Second)
	must(t, w.Kill("data-1.mg.svc"))
	advance(t, w, 10*time.Second)
	type change struct {
		After      time.Duration
		Host, What string
	}
	var got []change
	for _, c := range w.Changes()[mark:] {
		got = append(got, change{c.At.Sub(killedAt), c.Host, c.What})
	}
	want := []change{
		{0, "coord-1.mg.svc", "process stopped"},
		{0, "coord-1.mg.svc", "no leader (term 2)"},
		{3 * time.Second, "coord-1.mg.svc", "coordinator_2 leads (term 3)"},
		{3 * time.Second, "coord-1.mg.svc", "leader not ready (reconciling)"},
		{3 * time.Second, "coord-1.mg.svc", "leader ready"},
		{3 * time.Second, "data-1.mg.svc", "process stopped"},
		{8 * time.Second, "coord-1.mg.svc", "MAIN instance_2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

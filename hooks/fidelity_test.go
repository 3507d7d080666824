package hooks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Scenarios where Memgraph 3.12's real behaviour (Memgraph v3.12.0, src/coordination/) differs
// from what an instantaneous model suggests: half-joined coordinators, a blocking FORCE RESET,
// SET INSTANCE TO MAIN that accepts a dead target, and leaders that are not ready.

// tap puts a tapConnector between the hook and the simulator.
func (h *harness) tap() *tapConnector {
	tap := &tapConnector{inner: h.pool}
	h.handler = hooks.NewHandler(hooks.Config{Connector: tap, SyncBudget: 5 * time.Second})
	return tap
}

// halfJoin grows the coordinators from 3 to 5 with coordinator_5 too slow to join within ADD
// COORDINATOR's wait: the ADD answers "reached a timeout!" and NuRaft completes the join later,
// leaving coordinator_5 a member without a bolt_server.
func (h *harness) halfJoin() {
	h.t.Helper()
	h.bootstrap()
	h.must(h.world.SetJoinDelay(h.network().Coordinator(5).Host, 3*time.Second))
	h.scale(5, 2)
	h.sync() // the StatefulSet grows; the pods start
	h.sync() // ADD COORDINATOR 4 succeeds, ADD COORDINATOR 5 times out
	h.advance(3 * time.Second)
	for _, r := range h.showInstances() {
		if r.Name == "coordinator_5" && r.BoltServer == "" {
			return
		}
	}
	h.t.Fatalf("coordinator_5 did not half-join: %+v", h.showInstances())
}

func TestHalfJoinedCoordinatorIsReportedNotCountedAsRegistered(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.halfJoin()
	h.world.ResetLog()
	h.sync()
	st, reason, msg := h.condition(v1alpha1.ConditionConverged)
	if st != "False" || reason != v1alpha1.ReasonCoordinatorHalfJoined {
		t.Fatalf("Converged %s/%s (%s), want False/CoordinatorHalfJoined", st, reason, msg)
	}
	for _, want := range []string{"coordinator_5", "would stop the leader"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Converged message %q does not say %q", msg, want)
		}
	}
	for _, q := range h.world.Queries() {
		if strings.HasPrefix(q.Text, "ADD COORDINATOR 5") {
			t.Errorf("re-issued %q for the half-joined coordinator_5", q.Text)
		}
	}
	h.assertNoMisuse()
}

func TestShrinkNeverRemovesAHalfJoinedCoordinator(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.halfJoin()
	h.scale(3, 2)
	for i := 0; i < 3; i++ {
		h.sync()
		h.assertNoMisuse()
	}
	if c, _ := h.replicas(); c != 5 {
		t.Errorf("coordinators returned at %d while the half-joined coordinator_5 is a member, want 5", c)
	}
	if st, reason, msg := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonCoordinatorHalfJoined {
		t.Errorf("Converged %s/%s (%s), want False/CoordinatorHalfJoined", st, reason, msg)
	}
	if diff := cmp.Diff([]string{"coordinator_1", "coordinator_2", "coordinator_3", "instance_0", "instance_1"}, h.registered()); diff != "" {
		t.Errorf("registered (-want +got):\n%s", diff)
	}
	h.assertLeaderAlive()

	// The remedy: once the half-joined coordinator leads (here forced, in practice by restarting
	// the leader until it wins), the hook ADDs it as itself, yields, and removes it.
	h.must(h.world.ForceLeader(5))
	for i := 0; i < 5 && h.lastCoordinatorReplicas() != 3; i++ {
		h.sync()
		h.assertNoMisuse()
	}
	h.sync()
	h.assertConverged()
	h.assertLeaderAlive()
}

// assertLeaderAlive fails if a coordinator whose pod runs has exited (the simulator crashes the
// leader when it is asked to REMOVE a half-joined member).
func (h *harness) assertLeaderAlive() {
	h.t.Helper()
	c, _ := h.replicas()
	for i := 0; i < c; i++ {
		pod := fmt.Sprintf("%s-%d", topology.CoordinatorSetName(h.name), 1+i)
		if _, exists := h.pods[pod]; !exists {
			continue // replaced by the StatefulSet controller, not yet created again
		}
		if host := h.network().Coordinator(1 + i).Host; !h.killed[host] && !h.world.Running(host) {
			h.t.Fatalf("coordinator_%d (%s) exited", 1+i, host)
		}
	}
}

// interruptedHandover parks MAIN on the retiring instance_2 with instance_0 lagging, shrinks the
// data instances to 2 and demotes instance_2 by hand, as a pass killed between DEMOTE and SET
// would have left it.
func (h *harness) interruptedHandover() {
	h.t.Helper()
	h.bootstrap()
	h.parkMain("instance_2")
	n := h.network()
	h.must(h.world.SetLag(n.DataInstance(0).Host, "memgraph", 5))
	h.must(h.world.Commit("memgraph", 10))
	h.scale(3, 2)
	leader := h.pool.Client(n.Coordinator(1).BoltServer)
	h.must(leader.DemoteInstance(context.Background(), "instance_2"))
}

func TestForceResetStillRunningIsInProgress(t *testing.T) {
	h := newHarness(t, 3, 3, withWorld(sim.WithLeaderReadyDelay(3*time.Second)))
	h.interruptedHandover()
	h.world.ResetLog()
	h.sync()
	if st, reason, msg := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonFailoverInProgress {
		t.Fatalf("Converged %s/%s (%s), want False/FailoverInProgress", st, reason, msg)
	}
	if h.lastResp.ResyncAfterSeconds > 2 {
		t.Errorf("resyncAfterSeconds = %v while FORCE RESET runs, want a quick re-observation", h.lastResp.ResyncAfterSeconds)
	}
	var writes []string
	for _, q := range h.world.Queries() {
		if !strings.HasPrefix(q.Text, "SHOW ") {
			writes = append(writes, q.Text)
		}
	}
	if diff := cmp.Diff([]string{memgraph.ForceResetClusterStateQuery}, writes); diff != "" {
		t.Errorf("writes of the pass (-want +got):\n%s", diff)
	}
	if !h.registeredSet()["instance_2"] {
		t.Errorf("instance_2 was unregistered while no MAIN was proven")
	}

	h.advance(3 * time.Second) // the leader's reconciliation fails over
	mains := h.mains()
	if len(mains) != 1 || mains[0] == "instance_0" {
		t.Fatalf("MAINs after the reconciliation: %v, want one that is not the lagging instance_0", mains)
	}
	h.must(h.world.SetLag(h.network().DataInstance(0).Host, "memgraph", 0))
	for i := 0; i < 4; i++ {
		h.sync()
	}
	h.assertConverged()
	h.assertNoMisuse()
}

func TestForceResetEndedByLostLeadershipIsNotAFailure(t *testing.T) {
	h := newHarness(t, 3, 3, withForceResetTimeout(4*time.Second))
	h.interruptedHandover()
	n := h.network()
	for ord := 0; ord < 3; ord++ { // nothing can be promoted: FORCE RESET keeps retrying
		h.kill(n.DataInstance(ord).Host)
	}
	wait := h.syncAsync()
	waitForBlockedQuery(t, h.world)
	h.kill(n.Coordinator(2).Host)
	h.kill(n.Coordinator(3).Host)
	h.advance(sim.LeadershipExpiry)
	wait()
	st, reason, msg := h.condition(v1alpha1.ConditionConverged)
	if st != "False" || reason != v1alpha1.ReasonLeadershipTransferInProgress || !strings.Contains(msg, "not leader anymore") {
		t.Fatalf("Converged %s/%s (%s): losing the leadership during FORCE RESET is no failure, want LeadershipTransferInProgress", st, reason, msg)
	}
	if h.lastResp.ResyncAfterSeconds > 2 {
		t.Errorf("resyncAfterSeconds = %v, want a quick re-discovery", h.lastResp.ResyncAfterSeconds)
	}
	for _, host := range []string{n.Coordinator(2).Host, n.Coordinator(3).Host, n.DataInstance(0).Host, n.DataInstance(1).Host, n.DataInstance(2).Host} {
		h.restart(host)
	}
	h.must(h.world.SetLag(n.DataInstance(0).Host, "memgraph", 0))
	for i := 0; i < 4; i++ {
		h.advance(time.Minute)
		h.sync()
	}
	h.assertConverged()
	h.assertNoMisuse()
}

func (h *harness) kill(host string) {
	h.t.Helper()
	h.must(h.world.Kill(host))
	if h.killed == nil {
		h.killed = map[string]bool{}
	}
	h.killed[host] = true
}

func (h *harness) restart(host string) {
	h.t.Helper()
	h.must(h.world.Restart(host))
	delete(h.killed, host)
}

// waitForBlockedQuery returns once a query waits inside the simulator with its wake-up scheduled
// on the World's clock, so the test's next advance reaches it.
func waitForBlockedQuery(t *testing.T, w *sim.World) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); w.BlockedQueries() == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no query blocked in the simulator within 10s")
		}
	}
}

// retireMain taps the hook's connection, parks MAIN on instance_1 and shrinks the data instances
// to one: the next sync hands MAIN over to instance_0.
func (h *harness) retireMain() *tapConnector {
	h.t.Helper()
	tap := h.tap()
	h.bootstrap()
	h.parkMain("instance_1")
	h.scale(3, 1)
	return tap
}

// assertMains compares the MAINs SHOW INSTANCES reports.
func (h *harness) assertMains(want ...string) {
	h.t.Helper()
	if diff := cmp.Diff(want, h.mains()); diff != "" {
		h.t.Errorf("MAINs (-want +got):\n%s", diff)
	}
}

// SET INSTANCE … TO MAIN succeeds for a target that just died (Raft first); the hook must not
// take that for a finished handover and unregister the old MAIN: the coordinators fail over
// (back to it) once they see the new MAIN down, and the retirement plans again from there.
func TestHandoverToACandidateThatDiesIsNotTakenForDone(t *testing.T) {
	h := newHarness(t, 3, 2)
	tap := h.retireMain()
	candidate := h.network().DataInstance(0).Host
	tap.afterLag = func() { h.kill(candidate) } // between the plan and the DEMOTE
	h.sync()
	if !h.registeredSet()["instance_1"] {
		t.Fatal("the old MAIN instance_1 was unregistered although its successor never served as MAIN")
	}
	if _, d := h.replicas(); d != 2 {
		t.Errorf("data replicas %d, want 2 while instance_1 is registered", d)
	}
	if st, _, _ := h.condition(v1alpha1.ConditionConverged); st != "False" {
		t.Errorf("Converged %s after an unproven handover", st)
	}

	h.advance(5 * time.Second) // the leader sees instance_0 down and fails over to instance_1
	if diff := cmp.Diff([]string{"instance_1"}, h.mains()); diff != "" {
		t.Fatalf("MAIN after the failover (-want +got):\n%s", diff)
	}
	h.sync()
	if st, reason, msg := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonNoCaughtUpSurvivor {
		t.Errorf("Converged %s/%s (%s), want False/NoCaughtUpSurvivor while instance_0 is down", st, reason, msg)
	}
	h.restart(candidate)
	for i := 0; i < 3; i++ {
		h.sync()
	}
	h.assertConverged()
	h.assertMains("instance_0")
	h.assertNoMisuse()
}

// A SET INSTANCE … TO MAIN that Memgraph refuses without electing anyone (here: the candidate was
// unregistered meanwhile) restores the old MAIN at once.
func TestRefusedPromotionRestoresTheOldMain(t *testing.T) {
	h := newHarness(t, 3, 2)
	tap := h.retireMain()
	tap.afterDemote = func() {
		leader := h.pool.Client(h.network().Coordinator(1).BoltServer)
		h.must(leader.UnregisterInstance(context.Background(), "instance_0"))
	}
	h.sync()
	st, reason, msg := h.condition(v1alpha1.ConditionConverged)
	if st != "False" || reason != v1alpha1.ReasonRegistrationFailed {
		t.Fatalf("Converged %s/%s (%s), want False/RegistrationFailed", st, reason, msg)
	}
	if !strings.Contains(msg, "No instance with such name!") || !strings.Contains(msg, "instance_1 restored as MAIN") {
		t.Errorf("Converged message %q should carry Memgraph's refusal and say the old MAIN was restored", msg)
	}
	h.assertMains("instance_1")
	if st, _, _ := h.condition(v1alpha1.ConditionReady); st != "True" {
		t.Errorf("Ready = %s after the restore, want True (the cluster serves again)", st)
	}
	if _, d := h.replicas(); d != 2 {
		t.Errorf("returned %d data replicas, want 2: the retirement made no progress", d)
	}
	h.assertNoMisuse()
}

func TestNotReadyLeaderIsNoLeaderYet(t *testing.T) {
	h := newHarness(t, 3, 3, withWorld(sim.WithLeaderReadyDelay(3*time.Second)))
	h.bootstrap()
	h.assertConverged()
	h.scale(3, 2)
	h.must(h.world.ForceLeader(2))
	h.world.ResetLog()
	h.sync()
	assertOnlyReads(t, h.world.Queries())
	if st, reason, msg := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonNoCoordinatorLeader || !strings.Contains(msg, "not ready") {
		t.Errorf("Converged %s/%s (%s), want False/NoCoordinatorLeader saying the leader is not ready", st, reason, msg)
	}
	if h.lastResp.ResyncAfterSeconds > 2 {
		t.Errorf("resyncAfterSeconds = %v, want a quick retry", h.lastResp.ResyncAfterSeconds)
	}
	if _, d := h.replicas(); d != 3 {
		t.Errorf("data replicas %d from a pass that saw no ready leader, want 3", d)
	}
	h.advance(3 * time.Second)
	for i := 0; i < 3; i++ {
		h.sync()
	}
	h.assertConverged()
	h.assertNoMisuse()
}

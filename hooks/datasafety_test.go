package hooks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Data safety on the simulator: a lag of 0 is not proof of catch-up, so every path
// that makes a MAIN waits for the MAIN's SHOW REPLICAS to report its target ready; the hook never
// makes a MAIN newer than an alive replica; a downgrade is refused until annotated. Each scenario
// lost acknowledged writes, or made a newer MAIN over an older replica, with the hook before it
// (the simulator records both as misuses: promote-behind, newer-main-older-replica).

// recoveryTime is how long a wiped replica takes to recover from its MAIN in these scenarios.
const recoveryTime = 30 * time.Second

func newRecoveryHarness(t *testing.T, data int) *harness {
	h := newHarness(t, 3, data, withWorld(sim.WithReplicaRecoveryTime(recoveryTime)))
	h.bootstrap()
	h.assertConverged()
	h.clientWrites(5) // acknowledged: every replica confirmed them
	if got := h.world.Acknowledged(propertyDB); got != 5 {
		t.Fatalf("%d writes acknowledged, want 5", got)
	}
	return h
}

// wipe restarts a data instance on an empty volume and checks the premise of these scenarios:
// SHOW REPLICATION LAG still reads 0 for it (the MAIN's cached count), while it recovers.
func (h *harness) wipe(ordinal int) {
	h.t.Helper()
	h.must(h.world.Wipe(h.network().DataInstance(ordinal).Host))
	lag, err := h.pool.Client(h.network().Coordinator(1).BoltServer).ShowReplicationLag(context.Background())
	h.must(err)
	name := h.network().DataInstance(ordinal).Name
	for _, l := range lag {
		if l.Instance == name && l.Databases[propertyDB].TxnsBehindMain != 0 {
			h.t.Fatalf("the wiped %s shows %d behind: the scenario needs the stale 0", name, l.Databases[propertyDB].TxnsBehindMain)
		}
	}
}

func (h *harness) assertSafe() {
	h.t.Helper()
	h.assertNoMisuse()
	h.assertNoAcknowledgedWriteLost()
}

func TestSwitchoverWaitsUntilARecoveringReplicaIsReady(t *testing.T) {
	h := newRecoveryHarness(t, 3)
	h.wipe(2)
	h.spec["preferredMain"] = "instance_2"
	h.world.ResetLog()
	h.sync()
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonSwitchoverPending)
	if !strings.Contains(msg, "instance_2 is recovery, not ready") {
		t.Errorf("SwitchoverPending %q does not say that instance_2 recovers", msg)
	}
	h.assertMains("instance_0")
	if w := h.boltWrites(); len(w) != 0 {
		t.Fatalf("writes while the preferred MAIN recovers: %q", w)
	}
	h.advance(recoveryTime)
	h.sync()
	h.assertMains("instance_2")
	h.sync()
	h.assertConverged()
	h.assertSafe()
}

func TestRetirementWaitsUntilASurvivorIsReady(t *testing.T) {
	h := newRecoveryHarness(t, 3)
	h.parkMain("instance_2")
	h.clientWrites(2)
	h.wipe(0)
	h.wipe(1)
	h.scale(3, 2)
	h.world.ResetLog()
	h.sync()
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonNoCaughtUpSurvivor)
	if !strings.Contains(msg, "instance_0 is recovery, not ready") || !strings.Contains(msg, "instance_1 is recovery, not ready") {
		t.Errorf("NoCaughtUpSurvivor %q does not name both recovering survivors", msg)
	}
	h.assertMains("instance_2")
	if w := h.boltWrites(); len(w) != 0 {
		t.Fatalf("writes while every survivor recovers: %q", w)
	}
	h.advance(recoveryTime)
	for range 3 {
		h.sync()
	}
	h.assertMains("instance_0")
	h.assertConverged()
	h.assertSafe()
}

// After a failover away from the preferred MAIN, it returns and then loses its volume (its pod
// moved to another node): MAIN is moved back only once it has recovered everything, although the
// new MAIN's cached lag for it reads 0.
func TestSwitchBackAfterAFailoverWaitsUntilReady(t *testing.T) {
	h := newRecoveryHarness(t, 3)
	h.spec["preferredMain"] = "instance_0"
	h.sync()
	host := h.network().DataInstance(0).Host
	h.kill(host)
	h.advance(6 * time.Second) // instance_down_timeout_sec: the coordinators fail over
	if main := h.world.Raft().Clusters[0].Main; main == "instance_0" {
		t.Fatalf("no failover: MAIN is still %s", main)
	}
	h.restart(host) // back as a replica, caught up
	h.clientWrites(3)
	h.wipe(0)
	h.world.ResetLog()
	h.sync()
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonSwitchoverPending)
	if !strings.Contains(msg, "instance_0 is recovery, not ready") {
		t.Errorf("SwitchoverPending %q does not say that instance_0 recovers", msg)
	}
	if w := h.boltWrites(); len(w) != 0 {
		t.Fatalf("writes while the preferred MAIN recovers: %q", w)
	}
	h.advance(recoveryTime)
	h.sync()
	h.assertMains("instance_0")
	h.assertSafe()
}

// A tag older than what the pods run is refused until the MemgraphCluster is annotated, and
// while the MAIN runs the newer version, even annotated: nothing is replaced meanwhile, and the
// status says which versions and why.
func TestDowngradeIsRefusedUntilAnnotated(t *testing.T) {
	h, w := convergedForRollout(t, 3, 3)
	h.setTag("3.12.1")
	h.rollOut(w, 60)
	h.assertNoMisuse()
	replaced := len(h.replaced)

	h.setTag("3.12.0")
	for range 5 {
		h.sync()
	}
	msg := h.assertCondition(v1alpha1.ConditionUpdated, "False", v1alpha1.ReasonDowngradeRefused)
	for _, want := range []string{"3.12.0", "3.12.1", topology.AnnotationAllowDowngrade} {
		if !strings.Contains(msg, want) {
			t.Errorf("DowngradeRefused %q does not mention %q", msg, want)
		}
	}
	if len(h.replaced) != replaced {
		t.Fatalf("pods replaced while the downgrade is refused: %v", h.replaced[replaced:])
	}

	// Annotated, it is still not rolled while the MAIN runs 3.12.1: the replicas replaced first
	// would be older than their MAIN (hibernation carries it out; e2e TestRollingUpgrade).
	h.annotations = map[string]any{topology.AnnotationAllowDowngrade: "true"}
	for range 10 {
		h.sync()
	}
	msg = h.assertCondition(v1alpha1.ConditionUpdated, "False", v1alpha1.ReasonDowngradeNeedsHibernation)
	if !strings.Contains(msg, "spec.hibernate") {
		t.Errorf("DowngradeNeedsHibernation %q does not say to hibernate", msg)
	}
	if len(h.replaced) != replaced {
		t.Fatalf("pods replaced by an allowed downgrade under a newer MAIN: %v", h.replaced[replaced:])
	}
	h.assertNoMisuse()
}

// A MAIN that restarts before the coordinators fail over comes back MAIN but refuses writes
// until the leader re-promotes it: that is neither a reason to hand MAIN over nor to report none.
func TestARestartedMainAwaitingPromotionIsStillTheMain(t *testing.T) {
	h := newRecoveryHarness(t, 2)
	host := h.network().DataInstance(0).Host
	h.kill(host)
	h.advance(time.Second)
	h.restart(host)
	if err := h.world.Write(propertyDB); err == nil {
		t.Fatal("the restarted MAIN took a write before its re-promotion: the scenario needs it not writeable")
	}
	h.world.ResetLog()
	h.sync()
	h.assertCondition(v1alpha1.ConditionReady, "True", v1alpha1.ReasonMainElected)
	h.assertMains("instance_0")
	if got := h.statusField("main"); got != "instance_0" {
		t.Errorf("status.main %q, want instance_0", got)
	}
	if w := h.boltWrites(); len(w) != 0 {
		t.Fatalf("writes beside a MAIN awaiting re-promotion: %q", w)
	}
	h.advance(time.Second)
	h.must(h.world.Write(propertyDB))
	h.assertSafe()
}

// While the leader yields (here an operator ran YIELD LEADERSHIP), every Raft write fails with
// "Writing to Raft log failed": the pass's write is interrupted, not failed, the status says the
// leadership is moving, and the next passes finish the work once Raft has a leader again — even
// when Raft first re-elects the same one.
func TestYieldLeadershipWindowIsNotAFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		choose func(leader int, alive []int) int
	}{
		{"the next coordinator takes over", nil},
		{"the same leader is re-elected first", reelectOnce()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []sim.Option{sim.WithLeadershipTransferTime(3 * time.Second)}
			if tc.choose != nil {
				opts = append(opts, sim.WithYieldChooser(tc.choose))
			}
			h := newHarness(t, 3, 2, withWorld(opts...))
			h.bootstrap()
			h.assertConverged()
			h.scale(3, 3)
			h.sync() // the new pod comes up
			h.must(h.pool.Client(h.network().Coordinator(1).BoltServer).YieldLeadership(context.Background()))
			h.sync()
			if got := h.statusField("lastOperation", "result"); got != string(v1alpha1.OperationInterrupted) {
				t.Errorf("lastOperation.result %q during the yield, want Interrupted (%s)", got, h.statusField("lastOperation", "message"))
			}
			msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonLeadershipTransferInProgress)
			if !strings.Contains(msg, "Writing to Raft log failed") {
				t.Errorf("Converged %q does not quote Memgraph's refusal", msg)
			}
			for i := 0; i < 10; i++ {
				h.advance(time.Second)
				h.sync()
				if st, _, _ := h.condition(v1alpha1.ConditionConverged); st == "True" {
					break
				}
			}
			h.assertConverged()
			if got := h.registered(); !strings.Contains(strings.Join(got, ","), "instance_2") {
				t.Errorf("instance_2 not registered after the yield: %v", got)
			}
			h.assertNoMisuse()
		})
	}
}

// reelectOnce re-elects the yielding leader the first time, then lets the next one win.
func reelectOnce() func(leader int, alive []int) int {
	first := true
	return func(leader int, alive []int) int {
		if first {
			first = false
			return leader
		}
		return alive[0]
	}
}

// A MAIN that died without a failover candidate: a data instance added now would be the only
// candidate, empty, and Memgraph would promote it. The hook registers nobody until the MAIN is
// back and answers.
func TestNoRegistrationBesideADeadMain(t *testing.T) {
	h := newRecoveryHarness(t, 1)
	host := h.network().DataInstance(0).Host
	h.kill(host)
	h.advance(6 * time.Second)
	h.scale(3, 2)
	h.world.ResetLog()
	for range 3 {
		h.sync()
		h.advance(6 * time.Second)
	}
	if got := h.registered(); strings.Contains(strings.Join(got, ","), "instance_1") {
		t.Fatalf("instance_1 registered beside a dead MAIN: %v", got)
	}
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonRegistrationInProgress)
	if !strings.Contains(msg, "registering instance_1 waits") {
		t.Errorf("Converged %q does not say why instance_1 waits", msg)
	}
	h.restart(host)
	for range 3 {
		h.sync()
		h.advance(time.Second)
	}
	h.assertMains("instance_0")
	h.assertConverged()
	h.assertSafe()
}

// An image whose tag is no version is outside every version rule; status.warnings says so, once,
// and an ambiguous downgrade annotation is read as no permission, with a warning.
func TestVersionWarnings(t *testing.T) {
	h, _ := convergedForRollout(t, 3, 2)
	h.setTag("latest")
	h.annotations = map[string]any{topology.AnnotationAllowDowngrade: "yes"}
	h.sync()
	warnings, _ := h.lastResp.Status["warnings"].([]any)
	var unknown, ambiguous int
	for _, w := range warnings {
		s := w.(string)
		if strings.Contains(s, "docker.io/memgraph/memgraph:latest") && strings.Contains(s, "is unknown") {
			unknown++
		}
		if strings.Contains(s, topology.AnnotationAllowDowngrade) && strings.Contains(s, `read as "false"`) {
			ambiguous++
		}
	}
	if unknown != 1 || ambiguous != 1 {
		t.Errorf("warnings %q: want one about the unknown version and one about the annotation", warnings)
	}
}

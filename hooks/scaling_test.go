package hooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
)

func (h *harness) scale(coordinators, data int) {
	h.spec["coordinators"], h.spec["dataInstances"] = coordinators, data
}

// parkMain moves MAIN to the named instance the way an operator would by hand.
func (h *harness) parkMain(name string) {
	h.t.Helper()
	c := h.pool.Client(h.network().Coordinator(1).BoltServer)
	ctx := context.Background()
	h.must(c.DemoteInstance(ctx, "instance_0"))
	h.must(c.SetInstanceToMain(ctx, name))
}

func TestDataScaleDownHandsOverMainBeforeRetiring(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.bootstrap()
	h.assertConverged()
	h.parkMain("instance_2")
	h.scale(3, 2)

	h.sync() // pass 1: hand MAIN over, unregister instance_2; the StatefulSet keeps 3
	if _, d := h.replicas(); d != 3 {
		t.Fatalf("pass 1 returned %d data replicas, want 3 until instance_2 is unregistered", d)
	}
	if st, reason, _ := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonRetirementInProgress {
		t.Errorf("pass 1 Converged %s/%s, want False/RetirementInProgress", st, reason)
	}
	if diff := cmp.Diff([]string{"instance_0"}, h.mains()); diff != "" {
		t.Errorf("MAIN after handover (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"coordinator_1", "coordinator_2", "coordinator_3", "instance_0", "instance_1"}, h.registered()); diff != "" {
		t.Errorf("registered after pass 1 (-want +got):\n%s", diff)
	}
	if !h.pods["memgraph-data-2"] {
		t.Fatal("pod memgraph-data-2 was shed before instance_2 was unregistered")
	}

	h.sync() // pass 2: nothing retiring is registered any more: shrink
	if _, d := h.replicas(); d != 2 {
		t.Fatalf("pass 2 returned %d data replicas, want 2", d)
	}
	h.sync()
	h.assertConverged()
	h.assertNoMisuse()
}

func TestDataScaleDownWaitsForACaughtUpSurvivor(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.bootstrap()
	h.parkMain("instance_1")
	h.must(h.world.SetLag(h.network().DataInstance(0).Host, "memgraph", 5))
	h.must(h.world.Commit("memgraph", 10))
	h.scale(3, 1)
	h.sync()
	if st, reason, msg := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonNoCaughtUpSurvivor {
		t.Fatalf("Converged %s/%s (%s), want False/NoCaughtUpSurvivor", st, reason, msg)
	}
	if diff := cmp.Diff([]string{"instance_1"}, h.mains()); diff != "" {
		t.Errorf("MAIN moved without a caught-up survivor (-want +got):\n%s", diff)
	}
	if _, d := h.replicas(); d != 2 {
		t.Errorf("returned %d data replicas while the MAIN is retiring, want 2", d)
	}
	h.must(h.world.SetLag(h.network().DataInstance(0).Host, "memgraph", 0))
	h.sync()
	h.sync()
	if _, d := h.replicas(); d != 1 {
		t.Errorf("returned %d data replicas once caught up, want 1", d)
	}
	if diff := cmp.Diff([]string{"instance_0"}, h.mains()); diff != "" {
		t.Errorf("MAIN (-want +got):\n%s", diff)
	}
	h.assertNoMisuse()
}

func TestCoordinatorScaleDownWithRetiringLeader(t *testing.T) {
	h := newHarness(t, 5, 2)
	h.bootstrap()
	h.assertConverged()
	h.must(h.world.ForceLeader(5))
	h.scale(3, 2)

	for pass := 1; pass <= 4 && h.lastCoordinatorReplicas() != 3; pass++ {
		h.sync()
		if c, _ := h.replicas(); c == 3 {
			break
		}
	}
	if c, _ := h.replicas(); c != 3 {
		t.Fatalf("coordinators still at %d after 4 passes", c)
	}
	if diff := cmp.Diff([]string{"coordinator_1", "coordinator_2", "coordinator_3", "instance_0", "instance_1"}, h.registered()); diff != "" {
		t.Errorf("registered after the shrink (-want +got):\n%s", diff)
	}
	h.sync()
	h.assertConverged()
	h.assertNoMisuse()
}

func (h *harness) lastCoordinatorReplicas() int {
	c, _ := h.replicas()
	return c
}

func TestScaleUpBothRolesInOneEdit(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.bootstrap()
	h.scale(5, 3)
	h.sync() // new replicas returned at once; their pods come up
	if c, d := h.replicas(); c != 5 || d != 3 {
		t.Fatalf("returned %d/%d replicas, want 5/3 at once", c, d)
	}
	h.sync()
	h.assertConverged()
	if diff := cmp.Diff([]string{"coordinator_1", "coordinator_2", "coordinator_3", "coordinator_4", "coordinator_5",
		"instance_0", "instance_1", "instance_2"}, h.registered()); diff != "" {
		t.Errorf("registered (-want +got):\n%s", diff)
	}
	h.assertNoMisuse()
}

// Metacontroller's cache may still show the StatefulSet, and the pod it shed, as they were
// before a shrink. Such a stale view must neither re-grow the StatefulSet nor re-register the
// retired member.
func TestStaleViewAfterShrinkNeitherRegrowsNorReregisters(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.bootstrap()
	h.scale(3, 2)
	h.sync() // unregisters instance_2, holds 3
	stale := map[string]map[string]any{}
	for k, v := range h.children {
		stale[k] = v
	}
	h.sync() // shrinks to 2; the harness sheds memgraph-data-2
	if _, d := h.replicas(); d != 2 {
		t.Fatalf("shrink pass returned %d data replicas, want 2", d)
	}
	h.children, h.pods["memgraph-data-2"] = stale, true // the cache has not caught up
	h.sync()
	if _, d := h.replicas(); d != 2 {
		t.Errorf("stale view made the hook return %d data replicas, want 2", d)
	}
	for _, name := range h.registered() {
		if name == "instance_2" {
			t.Errorf("stale view re-registered instance_2")
		}
	}
	h.assertNoMisuse()
}

// A handover killed between DEMOTE and SET leaves no MAIN in the middle of a shrink. The next
// pass must not promote by ordinal (instance_0 lags) nor unregister the demoted instance (it
// may hold the latest writes): Memgraph fails over to the most up-to-date replica, and the
// retirement resumes once a MAIN exists.
func TestInterruptedHandoverFailsOverToTheMostUpToDate(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.interruptedHandover() // the pass died after DEMOTE
	n := h.network()
	h.sync()
	mains := h.mains()
	if len(mains) != 1 || mains[0] == "instance_0" {
		t.Fatalf("MAINs after the interrupted handover: %v, want one that is not the lagging instance_0", mains)
	}
	if !h.registeredSet()["instance_2"] {
		// The pass saw no MAIN, so the demoted instance_2 (which may hold the latest writes)
		// must still be registered; it is retired only by a later pass that sees a MAIN.
		t.Errorf("instance_2 was unregistered in the pass that found no MAIN")
	}
	h.must(h.world.SetLag(n.DataInstance(0).Host, "memgraph", 0))
	for i := 0; i < 4; i++ {
		h.sync()
	}
	h.assertConverged()
	if _, d := h.replicas(); d != 2 {
		t.Errorf("data replicas %d after the retirement resumed, want 2", d)
	}
	h.assertNoMisuse()
}

// A survivor that falls behind between the read the handover was planned on and the handover
// itself is not promoted: the hook re-reads the lag right before DEMOTE and plans again.
func TestHandoverIsReplannedWhenASurvivorFallsBehind(t *testing.T) {
	h := newHarness(t, 3, 3)
	tap := &tapConnector{inner: bolt.NewPool(bolt.PoolOptions{Resolver: h.world})}
	h.handler = hooks.NewHandler(hooks.Config{Connector: tap, SyncBudget: 5 * time.Second})
	h.bootstrap()
	h.parkMain("instance_2")
	h.scale(3, 2)
	n := h.network()
	tap.afterLag = func() {
		h.must(h.world.SetLag(n.DataInstance(0).Host, "memgraph", 3))
		h.must(h.world.SetLag(n.DataInstance(1).Host, "memgraph", 3))
		h.must(h.world.Commit("memgraph", 5))
	}
	h.sync()
	if diff := cmp.Diff([]string{"instance_2"}, h.mains()); diff != "" {
		t.Errorf("MAIN moved to a survivor that had fallen behind (-want +got):\n%s", diff)
	}
	if !h.registeredSet()["instance_2"] {
		t.Errorf("the MAIN instance_2 was unregistered")
	}
	if _, d := h.replicas(); d != 3 {
		t.Errorf("returned %d data replicas, want 3 while instance_2 is MAIN", d)
	}
	h.sync()
	if st, reason, msg := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonNoCaughtUpSurvivor {
		t.Errorf("next pass: Converged %s/%s (%s), want False/NoCaughtUpSurvivor", st, reason, msg)
	}
	h.assertNoMisuse()
}

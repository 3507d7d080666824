package hooks_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// A coordinator that lost its state looks exactly like a fresh one. While another coordinator
// is unreachable or still belongs to the established cluster, the hook must not bootstrap a
// second Raft cluster on the wiped one (which would end with two MAINs).
func TestWipedCoordinatorIsNotBootstrappedBesideTheRealCluster(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.bootstrap()
	h.assertConverged()
	n := h.network()
	h.must(h.world.Kill(n.Coordinator(3).Host))
	h.must(h.world.Wipe(n.Coordinator(1).Host))
	h.world.ResetLog()
	h.sync()
	assertOnlyReads(t, h.world.Queries())
	if st, reason, msg := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonNoCoordinatorLeader {
		t.Errorf("Converged %s/%s (%s), want False/NoCoordinatorLeader", st, reason, msg)
	}
	for _, c := range h.world.Raft().Clusters {
		if c.Main != "" && c.Leader == 1 && len(c.Members) > 1 {
			t.Errorf("a second cluster led by the wiped coordinator_1 grew: %+v", c)
		}
	}
	h.assertNoMisuse()
}

// When the cluster cannot be observed, the hook returns the StatefulSets as they are: a status
// or a terminating pod that still shows the size before a shrink must not grow them back.
func TestUnobservedPassNeverRegrowsAfterShrink(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.bootstrap()
	h.scale(3, 2)
	for i := 0; i < 3; i++ {
		h.sync()
	}
	if _, d := h.replicas(); d != 2 {
		t.Fatalf("shrink did not complete: %d data replicas", d)
	}
	req := h.request()
	sts := req["children"].(map[string]any)["StatefulSet.apps/v1"].(map[string]any)["default/memgraph-data"].(map[string]any)
	sts["status"].(map[string]any)["replicas"] = 3
	pods := req["related"].(map[string]any)["Pod.v1"].(map[string]any)
	terminating := readyPod("default", "memgraph-data-2", h.podLabels("memgraph-data-2"))
	terminating["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-01T00:00:00Z"
	pods["default/memgraph-data-2"] = terminating
	restarting := pods["default/memgraph-coordinator-2"].(map[string]any)
	restarting["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Ready", "status": "False"}}

	code, body := h.post("/sync", req)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	var resp syncResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	h.lastResp = resp
	if _, d := h.replicas(); d != 2 {
		t.Errorf("unobserved pass returned %d data replicas, want the StatefulSet's 2", d)
	}
	if _, reason, msg := h.condition(v1alpha1.ConditionConverged); reason != v1alpha1.ReasonWorkloadsNotReady || !strings.Contains(msg, "memgraph-coordinator-2") {
		t.Errorf("Converged %s (%s), want WorkloadsNotReady naming memgraph-coordinator-2", reason, msg)
	}
}

// A pod's address can be reused by another pod once the pod went. When coordinator_2's address
// answers as a fresh coordinator_5 while the cluster has lost its majority, the hook must not
// take that answer for coordinator_2's: bootstrapping on coordinator_5 would pull coordinator_1
// into a second Raft cluster, and the real one could then never take coordinator_2 back (ADD
// COORDINATOR times out for a member of another led cluster), so the cluster would never heal.
func TestAFreshCoordinatorAtAnotherOnesAddressIsNotBootstrapped(t *testing.T) {
	h := newHarness(t, 3, 1)
	h.bootstrap()
	h.assertConverged()
	n := h.network()
	h.kill(n.Coordinator(2).Host)
	h.kill(n.Coordinator(3).Host)
	h.advance(sim.LeadershipExpiry + time.Second) // coordinator_1 names no leader
	h.scale(5, 1)
	h.sync() // coordinator_4 and coordinator_5 start fresh
	h.world.AddAddress(n.Coordinator(2).BoltServer, h.world.Resolve(n.Coordinator(5).BoltServer))
	for i := 0; i < 3; i++ {
		h.advance(time.Second)
		h.sync()
	}
	for _, c := range h.world.Raft().Clusters {
		if c.Leader >= 4 && len(c.Members) > 1 {
			t.Errorf("a second Raft cluster grew on coordinator_%d: %+v", c.Leader, c.Members)
		}
	}
	if _, _, msg := h.condition(v1alpha1.ConditionConverged); !strings.Contains(msg, "another server answers there") {
		t.Errorf("Converged does not say that another server answers at coordinator_2's address: %s", msg)
	}
	h.assertNoMisuse()

	h.world.RemoveAddress(n.Coordinator(2).BoltServer)
	h.restart(n.Coordinator(2).Host)
	h.restart(n.Coordinator(3).Host)
	for i := 0; i < 10; i++ {
		h.advance(10 * time.Second)
		h.sync()
	}
	h.assertConverged()
	if got := len(h.memberSet()); got != 6 {
		t.Errorf("%d members registered after healing, want 5 coordinators and 1 data instance", got)
	}
}

// Discovery tells a coordinator by its name in its own table, not by its coordinator_server: a
// cluster registered with other addresses than declared (here, after spec.ports.coordinator
// changed) stays in view, reported and never rewritten.
func TestACoordinatorRegisteredAtAnotherPortStaysInView(t *testing.T) {
	h := newHarness(t, 3, 1)
	h.bootstrap()
	h.assertConverged()
	h.spec["ports"] = map[string]any{"coordinator": 12001}
	for i := 0; i < 12; i++ {
		h.advance(10 * time.Second)
		h.sync()
	}
	h.assertConverged()
	if _, _, msg := h.condition(v1alpha1.ConditionConverged); !strings.Contains(msg, "registered with other addresses than declared") {
		t.Errorf("Converged does not report the addresses registered: %s", msg)
	}
}

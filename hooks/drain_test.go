package hooks_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// spreadOverNodes places coordinator i and data instance i-1 on node n<i> (three nodes for a
// 3+3 cluster), every node schedulable.
func (h *harness) spreadOverNodes() {
	h.podNodes, h.nodes = map[string]string{}, map[string]any{}
	for i := 1; i <= 3; i++ {
		node := fmt.Sprintf("n%d", i)
		h.podNodes[fmt.Sprintf("%s-%d", topology.CoordinatorSetName(h.name), i)] = node
		h.podNodes[fmt.Sprintf("%s-%d", topology.DataSetName(h.name), i-1)] = node
		h.nodes[node] = map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": node}}
	}
}

// cordonNode marks node unschedulable, as kubectl cordon (and drain) does.
func (h *harness) cordonNode(node string) {
	h.nodes[node] = map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": node},
		"spec": map[string]any{"unschedulable": true}}
}

// taintNode puts the well-known unschedulable taint on node, as some tools do instead.
func (h *harness) taintNode(node string) {
	h.nodes[node] = map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": node},
		"spec": map[string]any{"taints": []any{map[string]any{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}}}}
}

// mainBudgetPod is the pod the returned <cluster>-main PodDisruptionBudget selects.
func (h *harness) mainBudgetPod() string {
	budget := h.children["PodDisruptionBudget/"+topology.MainBudgetName(h.name)]
	if budget == nil {
		return ""
	}
	selector := budget["spec"].(map[string]any)["selector"].(map[string]any)
	pod, _ := selector["matchLabels"].(map[string]any)[topology.LabelPodName].(string)
	return pod
}

// A cordoned node that runs the MAIN: the hook hands MAIN over to a caught-up replica on a
// schedulable node, with the handover's proofs, and the MAIN's budget moves in the same pass; the
// status says DrainPending meanwhile, and the cluster converges once neither the MAIN nor the
// leader runs on the cordoned node.
func TestDrainHandsMainOverAndTheBudgetFollows(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.spreadOverNodes()
	h.bootstrap()
	h.assertConverged()
	h.assertMains("instance_0")
	if got, want := h.mainBudgetPod(), topology.DataSetName(h.name)+"-0"; got != want {
		t.Fatalf("the MAIN's budget selects %q, want %q", got, want)
	}

	h.cordonNode("n1")
	h.sync()
	h.assertMains("instance_1")
	if got, want := h.statusField("lastOperation", "writes"), "DEMOTE instance_0; SET instance_1 TO MAIN"; got != want {
		t.Errorf("lastOperation.writes %q, want %q", got, want)
	}
	if got, want := h.mainBudgetPod(), topology.DataSetName(h.name)+"-1"; got != want {
		t.Errorf("after the handover the MAIN's budget selects %q, want %q (the same pass)", got, want)
	}
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonDrainPending)
	if !strings.Contains(msg, "node n1") || !strings.Contains(msg, "instance_1") {
		t.Errorf("DrainPending %q does not name the node and the new MAIN", msg)
	}
	if h.statusField("main") != "instance_1" {
		t.Errorf("status.main %q, want instance_1", h.statusField("main"))
	}
	for range 4 {
		h.sync()
	}
	h.assertConverged()
	h.assertMains("instance_1")
	if leader := h.statusField("leader"); leader == "coordinator_1" {
		t.Errorf("coordinator_1 on the cordoned node n1 still leads")
	}
	h.assertNoMisuse()
}

// When every replica runs on a cordoned node the hook cannot help: nothing is written, MAIN and
// its budget stay, and DrainPending says why and what the user can do.
func TestDrainBlockedWithoutAReplicaOnASchedulableNode(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.spreadOverNodes()
	h.bootstrap()
	h.assertConverged()
	h.cordonNode("n1")
	h.cordonNode("n2")
	h.taintNode("n3")
	h.world.ResetLog()
	h.sync()
	if w := h.boltWrites(); len(w) != 0 {
		t.Fatalf("Bolt writes with every node cordoned: %q", w)
	}
	h.assertMains("instance_0")
	if got, want := h.mainBudgetPod(), topology.DataSetName(h.name)+"-0"; got != want {
		t.Errorf("the MAIN's budget selects %q, want %q", got, want)
	}
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonDrainPending)
	want := "node n1 is cordoned and runs the MAIN instance_0 (pod memgraph-data-0), and every replica (instance_1, instance_2) " +
		"runs on a cordoned node: the MAIN's PodDisruptionBudget holds the drain; uncordon a node a replica runs on, or drain one node at a time"
	if msg != want {
		t.Errorf("DrainPending message\n %q, want\n %q", msg, want)
	}
	if r := h.lastResp.ResyncAfterSeconds; r != 5 {
		t.Errorf("resyncAfterSeconds %v, want 5 while the drain waits", r)
	}
}

// A replica not proven caught up (recovering on a wiped volume, its cached lag 0) is no handover
// target: the drain waits and says so, and the handover runs once the replica is ready.
func TestDrainWaitsForACaughtUpReplica(t *testing.T) {
	h := newRecoveryHarness(t, 3)
	h.spreadOverNodes()
	h.sync()
	h.assertConverged()
	h.cordonNode("n1")
	h.cordonNode("n3") // instance_2's node: instance_1 on n2 is the only candidate
	h.wipe(1)
	h.world.ResetLog()
	h.sync()
	if w := h.boltWrites(); len(w) != 0 {
		t.Fatalf("Bolt writes while the only candidate recovers: %q", w)
	}
	h.assertMains("instance_0")
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonDrainPending)
	if want := "instance_1 on n2 is not proven caught up"; !strings.Contains(msg, want) {
		t.Errorf("DrainPending %q does not say %q", msg, want)
	}
	h.advance(recoveryTime)
	h.sync()
	h.assertMains("instance_1")
	h.assertSafe()
}

// A preferred MAIN on a cordoned node is not switched back to: the drain's handover stands until
// the node is uncordoned, and then MAIN returns to it.
func TestDrainOutranksThePreferredMain(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.spreadOverNodes()
	h.spec["preferredMain"] = "instance_0"
	h.bootstrap()
	h.assertConverged()
	h.assertMains("instance_0")
	h.cordonNode("n1")
	for range 4 {
		h.sync()
	}
	h.assertMains("instance_1")
	h.assertConverged()
	h.spreadOverNodes() // uncordoned
	for range 3 {
		h.sync()
	}
	h.assertMains("instance_0")
	h.assertConverged()
	h.assertNoMisuse()
}

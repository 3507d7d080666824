//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// addNode adds a fake Node (env.AddNode) and deletes it when the test ends.
func addNode(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = testEnv.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	})
	if err := testEnv.AddNode(ctx, name); err != nil {
		t.Fatal(err)
	}
}

// drainNode runs kubectl drain as a user does and returns how long it took; the node is
// uncordoned when the test ends.
func drainNode(t *testing.T, node string) time.Duration {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = testEnv.Kubectl(ctx, "uncordon", node)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	started := time.Now()
	if out, err := testEnv.Kubectl(ctx, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=5m"); err != nil {
		t.Fatalf("kubectl drain %s: %v\n%s", node, err, out)
	}
	return time.Since(started)
}

// podNode is the node a pod of the scenario runs on.
func (s *scenario) podNode(pod string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := testEnv.Client.CoreV1().Pods(s.ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return p.Spec.NodeName
}

// A default cluster on three nodes is spread by the scheduler: a coordinator per node and the data
// instances on two (the default anti-affinity is preferred, so a drained pod may still join
// another), and HighlyAvailable says so. kubectl drain of the node that runs the MAIN completes:
// the hook hands MAIN over to the replica on another node first (its DEMOTE and SET, not a
// failover of Memgraph's own), the MAIN's budget follows, the drain evicts the old MAIN's pod as a
// replica, and the cluster converges on the two remaining nodes — one of which now runs two
// coordinators, which HighlyAvailable names.
func TestDrainOfTheMainsNodeMovesMainFirst(t *testing.T) {
	addNode(t, "kwok-node-1")
	addNode(t, "kwok-node-2")
	s := startScenario(t, "drain")
	const name = "drain"
	s.create(name, "")
	mgc := s.waitConverged(name, convergeTimeout)
	coordinatorNodes := map[string]bool{}
	for _, pod := range s.podsOf(topology.CoordinatorSetName(name)) {
		coordinatorNodes[s.podNode(pod)] = true
	}
	if len(coordinatorNodes) != 3 {
		t.Errorf("the coordinators run on the nodes %v: the default anti-affinity spreads them over the three", coordinatorNodes)
	}
	if status, reason, msg := conditionStatus(mgc, string(v1alpha1.ConditionHighlyAvailable)); status != "True" || reason != string(v1alpha1.ReasonSpreadAcrossNodes) {
		t.Errorf("HighlyAvailable %s %s on three nodes: %s", status, reason, msg)
	}
	mainPod := mainPodOf(t, name, mgc)
	oldMain := statusString(mgc, "main")
	ordinal, _ := topology.PodOrdinal(topology.DataSetName(name), mainPod)
	replicaPod := fmt.Sprintf("%s-%d", topology.DataSetName(name), 1-ordinal)
	drained := s.podNode(mainPod)
	if other := s.podNode(replicaPod); other == drained {
		t.Fatalf("both data pods run on %s: the scenario needs them on two nodes", drained)
	}
	s.assertBudgets(name, v1alpha1.DefaultCoordinators, mainPod)
	mark := s.queryMark()

	t.Logf("kubectl drain %s (MAIN %s in %s)", drained, oldMain, mainPod)
	drainNode(t, drained)
	mgc = s.waitConverged(name, convergeTimeout)
	newMain := statusString(mgc, "main")
	if newMain == oldMain || s.raft().Main != newMain {
		t.Errorf("MAIN %s (Raft %s) after draining the node of %s", newMain, s.raft().Main, oldMain)
	}
	var writes []string
	for _, q := range s.writesSince(mark) {
		writes = append(writes, q.Text)
	}
	joined := strings.Join(writes, "; ")
	if !strings.Contains(joined, memgraph.DemoteInstanceQuery(oldMain)+"; "+memgraph.SetInstanceToMainQuery(newMain)) {
		t.Errorf("the hook's writes %q do not hand MAIN over from %s to %s", joined, oldMain, newMain)
	}
	for _, pod := range []string{mainPod, replicaPod} {
		if node := s.podNode(pod); node == drained {
			t.Errorf("pod %s still on the drained node %s", pod, node)
		}
	}
	s.assertBudgets(name, v1alpha1.DefaultCoordinators, fmt.Sprintf("%s-%d", topology.DataSetName(name), 1-ordinal))
	crowded := nodeWithTwo(t, s, s.podsOf(topology.CoordinatorSetName(name)))
	if status, reason, msg := conditionStatus(mgc, string(v1alpha1.ConditionHighlyAvailable)); status != "False" ||
		reason != string(v1alpha1.ReasonSingleNodeRisk) || !strings.Contains(msg, "node "+crowded+" holds 2 of 3 coordinators") {
		t.Errorf("HighlyAvailable %s %s with two coordinators on %s: %s", status, reason, crowded, msg)
	}
	s.assertNoMisuse()
}

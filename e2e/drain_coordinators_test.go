//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// kubectl drain of a node that runs two of the three coordinators evicts them one at a time: the
// coordinators' budget (maxUnavailable 1) holds the second eviction until the first coordinator
// is back, so Raft keeps its quorum throughout. Sampled every 50 ms while the drain runs: never
// more than one coordinator down (and exactly one at some moment, or the drain proved nothing),
// the MAIN's pod never down while it is MAIN, at most one promotion (the hook's handover when the
// MAIN's pod was on the node), and every pod off the drained node at the end.
func TestDrainOfTwoCoordinatorsEvictsOneAtATime(t *testing.T) {
	const second = "kwok-node-1"
	addNode(t, second)
	s := startScenario(t, "drain-coord")
	const name = "quorum"
	s.create(name, "") // the default anti-affinity spreads each role over both nodes
	mgc := s.waitConverged(name, convergeTimeout)
	coordinators := s.podsOf(topology.CoordinatorSetName(name))
	drained := nodeWithTwo(t, s, coordinators)
	if status, reason, msg := conditionStatus(mgc, string(v1alpha1.ConditionHighlyAvailable)); status != "False" ||
		reason != string(v1alpha1.ReasonSingleNodeRisk) || !strings.Contains(msg, "node "+drained+" holds 2 of 3 coordinators") {
		t.Errorf("HighlyAvailable %s %s with two coordinators on %s: %s", status, reason, drained, msg)
	}
	mark := s.queryMark()

	watch := s.watchDisruptions(name, coordinators)
	t.Logf("kubectl drain %s (coordinator pods on it: two of %v)", drained, coordinators)
	drainTook := drainNode(t, drained)
	s.waitConverged(name, convergeTimeout)
	d := watch.stop()

	t.Logf("drain took %s; %d samples: at most %d coordinators down at once", drainTook.Round(time.Millisecond), d.samples, d.maxCoordinatorsDown)
	if d.maxCoordinatorsDown != 1 {
		t.Errorf("at most %d coordinators were down at once during the drain; want exactly 1 (one evicted at a time)", d.maxCoordinatorsDown)
	}
	if d.mainDown != "" {
		t.Errorf("the MAIN's pod was down while it was MAIN: %s", d.mainDown)
	}
	promotions := 0
	for _, q := range s.writesSince(mark) {
		if strings.HasPrefix(q.Text, "SET INSTANCE ") && strings.HasSuffix(q.Text, " TO MAIN") {
			promotions++
		}
	}
	if promotions > 1 {
		t.Errorf("%d promotions during one drain; want at most one handover", promotions)
	}
	for _, pod := range append(s.podsOf(topology.CoordinatorSetName(name)), s.podsOf(topology.DataSetName(name))...) {
		if node := s.podNode(pod); node == drained {
			t.Errorf("pod %s still on the drained node %s", pod, node)
		}
	}
	s.assertNoMisuse()
}

// nodeWithTwo is the node that runs two of the pods; the test fails when none does.
func nodeWithTwo(t *testing.T, s *scenario, pods []string) string {
	t.Helper()
	count := map[string]int{}
	for _, pod := range pods {
		count[s.podNode(pod)]++
	}
	for node, n := range count {
		if n == 2 {
			return node
		}
	}
	t.Fatalf("no node runs two of the pods %v: %v", pods, count)
	return ""
}

// podsOf lists the pods of a StatefulSet of the scenario, by name.
func (s *scenario) podsOf(set string) []string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := testEnv.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		if _, ok := topology.PodOrdinal(set, p.Name); ok {
			out = append(out, p.Name)
		}
	}
	return out
}

// disruptions is what a disruptionWatch saw.
type disruptions struct {
	samples             int
	maxCoordinatorsDown int
	mainDown            string // the first sample in which the MAIN's pod was down, "" when none
}

// disruptionWatch samples a cluster's pods and its Raft state until stopped.
type disruptionWatch struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	seen   disruptions
}

// watchDisruptions samples every 50 ms how many of the coordinator pods are down (absent, terminating
// or not Ready) and whether the MAIN's pod is down. The MAIN is read before and after the pods
// and counted only when both reads agree, so that a handover between them is not mistaken for
// an eviction of the MAIN.
func (s *scenario) watchDisruptions(cluster string, coordinators []string) *disruptionWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &disruptionWatch{cancel: cancel}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for ctx.Err() == nil {
			s.sampleDisruption(ctx, cluster, coordinators, &w.seen)
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *disruptionWatch) stop() disruptions {
	w.cancel()
	w.wg.Wait()
	return w.seen
}

func (s *scenario) sampleDisruption(ctx context.Context, cluster string, coordinators []string, d *disruptions) {
	before := s.world.Raft()
	list, err := testEnv.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	after := s.world.Raft()
	ready := readyPods(list.Items)
	down := 0
	for _, pod := range coordinators {
		if !ready[pod] {
			down++
		}
	}
	d.samples++
	d.maxCoordinatorsDown = max(d.maxCoordinatorsDown, down)
	main := mainOf(before)
	if main == "" || main != mainOf(after) || d.mainDown != "" {
		return
	}
	if pod := dataPodOf(cluster, main); !ready[pod] {
		d.mainDown = fmt.Sprintf("MAIN %s, pod %s at %s", main, pod, time.Now().Format(time.StampMilli))
	}
}

// mainOf is the MAIN of the snapshot's one led multi-member Raft group, "" when there is none
// or several.
func mainOf(r sim.RaftSnapshot) string {
	main, groups := "", 0
	for _, c := range r.Clusters {
		if c.Leader != 0 && len(c.Members) > 1 {
			main, groups = c.Main, groups+1
		}
	}
	if groups != 1 {
		return ""
	}
	return main
}

// dataPodOf is the pod of a data instance: instance_<n> runs in <cluster>-data-<n>.
func dataPodOf(cluster, instance string) string {
	n, ok := topology.ParseDataInstanceName(instance)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s-%d", topology.DataSetName(cluster), n)
}

// readyPods are the pods that are Ready and not terminating.
func readyPods(pods []corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				out[p.Name] = true
			}
		}
	}
	return out
}

//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// kubectl runs kubectl in the scenario's namespace, as the README's Day-2 section tells a user.
func (s *scenario) kubectl(args ...string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := testEnv.Kubectl(ctx, append(args, "-n", s.ns)...)
	if err != nil {
		s.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func statusString(u *unstructured.Unstructured, path ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, append([]string{"status"}, path...)...)
	return v
}

// resyncs runs n syncs and lets the periodic resync and late watch events run too.
func (s *scenario) resyncs(n int) {
	s.t.Helper()
	for range n {
		before := s.mc.Stats().Snapshot().SyncsCompleted
		s.mc.Resync()
		s.waitSyncs(before, 1, 30*time.Second)
	}
	time.Sleep(scenarioResync + time.Second)
}

// TestDayTwoOperations drives one 3+3 cluster through a planned switchover, a pause while a
// spec change is pending, and hibernation and waking, with the commands of the README.
func TestDayTwoOperations(t *testing.T) {
	s := startScenario(t, "dayops")
	const name = "day2"
	// Delete: hibernation must keep the claims all the same.
	s.create(name, "dataInstances: 3\nstorage: {retentionPolicy: Delete}")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 3)

	t.Log("planned switchover to instance_2")
	s.kubectl("patch", "mgc", name, "--type=merge", "-p", `{"spec":{"preferredMain":"instance_2"}}`)
	mgc := s.waitConverged(name, convergeTimeout)
	s.declaredMembers(mgc, 3, 3)
	if got := s.raft().Main; got != "instance_2" {
		t.Fatalf("MAIN %s after the switchover, want instance_2", got)
	}
	if ops := statusString(mgc, "lastOperation", "writes"); !strings.HasSuffix(ops, "SET instance_2 TO MAIN") || !strings.HasPrefix(ops, "DEMOTE ") {
		t.Errorf("lastOperation.writes %q, want the DEMOTE and SET of the switchover", ops)
	}
	if out := s.kubectl("get", "mgc", name); !strings.Contains(out, "instance_2") || !strings.Contains(out, "Running") {
		t.Errorf("kubectl get mgc does not show MAIN instance_2 and phase Running:\n%s", out)
	}
	s.assertNoMisuse()
	if t.Failed() {
		return
	}

	t.Log("pause, then a spec change: nothing is written until the annotation goes")
	s.kubectl("annotate", "mgc", name, topology.AnnotationPaused+"=true")
	s.kubectl("wait", "--for=condition=Paused", "mgc/"+name, "--timeout=60s")
	s.patchSpec(name, `{"dataInstances":4}`)
	since := time.Now()
	versions, budgets := childVersions(t, s.ns), budgetUIDs(t, s.ns)
	s.world.ResetLog()
	s.resyncs(3)
	snap := s.mc.Stats().Snapshot()
	for _, w := range snap.ChildWrites(since) {
		t.Errorf("child write while paused: %s", w)
	}
	if diff := cmp.Diff(versions, childVersions(t, s.ns)); diff != "" {
		t.Errorf("children's resourceVersions moved while paused (-before +after):\n%s", diff)
	}
	for _, budget := range []string{topology.CoordinatorBudgetName(name), topology.DataBudgetName(name)} {
		if budgets[budget] == "" {
			t.Errorf("PodDisruptionBudget %s missing while paused (have %v)", budget, budgets)
		}
	}
	if diff := cmp.Diff(budgets, budgetUIDs(t, s.ns)); diff != "" {
		t.Errorf("PodDisruptionBudgets deleted or replaced while paused (-before +after uid):\n%s", diff)
	}
	for _, q := range s.world.Queries() {
		if !strings.HasPrefix(q.Text, "SHOW ") {
			t.Errorf("a paused sync sent %q to %s", q.Text, q.Host)
		}
	}
	if got := s.stsReplicas(topology.DataSetName(name)); got != 3 {
		t.Errorf("data StatefulSet replicas %d while paused, want 3", got)
	}
	s.waitStatus(name, "the paused status", convergeTimeout, func(u *unstructured.Unstructured) error {
		if st, reason, _ := conditionStatus(u, "Converged"); st != "False" || reason != string(v1alpha1.ReasonPaused) || statusString(u, "phase") != "Paused" {
			return fmt.Errorf("Converged %s/%s, phase %q", st, reason, statusString(u, "phase"))
		}
		return nil
	})
	s.kubectl("annotate", "mgc", name, topology.AnnotationPaused+"-")
	mgc = s.waitConverged(name, convergeTimeout)
	s.declaredMembers(mgc, 3, 4)
	if ops := statusString(mgc, "lastOperation", "writes"); ops != "REGISTER instance_3" {
		t.Errorf("lastOperation.writes %q after resuming, want REGISTER instance_3", ops)
	}
	s.assertNoMisuse()
	if t.Failed() {
		return
	}

	t.Log("hibernate: every pod stops, every claim stays")
	if err := s.world.Commit("memgraph", 7); err != nil {
		t.Fatal(err)
	}
	committed := s.mainCommitted()
	claims := s.claims()
	s.kubectl("patch", "mgc", name, "--type=merge", "-p", `{"spec":{"hibernate":true}}`)
	s.kubectl("wait", "--for=condition=Hibernated", "mgc/"+name, "--timeout=180s")
	mgc, err := s.get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if phase := statusString(mgc, "phase"); phase != "Hibernated" {
		t.Errorf("phase %q, want Hibernated", phase)
	}
	for _, set := range []string{topology.CoordinatorSetName(name), topology.DataSetName(name)} {
		if got := s.stsReplicas(set); got != 0 {
			t.Errorf("%s replicas %d while hibernated, want 0", set, got)
		}
	}
	if err := s.waitLeft(name, false); err != nil {
		t.Errorf("hibernated, yet: %v", err)
	}
	if diff := cmp.Diff(claims, s.claims()); diff != "" {
		t.Errorf("claims after hibernating (-before +after):\n%s", diff)
	}
	if t.Failed() {
		return
	}

	t.Log("wake: instance_2 comes back as MAIN with its data")
	s.world.ResetLog()
	s.kubectl("patch", "mgc", name, "--type=merge", "-p", `{"spec":{"hibernate":false}}`)
	mgc = s.waitConverged(name, 3*time.Minute)
	s.declaredMembers(mgc, 3, 4)
	if got := s.raft().Main; got != "instance_2" {
		t.Errorf("MAIN %s after waking, want instance_2", got)
	}
	if diff := cmp.Diff(committed, s.mainCommitted()); diff != "" {
		t.Errorf("MAIN's committed transactions across hibernation (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(claims, s.claims()); diff != "" {
		t.Errorf("claims after waking (-before +after):\n%s", diff)
	}
	for _, q := range s.world.Queries() {
		if !strings.HasPrefix(q.Text, "SHOW ") {
			t.Errorf("waking sent %q to %s: the registrations and the MAIN live on in Raft", q.Text, q.Host)
		}
	}
	if phase := statusString(mgc, "phase"); phase != "Running" {
		t.Errorf("phase %q after waking, want Running", phase)
	}
	s.assertNoMisuse()
}

// mainCommitted is the MAIN's committed transaction counts, by database.
func (s *scenario) mainCommitted() map[string]int64 {
	s.t.Helper()
	g := s.raft()
	for _, d := range g.Data {
		if d.Name == g.Main {
			return d.Committed
		}
	}
	s.t.Fatalf("no MAIN among %+v", g.Data)
	return nil
}

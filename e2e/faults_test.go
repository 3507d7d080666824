//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/e2e/env"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Helpers of the fault scenarios (faults_scenarios_test.go): what every scenario checks at its
// end, and the faults themselves.

// claimUIDs maps the namespace's live PVCs to their UIDs: a claim deleted and recreated under the
// same name is a new volume, i.e. lost data.
func (s *scenario) claimUIDs() map[string]types.UID {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := testEnv.Client.CoreV1().PersistentVolumeClaims(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, c := range list.Items {
		if c.DeletionTimestamp == nil {
			out[c.Name] = c.UID
		}
	}
	return out
}

// assertNoClaimLost fails for every claim of before that is gone or was recreated.
func (s *scenario) assertNoClaimLost(before map[string]types.UID) {
	s.t.Helper()
	now := s.claimUIDs()
	for name, uid := range before {
		switch got, ok := now[name]; {
		case !ok:
			s.t.Errorf("PVC %s was lost", name)
		case got != uid:
			s.t.Errorf("PVC %s was deleted and recreated (uid %s, was %s): its data is gone", name, got, uid)
		}
	}
}

// settled is how every fault scenario ends: the cluster Converged with exactly the declared
// members and one MAIN (which status names), the simulator's misuse list empty, and every claim
// that existed before the fault still there.
func (s *scenario) settled(mgcName string, coordinators, data int, claims map[string]types.UID) {
	s.t.Helper()
	s.declaredMembers(s.waitConverged(mgcName, convergeTimeout), coordinators, data)
	s.assertNoMisuse()
	s.assertNoClaimLost(claims)
}

// queryMark is a position in the simulator's query log.
func (s *scenario) queryMark() int { return len(s.world.Queries()) }

// writesSince lists the queries after mark that are not reads.
func (s *scenario) writesSince(mark int) []sim.Query {
	var out []sim.Query
	for _, q := range s.world.Queries()[mark:] {
		if !strings.HasPrefix(q.Text, "SHOW ") {
			out = append(out, q)
		}
	}
	return out
}

// waitQuery waits until a query starting with prefix arrives after mark.
func (s *scenario) waitQuery(mark int, prefix string, timeout time.Duration) {
	s.t.Helper()
	s.waitFor(timeout, func() error {
		for _, q := range s.world.Queries()[mark:] {
			if strings.HasPrefix(q.Text, prefix) {
				return nil
			}
		}
		return fmt.Errorf("no %s yet", prefix)
	})
}

// waitFor polls check every 50 ms until it succeeds or timeout passes.
func (s *scenario) waitFor(timeout time.Duration, check func() error) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := eventually(ctx, 50*time.Millisecond, check); err != nil {
		s.t.Fatal(err)
	}
}

// waitSyncedSince waits until a whole sync ran after the driver had completed n syncs: with one
// parent per scenario namespace, syncs of it never overlap, so the second one to complete started
// after that point and its status shows what the hook saw since.
func (s *scenario) waitSyncedSince(n int) {
	s.t.Helper()
	s.waitSyncs(n, 2, convergeTimeout)
}

// deletePod deletes a Pod as `kubectl delete pod` does (graceful, default grace period).
func (s *scenario) deletePod(name string) types.UID {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pod, err := testEnv.Client.CoreV1().Pods(s.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	if err := testEnv.Client.CoreV1().Pods(s.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		s.t.Fatal(err)
	}
	return pod.UID
}

// waitPodReplaced waits until the Pod name is back (another UID) and its instance runs again.
func (s *scenario) waitPodReplaced(name string, old types.UID, host string) {
	s.t.Helper()
	s.waitFor(convergeTimeout, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pod, err := testEnv.Client.CoreV1().Pods(s.ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err != nil:
			return err
		case pod.UID == old:
			return fmt.Errorf("pod %s not replaced yet", name)
		case !s.pods.Running(host):
			return fmt.Errorf("the instance of pod %s does not run yet", name)
		}
		return nil
	})
}

// cordon marks the node unschedulable (or schedulable again), as `kubectl cordon` does: a Pod
// deleted meanwhile is recreated by its StatefulSet but stays Pending.
func cordon(t *testing.T, unschedulable bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, unschedulable)
	if _, err := testEnv.Client.CoreV1().Nodes().Patch(ctx, env.NodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podPhase is the Pod's phase, "" when it does not exist.
func (s *scenario) podPhase(name string) corev1.PodPhase {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pod, err := testEnv.Client.CoreV1().Pods(s.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return pod.Status.Phase
}

// coordinatorAddresses are the advertised Bolt addresses of coordinators 1..n of cluster name.
func (s *scenario) coordinatorAddresses(name string, n int) []string {
	var out []string
	for id := topology.FirstCoordinatorID; id < topology.FirstCoordinatorID+n; id++ {
		out = append(out, s.network(name).Coordinator(id).BoltServer)
	}
	return out
}

// coordinatorAddressesIn is coordinatorAddresses before the scenario exists.
func coordinatorAddressesIn(ns, name string, n int) []string {
	return (&scenario{ns: ns}).coordinatorAddresses(name, n)
}

// dataAddressesIn are the Bolt addresses of cluster name's first n data instances in ns: the
// hook binary reads SHOW REPLICAS on the MAIN's before a handover, so it must reach them too.
func dataAddressesIn(ns, name string, n int) []string {
	var out []string
	for ordinal := range n {
		out = append(out, (&scenario{ns: ns}).network(name).DataInstance(ordinal).BoltServer)
	}
	return out
}

// stepsOnce checks that no write succeeded twice after mark: with several writers, every step is
// done once and the others' attempts are refused.
func (s *scenario) stepsOnce(mark int) {
	s.t.Helper()
	done := map[string]int{}
	for _, q := range s.writesSince(mark) {
		if !q.Failed {
			done[q.Text]++
		}
	}
	for text, n := range done {
		if n > 1 && !slices.Contains([]string{"FORCE RESET CLUSTER STATE"}, text) {
			s.t.Errorf("%q succeeded %d times", text, n)
		}
	}
}

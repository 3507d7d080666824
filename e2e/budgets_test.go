//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/e2e/env"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var pdbGVR = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// budgetUIDs maps each PodDisruptionBudget of the namespace to its uid: a budget deleted, or
// deleted and created again, shows.
func budgetUIDs(t *testing.T, ns string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := testEnv.Client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, pdb := range list.Items {
		out[pdb.Name] = string(pdb.UID)
	}
	return out
}

// assertBudgets checks the PodDisruptionBudgets the hook renders for a converged cluster whose
// MAIN runs in mainPod, on the real control plane: <cluster>-coordinator selects the coordinators
// with maxUnavailable 1, <cluster>-data every data pod but the MAIN's with maxUnavailable 2,
// <cluster>-main the MAIN's pod alone with maxUnavailable 0; kube-controller-manager's
// disruption controller, counting every pod Ready, allows one disruption among the coordinators,
// one among the replicas and none of the MAIN.
func (s *scenario) assertBudgets(cluster string, coordinators int32, mainPod string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	notMain := []metav1.LabelSelectorRequirement{{Key: topology.LabelPodName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{mainPod}}}
	for _, want := range []struct {
		name           string
		selector       metav1.LabelSelector
		maxUnavailable int
	}{
		{topology.CoordinatorBudgetName(cluster), metav1.LabelSelector{MatchLabels: topology.RoleSelector(cluster, topology.RoleCoordinator)}, 1},
		{topology.DataBudgetName(cluster), metav1.LabelSelector{MatchLabels: topology.RoleSelector(cluster, topology.RoleData), MatchExpressions: notMain}, 2},
		{topology.MainBudgetName(cluster), metav1.LabelSelector{MatchLabels: map[string]string{topology.LabelPodName: mainPod}}, 0},
	} {
		err := eventually(ctx, 200*time.Millisecond, func() error {
			pdb, err := testEnv.Client.PolicyV1().PodDisruptionBudgets(s.ns).Get(ctx, want.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if diff := cmp.Diff(&want.selector, pdb.Spec.Selector); diff != "" {
				return fmt.Errorf("PodDisruptionBudget %s selector (-want +got):\n%s", want.name, diff)
			}
			if mu := pdb.Spec.MaxUnavailable; mu == nil || mu.IntValue() != want.maxUnavailable || pdb.Spec.MinAvailable != nil {
				return fmt.Errorf("PodDisruptionBudget %s maxUnavailable %v, minAvailable %v: want %d and none", want.name, mu, pdb.Spec.MinAvailable, want.maxUnavailable)
			}
			return nil
		})
		if err != nil {
			s.t.Error(err)
		}
	}
	err := eventually(ctx, 200*time.Millisecond, func() error {
		pdb, err := testEnv.Client.PolicyV1().PodDisruptionBudgets(s.ns).Get(ctx, topology.CoordinatorBudgetName(cluster), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if st := pdb.Status; st.ExpectedPods != coordinators || st.CurrentHealthy != coordinators {
			return fmt.Errorf("PodDisruptionBudget %s expects %d pods, %d healthy: want %d", pdb.Name, st.ExpectedPods, st.CurrentHealthy, coordinators)
		}
		return budgetsAllow(ctx, s.ns, map[string]int32{topology.CoordinatorBudgetName(cluster): 1,
			topology.DataBudgetName(cluster): 1, topology.MainBudgetName(cluster): 0})
	})
	if err != nil {
		s.t.Error(err)
	}
}

// mainPodOf is the pod of the data instance status.main names.
func mainPodOf(t *testing.T, cluster string, mgc *unstructured.Unstructured) string {
	t.Helper()
	ordinal, ok := topology.ParseDataInstanceName(statusString(mgc, "main"))
	if !ok {
		t.Fatalf("status.main %q is no data instance", statusString(mgc, "main"))
	}
	return fmt.Sprintf("%s-%d", topology.DataSetName(cluster), ordinal)
}

// The budgets the hook renders once the MAIN is known make the real Eviction API refuse the
// MAIN's pod with the 429 a drain retries, and let a replica go: what a drain meets. (A pod under
// two budgets could not be evicted at all.)
func TestMainBudgetRefusesEvictingTheMain(t *testing.T) {
	s := startScenario(t, "budgets")
	const name = "pdb"
	s.create(name, "{}")
	mgc := s.waitConverged(name, convergeTimeout)
	mainPod := mainPodOf(t, name, mgc)
	s.assertBudgets(name, v1alpha1.DefaultCoordinators, mainPod)
	ordinal, _ := topology.PodOrdinal(topology.DataSetName(name), mainPod)
	replicaPod := fmt.Sprintf("%s-%d", topology.DataSetName(name), 1-ordinal)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	evict := func(pod string) error {
		return testEnv.Client.PolicyV1().Evictions(s.ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: s.ns}})
	}
	if err := evict(mainPod); !apierrors.IsTooManyRequests(err) {
		t.Errorf("evicting the MAIN's pod %s: %v, want 429 TooManyRequests (which kubectl drain retries)", mainPod, err)
	}
	if err := evict(replicaPod); err != nil {
		t.Errorf("evicting the replica's pod %s under %s: %v", replicaPod, topology.DataBudgetName(name), err)
	}
	s.declaredMembers(s.waitConverged(name, convergeTimeout), int(v1alpha1.DefaultCoordinators), int(v1alpha1.DefaultDataInstances))
	s.assertNoMisuse()
}

// budgetsAllow checks that each named budget is observed by the disruption controller and allows
// that many disruptions.
func budgetsAllow(ctx context.Context, ns string, want map[string]int32) error {
	for name, allowed := range want {
		pdb, err := testEnv.Client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if st := pdb.Status; st.ObservedGeneration != pdb.Generation || st.DisruptionsAllowed != allowed {
			return fmt.Errorf("%s: status %+v at generation %d, want observed and %d disruptions allowed", name, st, pdb.Generation, allowed)
		}
	}
	return nil
}

// Nodes reach the hook as related objects of the customize hook (cluster-scoped): cordoning the
// node that runs the MAIN, with every replica on that same node, leaves the hook nothing to hand
// over to. It writes nothing, keeps the MAIN's budget on the MAIN's pod, and says so with
// DrainPending; uncordoned, the cluster is converged again.
func TestCordonedNodeIsSeenAndADrainWithoutReplicaElsewhereIsBlocked(t *testing.T) {
	s := startScenario(t, "drain-blocked")
	const name = "cordon"
	s.create(name, "{}")
	mgc := s.waitConverged(name, convergeTimeout)
	mainPod := mainPodOf(t, name, mgc)
	main := statusString(mgc, "main")
	mark := s.queryMark()

	cordon(t, true)
	t.Cleanup(func() { cordon(t, false) })
	s.waitStatus(name, "DrainPending", convergeTimeout, func(u *unstructured.Unstructured) error {
		st, reason, msg := conditionStatus(u, "Converged")
		if st != "False" || reason != string(v1alpha1.ReasonDrainPending) {
			return fmt.Errorf("Converged %s/%s: %s", st, reason, msg)
		}
		want := fmt.Sprintf("node %s is cordoned and runs the MAIN %s (pod %s), and every replica", env.NodeName, main, mainPod)
		if !strings.Contains(msg, want) || !strings.Contains(msg, "holds the drain") {
			return fmt.Errorf("DrainPending %q does not say %q and that the budget holds the drain", msg, want)
		}
		return nil
	})
	if w := s.writesSince(mark); len(w) > 0 {
		t.Errorf("the hook wrote with no replica on a schedulable node: %+v", w)
	}
	s.assertBudgets(name, v1alpha1.DefaultCoordinators, mainPod)
	cordon(t, false)
	s.waitConverged(name, convergeTimeout)
	s.assertNoMisuse()
}

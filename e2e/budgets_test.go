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

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var pdbGVR = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// assertRoleBudgets checks the two role PodDisruptionBudgets on the real control plane: each
// selects exactly its StatefulSet's pods with maxUnavailable 1, and kube-controller-manager's
// disruption controller, counting every pod of the role Ready, allows one disruption in each.
func (s *scenario) assertRoleBudgets(cluster string, coordinators, data int32) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, want := range []struct {
		name, role string
		pods       int32
	}{
		{topology.CoordinatorBudgetName(cluster), topology.RoleCoordinator, coordinators},
		{topology.DataBudgetName(cluster), topology.RoleData, data},
	} {
		err := eventually(ctx, 200*time.Millisecond, func() error {
			pdb, err := testEnv.Client.PolicyV1().PodDisruptionBudgets(s.ns).Get(ctx, want.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if pdb.Spec.Selector == nil || len(pdb.Spec.Selector.MatchExpressions) > 0 {
				return fmt.Errorf("PodDisruptionBudget %s selector %v", want.name, pdb.Spec.Selector)
			}
			if diff := cmp.Diff(topology.RoleSelector(cluster, want.role), pdb.Spec.Selector.MatchLabels); diff != "" {
				return fmt.Errorf("PodDisruptionBudget %s selector (-want +got):\n%s", want.name, diff)
			}
			if mu := pdb.Spec.MaxUnavailable; mu == nil || mu.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
				return fmt.Errorf("PodDisruptionBudget %s maxUnavailable %v, minAvailable %v: want 1 and none", want.name, mu, pdb.Spec.MinAvailable)
			}
			st := pdb.Status
			got := fmt.Sprintf("observedGeneration %d/%d, expected %d, healthy %d of %d desired, %d disruptions allowed",
				st.ObservedGeneration, pdb.Generation, st.ExpectedPods, st.CurrentHealthy, st.DesiredHealthy, st.DisruptionsAllowed)
			wanted := fmt.Sprintf("observedGeneration %d/%d, expected %d, healthy %d of %d desired, %d disruptions allowed",
				pdb.Generation, pdb.Generation, want.pods, want.pods, want.pods-1, 1)
			if got != wanted {
				return fmt.Errorf("PodDisruptionBudget %s status: %s, want %s", want.name, got, wanted)
			}
			return nil
		})
		if err != nil {
			s.t.Error(err)
		}
	}
}

// The MAIN's budget, as topology.MainBudget renders it, makes the real Eviction API refuse the
// MAIN's pod while the data role's budget lets a replica go: what a drain meets.
func TestMainBudgetRefusesEvictingTheMain(t *testing.T) {
	s := startScenario(t, "budgets")
	const name = "pdb"
	s.create(name, "{}")
	mgc := s.waitConverged(name, convergeTimeout)
	s.assertRoleBudgets(name, topology.DefaultCoordinators, topology.DefaultDataInstances)
	ordinal, ok := topology.ParseDataInstanceName(statusString(mgc, "main"))
	if !ok {
		t.Fatalf("status.main %q is no data instance", statusString(mgc, "main"))
	}
	mainPod := fmt.Sprintf("%s-%d", topology.DataSetName(name), ordinal)
	replicaPod := fmt.Sprintf("%s-%d", topology.DataSetName(name), 1-ordinal)

	cluster, err := topology.NewCluster(&topology.MemgraphCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns}})
	if err != nil {
		t.Fatal(err)
	}
	budget, err := topology.MainBudget(cluster, mainPod)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := testEnv.Dynamic.Resource(pdbGVR).Namespace(s.ns).Create(ctx, &unstructured.Unstructured{Object: budget}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the MAIN's budget as MainBudget renders it: %v", err)
	}
	// Until the disruption controller has observed the budget, every eviction it covers is
	// refused anyway; wait for its verdict on exactly the MAIN's pod.
	s.waitFor(time.Minute, func() error {
		pdb, err := testEnv.Client.PolicyV1().PodDisruptionBudgets(s.ns).Get(ctx, topology.MainBudgetName(name), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if st := pdb.Status; st.ObservedGeneration != pdb.Generation || st.CurrentHealthy != 1 || st.DisruptionsAllowed != 0 {
			return fmt.Errorf("MAIN budget status %+v (generation %d): want observed, 1 healthy pod, 0 disruptions allowed", st, pdb.Generation)
		}
		return nil
	})

	evict := func(pod string) error {
		return testEnv.Client.PolicyV1().Evictions(s.ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: s.ns}})
	}
	if err := evict(mainPod); !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), topology.MainBudgetName(name)) {
		t.Errorf("evicting the MAIN's pod %s: %v, want 429 naming %s", mainPod, err, topology.MainBudgetName(name))
	}
	if err := evict(replicaPod); err != nil {
		t.Errorf("evicting the replica's pod %s under %s: %v", replicaPod, topology.DataBudgetName(name), err)
	}
	s.declaredMembers(s.waitConverged(name, convergeTimeout), int(topology.DefaultCoordinators), int(topology.DefaultDataInstances))
	s.assertNoMisuse()
}

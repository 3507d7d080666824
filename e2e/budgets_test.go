//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
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

// The budgets as topology.RenderMainBudget renders them once the MAIN is known make the real
// Eviction API refuse the MAIN's pod with the 429 a drain retries, and let a replica go: what a
// drain meets. (A pod under two budgets could not be evicted at all.)
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

	// The hook does not render the MAIN's budget yet: hold Metacontroller and apply the budgets
	// as RenderMainBudget renders them.
	s.mc.Pause()
	paused := true
	defer func() {
		if paused {
			s.mc.Resume()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s.applyMainBudgets(ctx, name, mainPod)
	s.waitFor(time.Minute, func() error {
		return budgetsAllow(ctx, s.ns, map[string]int32{topology.MainBudgetName(name): 0, topology.DataBudgetName(name): 1})
	})

	evict := func(pod string) error {
		return testEnv.Client.PolicyV1().Evictions(s.ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: s.ns}})
	}
	if err := evict(mainPod); !apierrors.IsTooManyRequests(err) {
		t.Errorf("evicting the MAIN's pod %s: %v, want 429 TooManyRequests (which kubectl drain retries)", mainPod, err)
	}
	if err := evict(replicaPod); err != nil {
		t.Errorf("evicting the replica's pod %s under %s: %v", replicaPod, topology.DataBudgetName(name), err)
	}
	s.mc.Resume()
	paused = false
	s.declaredMembers(s.waitConverged(name, convergeTimeout), int(topology.DefaultCoordinators), int(topology.DefaultDataInstances))
	s.assertNoMisuse()
}

// applyMainBudgets writes <cluster>-data and <cluster>-main as RenderMainBudget renders them for
// a default cluster whose MAIN runs in mainPod.
func (s *scenario) applyMainBudgets(ctx context.Context, cluster, mainPod string) {
	s.t.Helper()
	c, err := topology.NewCluster(&topology.MemgraphCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster, Namespace: s.ns}})
	if err != nil {
		s.t.Fatal(err)
	}
	children, err := topology.DesiredChildren(c, c.Replicas(), topology.Partitions{}, topology.TemplateGenerations{})
	if err != nil {
		s.t.Fatal(err)
	}
	if children, err = topology.RenderMainBudget(c, children, mainPod); err != nil {
		s.t.Fatal(err)
	}
	budgets := testEnv.Dynamic.Resource(pdbGVR).Namespace(s.ns)
	for _, child := range children {
		u := &unstructured.Unstructured{Object: child}
		switch u.GetName() {
		case topology.DataBudgetName(cluster):
			if u.GetKind() != "PodDisruptionBudget" {
				continue
			}
			stored, err := budgets.Get(ctx, u.GetName(), metav1.GetOptions{})
			if err != nil {
				s.t.Fatal(err)
			}
			stored.Object["spec"] = child["spec"]
			if _, err := budgets.Update(ctx, stored, metav1.UpdateOptions{}); err != nil {
				s.t.Fatalf("update %s as RenderMainBudget renders it: %v", u.GetName(), err)
			}
		case topology.MainBudgetName(cluster):
			if _, err := budgets.Create(ctx, u, metav1.CreateOptions{}); err != nil {
				s.t.Fatalf("create %s as RenderMainBudget renders it: %v", u.GetName(), err)
			}
		}
	}
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

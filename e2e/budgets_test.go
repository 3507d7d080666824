//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

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

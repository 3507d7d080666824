package topology

import (
	"errors"
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The PodDisruptionBudgets. They limit voluntary disruptions — evictions through the Eviction
// API, which kubectl drain, the cluster autoscaler and managed node upgrades use — and nothing
// else: a node that fails, a pod the StatefulSet controller replaces during a rollout and a
// hibernation's scale-down are not evictions.
//
//   - <cluster>-coordinator, maxUnavailable 1: a drain evicts one coordinator at a time, so the
//     others keep Raft's majority at every size the CRD allows (3 to 9, odd).
//   - <cluster>-data, maxUnavailable 1: one data instance at a time, so the replicas keep serving.
//     With one data instance this budget alone would allow evicting it (maxUnavailable counts
//     pods, whatever their number); that instance is the MAIN, so the MAIN's budget holds the
//     drain until a second data instance can take MAIN over (docs/operations.md, "Node
//     maintenance").
//   - <cluster>-main (MainBudget), maxUnavailable 0: the MAIN's pod is never evicted while it is
//     MAIN; the hook moves MAIN to a caught-up replica on a schedulable node first, then the
//     budget with it.

// CoordinatorBudgetName and DataBudgetName are the role budgets' names, the StatefulSets' names.
func CoordinatorBudgetName(cluster string) string { return CoordinatorSetName(cluster) }
func DataBudgetName(cluster string) string        { return DataSetName(cluster) }

// MainBudgetName is the name of the budget that protects the MAIN's pod.
func MainBudgetName(cluster string) string { return cluster + "-main" }

func coordinatorBudget(mc *MemgraphCluster) *policyv1.PodDisruptionBudget {
	return roleBudget(mc, CoordinatorBudgetName(mc.Name), RoleCoordinator, mc.Spec.CoordinatorTemplate.Labels)
}

func dataBudget(mc *MemgraphCluster) *policyv1.PodDisruptionBudget {
	return roleBudget(mc, DataBudgetName(mc.Name), RoleData, mc.Spec.DataTemplate.Labels)
}

// roleBudget allows one eviction at a time among the pods of one role.
func roleBudget(mc *MemgraphCluster, name, role string, userLabels map[string]string) *policyv1.PodDisruptionBudget {
	return budget(mc, name, roleLabels(mc.Name, role, userLabels), RoleSelector(mc.Name, role), 1)
}

func budget(mc *MemgraphCluster, name string, labels, selector map[string]string, maxUnavailable int32) *policyv1.PodDisruptionBudget {
	unavailable := intstr.FromInt32(maxUnavailable)
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Namespace, Labels: labels},
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: selector},
			MaxUnavailable: &unavailable,
		},
	}
}

// MainBudget renders, in stored form, the PodDisruptionBudget <cluster>-main that refuses every
// eviction of mainPod (maxUnavailable 0), selecting it by LabelPodName. It carries the data
// role's labels, not its selector, so it covers exactly one pod. mainPod must be one of the
// cluster's data pods, <cluster>-data-<ordinal>; anything else is refused.
func MainBudget(c *Cluster, mainPod string) (map[string]any, error) {
	if c == nil || c.mc == nil {
		return nil, errors.New("no admitted MemgraphCluster to render")
	}
	mc := c.mc
	if _, ok := PodOrdinal(DataSetName(mc.Name), mainPod); !ok {
		return nil, fmt.Errorf("the MAIN's pod %q is not a data pod of cluster %s (%s-<ordinal>)",
			Clip(mainPod), mc.Name, DataSetName(mc.Name))
	}
	labels := roleLabels(mc.Name, RoleData, mc.Spec.DataTemplate.Labels)
	return toStoredForm(budget(mc, MainBudgetName(mc.Name), labels, map[string]string{LabelPodName: mainPod}, 0))
}

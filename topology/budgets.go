package topology

import (
	"errors"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
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
//   - <cluster>-main, maxUnavailable 0, once the MAIN is known (Rendering.MainPod): the MAIN's pod
//     is never evicted while it is MAIN; the hook moves MAIN to a caught-up replica on a
//     schedulable node first, then the budget with it.
//
// No pod may be selected by two budgets: the Eviction API refuses to evict such a pod at all
// ("This pod has more than one PodDisruptionBudget, which the eviction subresource does not
// support", an error kubectl drain gives up on, not the 429 it retries). So <cluster>-data does
// not select the pod that <cluster>-main holds. Its maxUnavailable is then 2: with
// maxUnavailable, the disruption controller expects as many pods as the StatefulSet's
// spec.replicas but counts healthy only the pods the budget selects, so the MAIN, held by its
// own budget, takes one of the two, and the replicas still go one at a time.
//
// Metacontroller applies the two budgets as two writes, in an order of its own, so a pass that
// changed both when MAIN moves from pod A to pod B could leave A under both budgets between the
// writes — the very pod a drain of A's node is evicting. So a pass changes one of them: the
// MAIN's budget follows the MAIN at once, and <cluster>-data excludes the pod the observed
// <cluster>-main selects (the held pod), so it follows one pass later. Between the two, A is
// under no budget (it is a replica by then, which the drain may evict) and B under both (its
// evictions are refused, never allowed). When the MAIN's budget first appears, its pod is under
// both for one pass, refused rather than unprotected.
//
// With one data instance, <cluster>-data alone would allow evicting it (maxUnavailable counts
// pods, whatever their number); that instance is the MAIN, so the MAIN's budget holds the drain
// until a second data instance can take MAIN over (docs/operations.md, "Node maintenance").

// CoordinatorBudgetName and DataBudgetName are the role budgets' names, the StatefulSets' names.
func CoordinatorBudgetName(cluster string) string { return CoordinatorSetName(cluster) }
func DataBudgetName(cluster string) string        { return DataSetName(cluster) }

// MainBudgetName is the name of the budget that protects the MAIN's pod.
func MainBudgetName(cluster string) string { return cluster + "-main" }

func coordinatorBudget(mc *v1alpha1.MemgraphCluster) *policyv1.PodDisruptionBudget {
	return roleBudget(mc, CoordinatorBudgetName(mc.Name), RoleCoordinator, mc.Spec.CoordinatorTemplate.Labels)
}

func dataBudget(mc *v1alpha1.MemgraphCluster) *policyv1.PodDisruptionBudget {
	return roleBudget(mc, DataBudgetName(mc.Name), RoleData, mc.Spec.DataTemplate.Labels)
}

// roleBudget allows one eviction at a time among the pods of one role.
func roleBudget(mc *v1alpha1.MemgraphCluster, name, role string, userLabels map[string]string) *policyv1.PodDisruptionBudget {
	return budget(mc, name, roleLabels(mc.Name, role, userLabels), RoleSelector(mc.Name, role), 1)
}

func budget(mc *v1alpha1.MemgraphCluster, name string, labels, selector map[string]string, maxUnavailable int32) *policyv1.PodDisruptionBudget {
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
			v1alpha1.Clip(mainPod), mc.Name, DataSetName(mc.Name))
	}
	return toStoredForm(mainBudget(mc, mainPod))
}

// mainBudget is <cluster>-main for mainPod, a data pod of the cluster.
func mainBudget(mc *v1alpha1.MemgraphCluster, mainPod string) *policyv1.PodDisruptionBudget {
	labels := roleLabels(mc.Name, RoleData, mc.Spec.DataTemplate.Labels)
	return budget(mc, MainBudgetName(mc.Name), labels, map[string]string{LabelPodName: mainPod}, 0)
}

// dataBudgetBeside is <cluster>-data beside an observed <cluster>-main that selects heldPod: every
// data pod but heldPod, with maxUnavailable 2 (see above); the role budget when heldPod is no
// data pod of the cluster ("" for none). The hook renders it on every pass, so the budgets follow
// the MAIN when it moves, one write per pass.
func dataBudgetBeside(mc *v1alpha1.MemgraphCluster, heldPod string) *policyv1.PodDisruptionBudget {
	if _, ok := PodOrdinal(DataSetName(mc.Name), heldPod); !ok {
		return dataBudget(mc)
	}
	exclusive := budget(mc, DataBudgetName(mc.Name), roleLabels(mc.Name, RoleData, mc.Spec.DataTemplate.Labels),
		RoleSelector(mc.Name, RoleData), 2)
	exclusive.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{
		Key: LabelPodName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{heldPod},
	}}
	return exclusive
}

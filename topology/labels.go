package topology

import "github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"

// Labels and annotations the hook sets besides the selector labels (LabelName and friends).
const (
	// LabelPodIndex is set by the StatefulSet controller on each pod to its ordinal; with the
	// coordinator StatefulSet's ordinals starting at FirstCoordinatorID it is the coordinator id.
	LabelPodIndex = "apps.kubernetes.io/pod-index"

	// LabelPodName is set by the StatefulSet controller on each pod to the pod's name; the
	// MAIN's PodDisruptionBudget (MainBudget) selects the MAIN's pod by it.
	LabelPodName = "statefulset.kubernetes.io/pod-name"

	// AnnotationRestartedAt on a MemgraphCluster is copied into both pod templates, so changing
	// it (e.g. to the current time) rolls every pod the safe way without any other change.
	AnnotationRestartedAt = "memgraph.com/restartedAt"

	// AnnotationTemplateHash on a StatefulSet is a hash of the pod template the hook rendered
	// into it: a sync whose rendered hash differs from the observed one is changing the template,
	// and the StatefulSet's status.updateRevision does not describe it yet.
	AnnotationTemplateHash = "memgraph.com/pod-template-hash"

	// AnnotationTemplateGeneration on a StatefulSet is the metadata.generation with which its
	// current pod template arrived (TemplateGenerations).
	AnnotationTemplateGeneration = "memgraph.com/pod-template-generation"

	// LabelNodeCordoned is on the Nodes that are cordoned (spec.unschedulable, or the
	// node.kubernetes.io/unschedulable taint), with NodeCordonedValue: the hook's
	// DecoratorController on Nodes sets it and takes it off, and a MemgraphCluster's customize
	// hook selects the Nodes that carry it.
	LabelNodeCordoned = "memgraph.com/cordoned"
	NodeCordonedValue = "true"

	NameValue      = "memgraph"
	ManagedByValue = "memgraph-hooks"

	RoleCoordinator = "coordinator"
	RoleData        = "data"
)

// PodSelector matches the pods of both roles of one cluster.
func PodSelector(cluster string) map[string]string {
	return map[string]string{v1alpha1.LabelName: NameValue, v1alpha1.LabelInstance: cluster}
}

// RoleSelector matches the pods of one role of one cluster; it is the StatefulSet's selector and
// the role's Services' selector.
func RoleSelector(cluster, role string) map[string]string {
	sel := PodSelector(cluster)
	sel[v1alpha1.LabelComponent] = role
	return sel
}

// RoleOfPod returns RoleCoordinator or RoleData for a pod carrying our labels, "" otherwise.
func RoleOfPod(labels map[string]string) string {
	if labels[v1alpha1.LabelName] != NameValue {
		return ""
	}
	switch role := labels[v1alpha1.LabelComponent]; role {
	case RoleCoordinator, RoleData:
		return role
	default:
		return ""
	}
}

// roleLabels are the labels of a role's objects: the user's labels, then ours on top (admission
// forbids the user's from using our keys; ours win anyway for specs that skipped admission).
func roleLabels(cluster, role string, user map[string]string) map[string]string {
	out := make(map[string]string, len(user)+4)
	for k, v := range user {
		out[k] = v
	}
	for k, v := range RoleSelector(cluster, role) {
		out[k] = v
	}
	out[v1alpha1.LabelManagedBy] = ManagedByValue
	return out
}

package topology

import (
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Topology keys of the default placement: one pod of a role per node, and a role's pods spread
// over zones.
const (
	TopologyKeyHostname = "kubernetes.io/hostname"
	TopologyKeyZone     = "topology.kubernetes.io/zone"
)

// antiAffinityWeight is the weight of the Preferred term: the most a preference can weigh, so
// that the spread outweighs the scheduler's other scores.
const antiAffinityWeight int32 = 100

// roleAffinity is the affinity of a role's pods: the user's, exactly as written, when the
// template sets one; otherwise a pod anti-affinity on kubernetes.io/hostname against the role's
// other pods of the cluster, as spec.placement.antiAffinity asks (none for None).
func roleAffinity(user *corev1.Affinity, p v1alpha1.Placement, cluster, role string) *corev1.Affinity {
	if user != nil {
		return user
	}
	term := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: RoleSelector(cluster, role)},
		TopologyKey:   TopologyKeyHostname,
	}
	switch p.AntiAffinity {
	case v1alpha1.AntiAffinityRequired:
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term},
		}}
	case v1alpha1.AntiAffinityNone:
		return nil
	}
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: antiAffinityWeight, PodAffinityTerm: term}},
	}}
}

// roleSpread is the topology spread of a role's pods: the user's constraints, exactly as written,
// when the template sets any; otherwise one over topology.kubernetes.io/zone, maxSkew 1,
// ScheduleAnyway — a preference the scheduler scores, which never leaves a pod Pending (nodes
// without the zone label are simply not scored by it).
func roleSpread(user []corev1.TopologySpreadConstraint, cluster, role string) []corev1.TopologySpreadConstraint {
	if len(user) > 0 {
		return user
	}
	return []corev1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       TopologyKeyZone,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: RoleSelector(cluster, role)},
	}}
}

package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// placedPods renders mc and returns each role's pod template spec, coordinators first.
func placedPods(t *testing.T, mc *v1alpha1.MemgraphCluster) [2]corev1.PodSpec {
	t.Helper()
	c := admit(t, mc)
	n := c.Network()
	return [2]corev1.PodSpec{coordinatorPodSpec(c.mc, n), dataPodSpec(c.mc)}
}

func preferredAntiAffinity(cluster, role string) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: RoleSelector(cluster, role)},
			TopologyKey:   "kubernetes.io/hostname",
		}}},
	}}
}

func requiredAntiAffinity(cluster, role string) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: RoleSelector(cluster, role)},
			TopologyKey:   "kubernetes.io/hostname",
		}},
	}}
}

func zoneSpread(cluster, role string) []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchLabels: RoleSelector(cluster, role)},
	}}
}

// The user's node affinity, which replaces the default affinity of its role only.
var pinnedToPool = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
	RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"memgraph"}}},
	}}},
}}

var hostSpread = []corev1.TopologySpreadConstraint{{
	MaxSkew: 2, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule,
	LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "graph"}},
}}

// Each role's pods get a pod anti-affinity on the hostname against that role's pods of the
// cluster (preferred by default, required or none as spec.placement.antiAffinity says) and a zone
// spread; an affinity or spread constraints the user writes are rendered exactly as written and
// replace the default of that kind, for that role only.
func TestPlacementRender(t *testing.T) {
	type role struct {
		affinity *corev1.Affinity
		spread   []corev1.TopologySpreadConstraint
	}
	for _, tc := range []struct {
		name string
		edit func(*v1alpha1.MemgraphCluster)
		want [2]role
	}{
		{"defaults", func(*v1alpha1.MemgraphCluster) {}, [2]role{
			{preferredAntiAffinity("memgraph", RoleCoordinator), zoneSpread("memgraph", RoleCoordinator)},
			{preferredAntiAffinity("memgraph", RoleData), zoneSpread("memgraph", RoleData)},
		}},
		{"Required", func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Placement.AntiAffinity = v1alpha1.AntiAffinityRequired }, [2]role{
			{requiredAntiAffinity("memgraph", RoleCoordinator), zoneSpread("memgraph", RoleCoordinator)},
			{requiredAntiAffinity("memgraph", RoleData), zoneSpread("memgraph", RoleData)},
		}},
		{"None", func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Placement.AntiAffinity = v1alpha1.AntiAffinityNone }, [2]role{
			{nil, zoneSpread("memgraph", RoleCoordinator)},
			{nil, zoneSpread("memgraph", RoleData)},
		}},
		{"the user's affinity for the data instances", func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.Placement.AntiAffinity = v1alpha1.AntiAffinityRequired
			mc.Spec.DataTemplate.Affinity = pinnedToPool
		}, [2]role{
			{requiredAntiAffinity("memgraph", RoleCoordinator), zoneSpread("memgraph", RoleCoordinator)},
			{pinnedToPool, zoneSpread("memgraph", RoleData)},
		}},
		{"the user's spread for the coordinators", func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.TopologySpreadConstraints = hostSpread
		}, [2]role{
			{preferredAntiAffinity("memgraph", RoleCoordinator), hostSpread},
			{preferredAntiAffinity("memgraph", RoleData), zoneSpread("memgraph", RoleData)},
		}},
		{"the user's empty affinity opts a role out", func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.Affinity = &corev1.Affinity{}
		}, [2]role{
			{&corev1.Affinity{}, zoneSpread("memgraph", RoleCoordinator)},
			{preferredAntiAffinity("memgraph", RoleData), zoneSpread("memgraph", RoleData)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := apitest.MinimalCluster()
			tc.edit(mc)
			pods := placedPods(t, mc)
			for i, pod := range pods {
				got := role{pod.Affinity, pod.TopologySpreadConstraints}
				if diff := cmp.Diff(tc.want[i], got, cmp.AllowUnexported(role{})); diff != "" {
					t.Errorf("%s pods (-want +got):\n%s", []string{RoleCoordinator, RoleData}[i], diff)
				}
			}
		})
	}
}

// The anti-affinity selects exactly the pods of its role in its cluster: the StatefulSet's own
// selector, so neither the other role nor another cluster in the namespace repels a pod.
func TestPlacementSelectsTheRolesPodsOfTheCluster(t *testing.T) {
	mc := apitest.MinimalCluster()
	mc.Name = "graph"
	for _, child := range render(t, mc, Replicas{3, 2}) {
		if child["kind"] != "StatefulSet" {
			continue
		}
		spec := child["spec"].(map[string]any)
		selector := spec["selector"].(map[string]any)["matchLabels"]
		pod := spec["template"].(map[string]any)["spec"].(map[string]any)
		term := pod["affinity"].(map[string]any)["podAntiAffinity"].(map[string]any)["preferredDuringSchedulingIgnoredDuringExecution"].([]any)[0].(map[string]any)
		got := term["podAffinityTerm"].(map[string]any)["labelSelector"].(map[string]any)["matchLabels"]
		if diff := cmp.Diff(selector, got); diff != "" {
			t.Errorf("%s: anti-affinity selector differs from the StatefulSet's (-selector +anti-affinity):\n%s", childID(child), diff)
		}
		spread := pod["topologySpreadConstraints"].([]any)[0].(map[string]any)["labelSelector"].(map[string]any)["matchLabels"]
		if diff := cmp.Diff(selector, spread); diff != "" {
			t.Errorf("%s: spread selector differs from the StatefulSet's (-selector +spread):\n%s", childID(child), diff)
		}
	}
}

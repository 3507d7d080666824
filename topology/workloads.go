package topology

import (
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The StatefulSets. Their immutable fields (selector, serviceName, podManagementPolicy,
// volumeClaimTemplates) depend only on the cluster name and on storage, which admission freezes,
// so an in-place update never hits a field Kubernetes refuses to change.

func coordinatorStatefulSet(mc *v1alpha1.MemgraphCluster, n Network, replicas, partition int32) *appsv1.StatefulSet {
	name := CoordinatorSetName(mc.Name)
	o := mc.Spec.CoordinatorTemplate.PodOptions
	sts := statefulSet(mc, name, RoleCoordinator, o.Labels, replicas, partition, coordinatorPodSpec(mc, n), mc.Spec.Storage.Coordinators)
	// The pod-index label then equals the coordinator id (FirstCoordinatorID), which
	// MEMGRAPH_COORDINATOR_ID reads through the downward API.
	sts.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: FirstCoordinatorID}
	return sts
}

func dataStatefulSet(mc *v1alpha1.MemgraphCluster, agentImage string, replicas, partition int32) *appsv1.StatefulSet {
	name := DataSetName(mc.Name)
	o := mc.Spec.DataTemplate.PodOptions
	pod := withBackupAgent(dataPodSpec(mc), mc.Name, agentImage)
	sts := statefulSet(mc, name, RoleData, o.Labels, replicas, partition, pod, mc.Spec.Storage.Data)
	if FirstDataOrdinal != 0 {
		sts.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: FirstDataOrdinal}
	}
	return sts
}

// statefulSet keeps the RollingUpdate strategy with an explicit partition (the hook releases one
// pod at a time by lowering it) and leaves maxUnavailable to the API server's default: a cluster
// whose MaxUnavailableStatefulSet gate is off drops the field, and a desired value it drops
// would be an update on every sync.
func statefulSet(mc *v1alpha1.MemgraphCluster, name, role string, userLabels map[string]string, replicas, partition int32,
	pod corev1.PodSpec, rs v1alpha1.RoleStorage) *appsv1.StatefulSet {
	labels := roleLabels(mc.Name, role, userLabels)
	policy := appsv1.PersistentVolumeClaimRetentionPolicyType(mc.Spec.Storage.RetentionPolicy)
	return &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Namespace, Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			Selector:            &metav1.LabelSelector{MatchLabels: RoleSelector(mc.Name, role)},
			ServiceName:         name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type:          appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(partition)},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: templateAnnotations(mc)},
				Spec:       pod,
			},
			VolumeClaimTemplates: volumeClaimTemplates(rs),
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: policy,
				WhenScaled:  policy,
			},
		},
	}
}

// volumeClaimTemplates are written exactly as the API server stores them (apiVersion, kind,
// volumeMode Filesystem, status.phase Pending). Metacontroller merges this list atomically, so
// any server-filled difference would make it PUT every StatefulSet on every sync (its #566).
// Sizes are resource.Quantity values and so serialise in canonical form (1024Mi becomes 1Gi), as
// the server stores them.
func volumeClaimTemplates(rs v1alpha1.RoleStorage) []corev1.PersistentVolumeClaim {
	vcts := []corev1.PersistentVolumeClaim{claim(LibVolume, rs.LibPVCSize, rs.LibStorageAccessMode, rs.LibStorageClassName)}
	if *rs.CreateLogStorageClaim {
		vcts = append(vcts, claim(LogVolume, rs.LogPVCSize, rs.LogStorageAccessMode, rs.LogStorageClassName))
	}
	return vcts
}

func claim(name string, size resource.Quantity, mode v1alpha1.AccessMode, class string) corev1.PersistentVolumeClaim {
	pvc := corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.PersistentVolumeAccessMode(mode)},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
			VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem),
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	if class != "" {
		pvc.Spec.StorageClassName = ptr.To(class)
	}
	return pvc
}

// templateAnnotations carries the MemgraphCluster's AnnotationRestartedAt into a pod template:
// a new value is a new template revision, which the hook rolls out like any other.
func templateAnnotations(mc *v1alpha1.MemgraphCluster) map[string]string {
	at, ok := mc.Annotations[AnnotationRestartedAt]
	if !ok {
		return nil
	}
	return map[string]string{AnnotationRestartedAt: at}
}

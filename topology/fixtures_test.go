package topology

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Named fixtures shared by the tests.

// minimalCluster is what a user applies with an empty spec.
func minimalCluster() *MemgraphCluster {
	return &MemgraphCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: APIVersion, Kind: Kind},
		ObjectMeta: metav1.ObjectMeta{Name: "memgraph", Namespace: "default"},
	}
}

// retainDeleted is the minimal cluster whose volumes go with it.
func retainDeleted() *MemgraphCluster {
	mc := minimalCluster()
	mc.Spec.Storage.RetentionPolicy = RetentionDelete
	return mc
}

// everyKnob sets every field of the spec to something other than its default.
func everyKnob() *MemgraphCluster {
	mc := minimalCluster()
	mc.Name = "graph"
	mc.Namespace = "prod"
	mc.Annotations = map[string]string{AnnotationRestartedAt: "2026-05-04T03:02:01Z", "team": "graph"}
	mc.Spec = MemgraphClusterSpec{
		Coordinators:  5,
		DataInstances: 3,
		Image: Image{
			Repository: "registry.example.com:5000/mirror/memgraph",
			Tag:        "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			PullPolicy: corev1.PullAlways,
		},
		Secrets: Secrets{Name: "mg-license", LicenseKey: "license", OrganizationKey: "org"},
		TLS:     &TLS{SecretName: "graph-bolt-tls"},
		Storage: Storage{
			RetentionPolicy: RetentionDelete,
			Coordinators: RoleStorage{
				LibPVCSize: resource.MustParse("2048Mi"), LibStorageAccessMode: "ReadWriteOncePod", LibStorageClassName: "fast",
				CreateLogStorageClaim: ptr.To(true),
				LogPVCSize:            resource.MustParse("512Mi"), LogStorageAccessMode: "ReadWriteMany", LogStorageClassName: "slow",
			},
			Data: RoleStorage{
				LibPVCSize: resource.MustParse("50Gi"), LibStorageAccessMode: "ReadWriteOnce", LibStorageClassName: "ssd",
				CreateLogStorageClaim: ptr.To(false),
			},
		},
		ClusterDomain: "corp.internal",
		Placement:     Placement{AntiAffinity: AntiAffinityRequired},
		Ports:         ClusterPorts{Bolt: 7688, Management: 10001, Replication: 20001, Coordinator: 12001},
		CoordinatorTemplate: CoordinatorTemplate{
			PodOptions: podOptions("coordinator"),
			Probes: CoordinatorProbes{
				Readiness: ProbeTimings{FailureThreshold: 3, TimeoutSeconds: 2, PeriodSeconds: 4},
				Liveness:  ProbeTimings{FailureThreshold: 6, TimeoutSeconds: 3, PeriodSeconds: 7},
				Startup:   ProbeTimings{FailureThreshold: 30, TimeoutSeconds: 4, PeriodSeconds: 8},
			},
			TerminationGracePeriodSeconds: 45,
		},
		DataTemplate: DataTemplate{
			PodOptions: podOptions("data"),
			Probes: DataProbes{
				Readiness: ProbeTimings{FailureThreshold: 4, TimeoutSeconds: 5, PeriodSeconds: 6},
				Liveness:  ProbeTimings{FailureThreshold: 7, TimeoutSeconds: 8, PeriodSeconds: 9},
				Startup:   DataStartupProbeTimings{FailureThreshold: 720, TimeoutSeconds: 11, PeriodSeconds: 10},
			},
			TerminationGracePeriodSeconds: 900,
			SysctlInitContainer: SysctlInitContainer{
				Enabled: ptr.To(true), MaxMapCount: 1048576, Image: "registry.example.com:5000/mirror/busybox:1.37.0",
			},
		},
	}
	return mc
}

func podOptions(role string) PodOptions {
	return PodOptions{
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
		},
		Labels:       map[string]string{"team": "graph", "tier": role},
		ExtraEnv:     []corev1.EnvVar{{Name: "MEMGRAPH_USER", Value: "admin"}, secretRefEnv("MEMGRAPH_PASSWORD", "mg-auth", "password")},
		ExtraArgs:    []string{"--log-level=TRACE", "--query-execution-timeout-sec=0"},
		NodeSelector: map[string]string{"node.example.com/pool": role},
		Tolerations: []corev1.Toleration{{
			Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "memgraph", Effect: corev1.TaintEffectNoSchedule,
		}},
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey:   "kubernetes.io/hostname",
				LabelSelector: &metav1.LabelSelector{MatchLabels: RoleSelector("graph", role)},
			}},
		}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: RoleSelector("graph", role)},
		}},
		PriorityClassName: "memgraph-" + role,
	}
}

func secretRefEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key,
	}}}
}

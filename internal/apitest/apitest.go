// Package apitest holds named fixtures of the memgraph.com/v1alpha1 API for the tests of the
// packages that take it: a MemgraphCluster as a user writes one, and the same as a hook request's
// parent carries it.
package apitest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// MinimalCluster is what a user applies with an empty spec.
func MinimalCluster() *v1alpha1.MemgraphCluster {
	return &v1alpha1.MemgraphCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: "memgraph", Namespace: "default"},
	}
}

// RetainDeleted is the minimal cluster whose volumes go with it.
func RetainDeleted() *v1alpha1.MemgraphCluster {
	mc := MinimalCluster()
	mc.Spec.Storage.RetentionPolicy = v1alpha1.RetentionDelete
	return mc
}

// EveryKnob sets every field of the spec to something other than its default.
func EveryKnob() *v1alpha1.MemgraphCluster {
	mc := MinimalCluster()
	mc.Name = "graph"
	mc.Namespace = "prod"
	mc.Annotations = map[string]string{"memgraph.com/restartedAt": "2026-05-04T03:02:01Z", "team": "graph"}
	mc.Spec = v1alpha1.MemgraphClusterSpec{
		Coordinators:  5,
		DataInstances: 3,
		Image: v1alpha1.Image{
			Repository: "registry.example.com:5000/mirror/memgraph",
			Tag:        "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			PullPolicy: corev1.PullAlways,
		},
		Secrets: v1alpha1.Secrets{Name: "mg-license", LicenseKey: "license", OrganizationKey: "org"},
		TLS:     &v1alpha1.TLS{SecretName: "graph-bolt-tls"},
		Storage: v1alpha1.Storage{
			RetentionPolicy: v1alpha1.RetentionDelete,
			Coordinators: v1alpha1.RoleStorage{
				LibPVCSize: resource.MustParse("2048Mi"), LibStorageAccessMode: "ReadWriteOncePod", LibStorageClassName: "fast",
				CreateLogStorageClaim: ptr.To(true),
				LogPVCSize:            resource.MustParse("512Mi"), LogStorageAccessMode: "ReadWriteMany", LogStorageClassName: "slow",
			},
			Data: v1alpha1.RoleStorage{
				LibPVCSize: resource.MustParse("50Gi"), LibStorageAccessMode: "ReadWriteOnce", LibStorageClassName: "ssd",
				CreateLogStorageClaim: ptr.To(false),
			},
		},
		ClusterDomain: "corp.internal",
		Placement:     v1alpha1.Placement{AntiAffinity: v1alpha1.AntiAffinityRequired},
		Ports:         v1alpha1.ClusterPorts{Bolt: 7688, Management: 10001, Replication: 20001, Coordinator: 12001},
		CoordinatorTemplate: v1alpha1.CoordinatorTemplate{
			PodOptions: podOptions("coordinator"),
			Probes: v1alpha1.CoordinatorProbes{
				Readiness: v1alpha1.ProbeTimings{FailureThreshold: 3, TimeoutSeconds: 2, PeriodSeconds: 4},
				Liveness:  v1alpha1.ProbeTimings{FailureThreshold: 6, TimeoutSeconds: 3, PeriodSeconds: 7},
				Startup:   v1alpha1.ProbeTimings{FailureThreshold: 30, TimeoutSeconds: 4, PeriodSeconds: 8},
			},
			TerminationGracePeriodSeconds: 45,
		},
		DataTemplate: v1alpha1.DataTemplate{
			PodOptions: podOptions("data"),
			Probes: v1alpha1.DataProbes{
				Readiness: v1alpha1.ProbeTimings{FailureThreshold: 4, TimeoutSeconds: 5, PeriodSeconds: 6},
				Liveness:  v1alpha1.ProbeTimings{FailureThreshold: 7, TimeoutSeconds: 8, PeriodSeconds: 9},
				Startup:   v1alpha1.DataStartupProbeTimings{FailureThreshold: 720, TimeoutSeconds: 11, PeriodSeconds: 10},
			},
			TerminationGracePeriodSeconds: 900,
			SysctlInitContainer: v1alpha1.SysctlInitContainer{
				Enabled: ptr.To(true), MaxMapCount: 1048576, Image: "registry.example.com:5000/mirror/busybox:1.37.0",
			},
		},
	}
	return mc
}

func podOptions(role string) v1alpha1.PodOptions {
	return v1alpha1.PodOptions{
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
				LabelSelector: &metav1.LabelSelector{MatchLabels: roleSelector("graph", role)},
			}},
		}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: roleSelector("graph", role)},
		}},
		PriorityClassName: "memgraph-" + role,
	}
}

func secretRefEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key,
	}}}
}

// roleSelector is the selector of one role's pods as the hook renders it.
func roleSelector(cluster, role string) map[string]string {
	return map[string]string{v1alpha1.LabelName: "memgraph", v1alpha1.LabelInstance: cluster, v1alpha1.LabelComponent: role}
}

// ParentHead is the apiVersion and kind of a MemgraphCluster, as JSON members.
const ParentHead = `"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphCluster"`

// ParentJSON is a hook request's parent: the MemgraphCluster "memgraph" in namespace with spec
// (JSON).
func ParentJSON(namespace, spec string) []byte {
	return []byte(`{` + ParentHead + `,"metadata":{"name":"memgraph","namespace":"` + namespace + `"},"spec":` + spec + `}`)
}

// Quantities compares resource quantities by value, as the API server does.
var Quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// Hex64 is 64 hexadecimal digits: a sha256 digest.
const Hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func MessagesOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *v1alpha1.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *ValidationError", err)
	}
	var out []string
	for _, v := range ve.Violations {
		out = append(out, v.Message)
	}
	return out
}

// Destination is an S3 store as a user declares one.
func Destination() v1alpha1.BackupDestination {
	return v1alpha1.BackupDestination{S3: v1alpha1.S3Destination{
		Endpoint: "https://s3.eu-west-1.amazonaws.com", Bucket: "memgraph-backups", Prefix: "prod/nightly", Region: "eu-west-1",
		CredentialsSecret: v1alpha1.SecretReference{Name: "s3-credentials"},
	}}
}

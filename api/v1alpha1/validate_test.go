package v1alpha1_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// withExternal is the minimal cluster with spec.externalAccess of type LoadBalancer, edited.
func withExternal(edit func(e *v1alpha1.ExternalAccess)) func() *v1alpha1.MemgraphCluster {
	return with(func(mc *v1alpha1.MemgraphCluster) {
		mc.Spec.ExternalAccess = &v1alpha1.ExternalAccess{Type: v1alpha1.ExternalLoadBalancer}
		edit(mc.Spec.ExternalAccess)
	})
}

func with(edit func(mc *v1alpha1.MemgraphCluster)) func() *v1alpha1.MemgraphCluster {
	return func() *v1alpha1.MemgraphCluster {
		mc := apitest.MinimalCluster()
		edit(mc)
		return mc
	}
}

// Each rule rejects its case with its message, and a valid neighbour of the case passes.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		invalid func() *v1alpha1.MemgraphCluster
		valid   func() *v1alpha1.MemgraphCluster
		want    string
	}{
		{"name too long", with(func(mc *v1alpha1.MemgraphCluster) { mc.Name = "a234567890123456789012345678901234567890x" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Name = "a234567890123456789012345678901234567890" }), v1alpha1.MsgClusterName},
		{"name starts with a digit", with(func(mc *v1alpha1.MemgraphCluster) { mc.Name = "1graph" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Name = "graph-1" }), v1alpha1.MsgClusterName},
		{"even coordinators", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Coordinators = 4 }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Coordinators = 5 }), v1alpha1.MsgCoordinators},
		{"one coordinator", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Coordinators = 1 }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Coordinators = 3 }), v1alpha1.MsgCoordinators},
		{"negative data instances", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataInstances = -1 }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataInstances = 1 }), v1alpha1.MsgDataInstances},
		{"tag in repository", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Repository = "memgraph/memgraph:3.12.0" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Repository = "localhost:5000/memgraph/memgraph" }), v1alpha1.MsgImageRepository},
		{"digest in repository", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Repository = "memgraph/memgraph@sha256:abc" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Repository = "memgraph/memgraph" }), v1alpha1.MsgImageRepository},
		{"malformed tag", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Tag = ":3.12" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Tag = "3.12.0-relwithdebinfo" }), v1alpha1.MsgImageTag},
		{"short digest", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Tag = "sha256:abc" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Tag = "sha256:" + apitest.Hex64 }), v1alpha1.MsgImageTag},
		{"same secret keys", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Secrets.OrganizationKey = v1alpha1.DefaultLicenseKey }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Secrets.OrganizationKey = "org" }), v1alpha1.MsgSecretKeys},
		{"trailing dot in cluster domain", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.ClusterDomain = "cluster.local." }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.ClusterDomain = "corp.internal" }), v1alpha1.MsgClusterDomain},
		{"shared port", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Ports.Replication = v1alpha1.DefaultManagementPort }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Ports.Replication = 20001 }), v1alpha1.MsgPortsDistinct},
		{"reserved label", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.Labels = map[string]string{v1alpha1.LabelComponent: "x"}
		}), with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataTemplate.Labels = map[string]string{"component": "x"} }), v1alpha1.MsgReservedLabels},
		{"license env shadowed", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraEnv = []corev1.EnvVar{{Name: v1alpha1.EnvLicense, Value: "x"}}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraEnv = []corev1.EnvVar{{Name: "MEMGRAPH_USER", Value: "x"}}
		}), v1alpha1.MsgReservedEnv},
		{"identity env shadowed", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraEnv = []corev1.EnvVar{{Name: v1alpha1.EnvCoordinatorID, Value: "1"}}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraEnv = []corev1.EnvVar{{Name: "COORDINATOR_ID", Value: "1"}}
		}), v1alpha1.MsgReservedEnv},
		{"pod name env shadowed", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraEnv = []corev1.EnvVar{{Name: v1alpha1.EnvPodName, Value: "x"}}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraEnv = []corev1.EnvVar{{Name: "POD_NAMESPACE", Value: "x"}}
		}), v1alpha1.MsgReservedEnv},
		{"port flag in args", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--bolt-port=7688"}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--bolt-server-name-for-init=x"}
		}), v1alpha1.MsgReservedArgs},
		{"underscored identity flag in args", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--coordinator_id", "2"}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--log-level", "TRACE"}
		}), v1alpha1.MsgReservedArgs},
		{"data directory in args", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"-data-directory=/x"}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--data-recovery-on-startup=true"}
		}), v1alpha1.MsgReservedArgs},
		{"TLS flag in args", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--bolt-cert-file=/etc/memgraph/ssl/cert.pem"}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.TLS = &v1alpha1.TLS{SecretName: "bolt"}
		}), v1alpha1.MsgReservedArgs},
		{"underscored TLS key flag in args", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--bolt_key_file", "/k.pem"}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--bolt-server-name-for-init", "x"}
		}), v1alpha1.MsgReservedArgs},
		{"TLS secret name with capitals", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.TLS = &v1alpha1.TLS{SecretName: "Bolt_TLS"} }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.TLS = &v1alpha1.TLS{SecretName: "bolt-tls.v2"} }), v1alpha1.MsgTLSSecretName},
		{"cluster TLS secret name with capitals", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.TLS = &v1alpha1.TLS{SecretName: "bolt-tls", ClusterSecretName: "Peer_TLS"}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.TLS = &v1alpha1.TLS{SecretName: "bolt-tls", ClusterSecretName: "peer-tls"}
		}), v1alpha1.MsgClusterSecretName},
		{"intra-cluster TLS flag in extraArgs", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--cluster_ca_file=/ca.crt"}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--cluster-tls-something"}
		}), v1alpha1.MsgReservedArgs},
		{"empty TLS secret name", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.TLS = &v1alpha1.TLS{} }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.TLS = nil }), v1alpha1.MsgTLSSecretName},
		{"auth secret name with capitals", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Auth = &v1alpha1.Auth{SecretName: "Hook_Auth"} }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Auth = &v1alpha1.Auth{SecretName: "hook-auth.v2"} }), v1alpha1.MsgAuthSecretName},
		{"empty auth secret name", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Auth = &v1alpha1.Auth{} }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Auth = nil }), v1alpha1.MsgAuthSecretName},
		{"WAL disabled on data", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--storage-wal-enabled=false"}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--storage-wal-enabled=false"}
		}), v1alpha1.MsgDataWAL},
		{"WAL negated on data", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--nostorage_wal_enabled"}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--storage-wal-file-size-kib=20480"}
		}), v1alpha1.MsgDataWAL},
		{"duplicate extra env", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraEnv = []corev1.EnvVar{{Name: "A"}, {Name: "A"}}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraEnv = []corev1.EnvVar{{Name: "A"}, {Name: "B"}}
		}), "dataTemplate.extraEnv[1] duplicates item 0: the list's items must be unique by name"},
		{"step timeout below a minute", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "59s" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "1m" }), v1alpha1.MsgStepTimeout},
		{"step timeout beyond a week", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "168h1s" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "167h59m60s" }), v1alpha1.MsgStepTimeout},
		{"step timeout in milliseconds", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "90000ms" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "90s" }), v1alpha1.MsgStepTimeout},
		{"step timeout without a unit", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "600" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "1h30m" }), v1alpha1.MsgStepTimeout},
		{"stuck-after below a minute", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.ReplicaHealth.StuckAfter = "30s" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.ReplicaHealth.StuckAfter = "1m" }), v1alpha1.MsgStuckAfter},
		{"stuck-after without a unit", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.ReplicaHealth.StuckAfter = "600" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.ReplicaHealth.StuckAfter = "2h" }), v1alpha1.MsgStuckAfter},
		{"unknown pull policy", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.PullPolicy = "Sometimes" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.PullPolicy = corev1.PullNever }), "image.pullPolicy must be Always, IfNotPresent or Never"},
		{"unknown retention policy", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Storage.RetentionPolicy = "Keep" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Storage.RetentionPolicy = v1alpha1.RetentionDelete }), "storage.retentionPolicy must be Retain or Delete"},
		{"read-only access mode", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Storage.Data.LibStorageAccessMode = "ReadOnlyMany" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Storage.Data.LibStorageAccessMode = "ReadWriteMany" }),
			"storage.data.libStorageAccessMode must be ReadWriteOnce, ReadWriteOncePod or ReadWriteMany"},
		{"negative volume size", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Storage.Data.LogPVCSize = resource.MustParse("-1Gi") }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Storage.Data.LogPVCSize = resource.MustParse("100Mi") }), v1alpha1.MsgVolumeSize},
		{"port out of range", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Ports.Bolt = 70000 }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Ports.Bolt = 65535 }), "ports.bolt must be at most 65535"},
		{"negative probe timing", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataTemplate.Probes.Startup.PeriodSeconds = -5 }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataTemplate.Probes.Startup.PeriodSeconds = 1 }),
			"dataTemplate.probes.startup.periodSeconds must be at least 1"},
		{"eleven coordinators", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Coordinators = 11 }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Coordinators = v1alpha1.MaxCoordinators }), v1alpha1.MsgCoordinatorsMax},
		{"data instances beyond the limit", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataInstances = math.MaxInt32 }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataInstances = v1alpha1.MaxDataInstances }), v1alpha1.MsgDataInstancesMax},
		{"cluster domain too long", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.ClusterDomain = strings.Repeat("a.", 126) + "ab" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.ClusterDomain = strings.Repeat("a.", 126) + "a" }),
			"clusterDomain must be at most 253 characters long, got 254"},
		{"zero coordinator volume", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.Storage.Coordinators.LibPVCSize = resource.MustParse("-0.5")
		}),
			with(func(mc *v1alpha1.MemgraphCluster) {
				mc.Spec.Storage.Coordinators.LibPVCSize = resource.MustParse("0.5")
			}), v1alpha1.MsgVolumeSize},
		{"too many labels", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.CoordinatorTemplate.Labels = labels(65) }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.CoordinatorTemplate.Labels = labels(64) }),
			"coordinatorTemplate.labels must have at most 64 entries, got 65"},
		{"extra argument too long", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{strings.Repeat("x", 1025)}
		}),
			with(func(mc *v1alpha1.MemgraphCluster) {
				mc.Spec.DataTemplate.ExtraArgs = []string{strings.Repeat("x", 1024)}
			}),
			"dataTemplate.extraArgs[0] must be at most 1024 characters long, got 1025"},
		{"long image tag", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Repository = strings.Repeat("r", 256) }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Repository = strings.Repeat("r", 255) }),
			"image.repository must be at most 255 characters long, got 256"},
		{"preferred MAIN by pod name", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.PreferredMain = "data-1" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.PreferredMain = "instance_1" }), v1alpha1.MsgPreferredMain},
		{"preferred MAIN with a leading zero", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.PreferredMain = "instance_01" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.PreferredMain = "instance_0" }), v1alpha1.MsgPreferredMain},
		{"preferred MAIN beyond the declared instances", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.PreferredMain = "instance_2" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.PreferredMain, mc.Spec.DataInstances = "instance_2", 3 }), v1alpha1.MsgPreferredDeclared},
		{"preferred MAIN beyond 128", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.PreferredMain = "instance_999" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.PreferredMain, mc.Spec.DataInstances = "instance_127", 128 }), v1alpha1.MsgPreferredDeclared},
		{"source ranges on a NodePort", withExternal(func(e *v1alpha1.ExternalAccess) {
			e.Type, e.LoadBalancerSourceRanges = v1alpha1.ExternalNodePort, []string{"10.0.0.0/8"}
		}),
			withExternal(func(e *v1alpha1.ExternalAccess) { e.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} }), v1alpha1.MsgSourceRangesType},
		{"a source range that is no CIDR", withExternal(func(e *v1alpha1.ExternalAccess) { e.LoadBalancerSourceRanges = []string{"10.0.0.300/8"} }),
			withExternal(func(e *v1alpha1.ExternalAccess) {
				e.LoadBalancerSourceRanges = []string{"2001:db8::/32", "10.0.0.1/32"}
			}), v1alpha1.MsgSourceRange},
		{"an IPv4-mapped source range", withExternal(func(e *v1alpha1.ExternalAccess) { e.LoadBalancerSourceRanges = []string{"::ffff:10.0.0.0/104"} }),
			withExternal(func(e *v1alpha1.ExternalAccess) { e.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} }), v1alpha1.MsgSourceRange},
		{"a hostname template without {instance}", withExternal(func(e *v1alpha1.ExternalAccess) { e.HostnameTemplate = "graph.example.com" }),
			withExternal(func(e *v1alpha1.ExternalAccess) { e.HostnameTemplate = "{instance}.graph.example.com" }), v1alpha1.MsgHostnameInstance},
		{"a hostname template that is no DNS name", withExternal(func(e *v1alpha1.ExternalAccess) { e.HostnameTemplate = "{instance}.Graph_Example.com." }),
			withExternal(func(e *v1alpha1.ExternalAccess) { e.HostnameTemplate = "db-{instance}.graph.example.com" }), v1alpha1.MsgHostnameForm},
		{"preferred MAIN with a sign", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.PreferredMain = "instance_-1" }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.PreferredMain = "instance_1" }), v1alpha1.MsgPreferredMain},
		{"negative coordinator grace period", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.CoordinatorTemplate.TerminationGracePeriodSeconds = -1 }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.CoordinatorTemplate.TerminationGracePeriodSeconds = 1 }), v1alpha1.MsgGracePeriod},
		{"data grace period beyond a day", with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataTemplate.TerminationGracePeriodSeconds = 86401 }),
			with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataTemplate.TerminationGracePeriodSeconds = 86400 }), v1alpha1.MsgGracePeriod},
		{"sysctl init container without an image", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.SysctlInitContainer = v1alpha1.SysctlInitContainer{Enabled: ptr.To(true)}
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.SysctlInitContainer = v1alpha1.SysctlInitContainer{Enabled: ptr.To(true), Image: "busybox:1.37.0"}
		}), v1alpha1.MsgSysctlImage},
		{"max map count below the kernel's default", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.SysctlInitContainer.MaxMapCount = 65529
		}), with(func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataTemplate.SysctlInitContainer.MaxMapCount = 65530 }), v1alpha1.MsgMaxMapCount},
		{"max map count beyond the kernel's int", with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.SysctlInitContainer.MaxMapCount = math.MaxInt32 + 1
		}), with(func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.DataTemplate.SysctlInitContainer.MaxMapCount = math.MaxInt32
		}), v1alpha1.MsgMaxMapCount},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff([]string{tc.want}, apitest.MessagesOf(t, tc.invalid().Validate())); diff != "" {
				t.Errorf("invalid case (-want +got):\n%s", diff)
			}
			if err := tc.valid().Validate(); err != nil {
				t.Errorf("valid neighbour rejected: %v", err)
			}
		})
	}
}

func labels(n int) map[string]string {
	out := map[string]string{}
	for i := range n {
		out[fmt.Sprintf("label-%d", i)] = "x"
	}
	return out
}

func TestValidateAcceptsFixtures(t *testing.T) {
	for name, mc := range map[string]*v1alpha1.MemgraphCluster{"minimal": apitest.MinimalCluster(), "every knob": apitest.EveryKnob(), "retain delete": apitest.RetainDeleted()} {
		if err := mc.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// One error lists every broken rule, in a stable order.
func TestValidateListsEveryViolation(t *testing.T) {
	mc := apitest.MinimalCluster()
	mc.Spec.Coordinators = 2
	mc.Spec.Image.Repository = "memgraph:latest"
	mc.Spec.Secrets.LicenseKey = v1alpha1.DefaultOrganizationKey
	want := []string{v1alpha1.MsgCoordinators, v1alpha1.MsgImageRepository, v1alpha1.MsgSecretKeys}
	if diff := cmp.Diff(want, apitest.MessagesOf(t, mc.Validate())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestValidateUpdate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(mc *v1alpha1.MemgraphCluster)
		want []string
	}{
		{"scaling both roles is allowed", func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Coordinators, mc.Spec.DataInstances = 5, 4 }, nil},
		{"retention policy may change", func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Storage.RetentionPolicy = v1alpha1.RetentionDelete }, nil},
		{"the same size written differently is no change", func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.Storage.Data.LibPVCSize = resource.MustParse("1024Mi")
		}, nil},
		{"coordinator volume size", func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.Storage.Coordinators.LibPVCSize = resource.MustParse("2Gi")
		}, []string{v1alpha1.MsgCoordinatorStorage}},
		{"data storage class", func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Storage.Data.LogStorageClassName = "fast" }, []string{v1alpha1.MsgDataStorage}},
		{"dropping the data log claim", func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.Storage.Data.CreateLogStorageClaim = ptr.To(false)
		}, []string{v1alpha1.MsgDataStorage}},
		{"coordinator settings may change", func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.CoordinatorSettings.GlobalReadOnly = ptr.To(true)
		}, nil},
		{"replication mode", func(mc *v1alpha1.MemgraphCluster) { mc.Spec.ReplicationMode = v1alpha1.ReplicationAsync }, []string{v1alpha1.MsgReplicationFixed}},
		{"replication mode override added", func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.ReplicationModeOverrides = []v1alpha1.ReplicationModeOverride{{Instance: "instance_1", Mode: v1alpha1.ReplicationAsync}}
		}, []string{v1alpha1.MsgReplicationFixed}},
		{"fromBackup added to an existing cluster", func(mc *v1alpha1.MemgraphCluster) {
			d := apitest.Destination()
			mc.Spec.Bootstrap, mc.Spec.Backup = &v1alpha1.Bootstrap{FromBackup: &v1alpha1.FromBackup{Name: "nightly"}}, &v1alpha1.ClusterBackup{Destination: &d}
		}, []string{v1alpha1.MsgFromBackupCreateOnly}},
		{"creation rules still apply", func(mc *v1alpha1.MemgraphCluster) {
			mc.Spec.Coordinators = 4
			mc.Spec.Storage.Coordinators.LibStorageAccessMode = "ReadWriteMany"
		}, []string{v1alpha1.MsgCoordinators, v1alpha1.MsgCoordinatorStorage}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			updated := apitest.MinimalCluster()
			tc.edit(updated)
			if diff := cmp.Diff(tc.want, apitest.MessagesOf(t, v1alpha1.ValidateUpdate(apitest.MinimalCluster(), updated))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if err := v1alpha1.ValidateUpdate(nil, apitest.MinimalCluster()); err != nil {
		t.Errorf("a create (no old object) of a valid cluster: %v", err)
	}
}

func TestValidateReplicationModes(t *testing.T) {
	override := func(instance string, mode v1alpha1.ReplicationMode) v1alpha1.ReplicationModeOverride {
		return v1alpha1.ReplicationModeOverride{Instance: instance, Mode: mode}
	}
	for _, tc := range []struct {
		name      string
		mode      v1alpha1.ReplicationMode
		overrides []v1alpha1.ReplicationModeOverride
		want      []string
	}{
		{"unset", "", nil, nil},
		{"Async with a Sync override", v1alpha1.ReplicationAsync, []v1alpha1.ReplicationModeOverride{override("instance_0", v1alpha1.ReplicationSync)}, nil},
		{"StrictSync with Async", v1alpha1.ReplicationStrictSync, []v1alpha1.ReplicationModeOverride{override("instance_1", v1alpha1.ReplicationAsync)}, nil},
		{"unset (Sync) with StrictSync", "", []v1alpha1.ReplicationModeOverride{override("instance_1", v1alpha1.ReplicationStrictSync)}, []string{v1alpha1.MsgReplicationMix}},
		{"StrictSync with Sync", v1alpha1.ReplicationStrictSync, []v1alpha1.ReplicationModeOverride{override("instance_1", v1alpha1.ReplicationSync)}, []string{v1alpha1.MsgReplicationMix}},
		{"Async with both", v1alpha1.ReplicationAsync, []v1alpha1.ReplicationModeOverride{override("instance_0", v1alpha1.ReplicationSync),
			override("instance_1", v1alpha1.ReplicationStrictSync)}, []string{v1alpha1.MsgReplicationMix}},
		{"override of no instance", v1alpha1.ReplicationSync, []v1alpha1.ReplicationModeOverride{override("data-1", v1alpha1.ReplicationAsync)}, []string{v1alpha1.MsgOverrideInstance}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := apitest.MinimalCluster()
			mc.Spec.ReplicationMode, mc.Spec.ReplicationModeOverrides = tc.mode, tc.overrides
			if diff := cmp.Diff(tc.want, apitest.MessagesOf(t, mc.Validate())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A preferred MAIN of more digits than any declared instance can have breaks both its length
// and its rule, as the API server reports it.
func TestPreferredMainTooLong(t *testing.T) {
	mc := apitest.MinimalCluster()
	mc.Spec.PreferredMain = "instance_1000"
	want := []string{"preferredMain must be at most 12 characters long, got 13", v1alpha1.MsgPreferredMain}
	if diff := cmp.Diff(want, apitest.MessagesOf(t, mc.Validate())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Scaling the coordinators is refused while the cluster hibernates and in the update that sets or
// clears hibernate; everything else about hibernating is allowed.
func TestValidateUpdateHibernation(t *testing.T) {
	hibernating := func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Hibernate = ptr.To(true) }
	awake := func(*v1alpha1.MemgraphCluster) {}
	for _, tc := range []struct {
		name     string
		old, new func(mc *v1alpha1.MemgraphCluster)
		want     []string
	}{
		{"hibernate", awake, hibernating, nil},
		{"wake", hibernating, awake, nil},
		{"hibernate and scale the coordinators", awake, func(mc *v1alpha1.MemgraphCluster) {
			hibernating(mc)
			mc.Spec.Coordinators = 5
		}, []string{v1alpha1.MsgHibernateScale}},
		{"scale the coordinators while hibernated", func(mc *v1alpha1.MemgraphCluster) {
			hibernating(mc)
			mc.Spec.Coordinators = 5
		}, hibernating, []string{v1alpha1.MsgHibernateScale}},
		{"wake and scale the coordinators", hibernating, func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Coordinators = 5 }, []string{v1alpha1.MsgHibernateScale}},
		{"scale the data instances while hibernated", hibernating, func(mc *v1alpha1.MemgraphCluster) {
			hibernating(mc)
			mc.Spec.DataInstances = 4
		}, nil},
		{"scale the coordinators awake", awake, func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Coordinators = 7 }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, updated := apitest.MinimalCluster(), apitest.MinimalCluster()
			tc.old(old)
			tc.new(updated)
			if diff := cmp.Diff(tc.want, apitest.MessagesOf(t, v1alpha1.ValidateUpdate(old, updated))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestStepTimeoutSeconds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"", 600},
		{"90s", 90},
		{"1h30m", 5400},
		{"1m0s", 60},
		{"2h2h", 4 * 3600},
		{"168h", 168 * 3600},
		{"10", 600},                    // no unit (only a spec that skipped admission): the default
		{"99999999999999999999h", 600}, // overflows: the default
		{"169h", 600},                  // beyond the bound: the default
	} {
		if got := (v1alpha1.Rollout{StepTimeout: tc.in}).StepTimeoutSeconds(); got != tc.want {
			t.Errorf("StepTimeoutSeconds(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

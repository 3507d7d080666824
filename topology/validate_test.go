package topology

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func messagesOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *ValidationError", err)
	}
	var out []string
	for _, v := range ve.Violations {
		out = append(out, v.Message)
	}
	return out
}

// withExternal is the minimal cluster with spec.externalAccess of type LoadBalancer, edited.
func withExternal(edit func(e *ExternalAccess)) func() *MemgraphCluster {
	return with(func(mc *MemgraphCluster) {
		mc.Spec.ExternalAccess = &ExternalAccess{Type: ExternalLoadBalancer}
		edit(mc.Spec.ExternalAccess)
	})
}

func with(edit func(mc *MemgraphCluster)) func() *MemgraphCluster {
	return func() *MemgraphCluster {
		mc := minimalCluster()
		edit(mc)
		return mc
	}
}

// Each rule rejects its case with its message, and a valid neighbour of the case passes.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		invalid func() *MemgraphCluster
		valid   func() *MemgraphCluster
		want    string
	}{
		{"name too long", with(func(mc *MemgraphCluster) { mc.Name = "a234567890123456789012345678901234567890x" }),
			with(func(mc *MemgraphCluster) { mc.Name = "a234567890123456789012345678901234567890" }), MsgClusterName},
		{"name starts with a digit", with(func(mc *MemgraphCluster) { mc.Name = "1graph" }),
			with(func(mc *MemgraphCluster) { mc.Name = "graph-1" }), MsgClusterName},
		{"even coordinators", with(func(mc *MemgraphCluster) { mc.Spec.Coordinators = 4 }),
			with(func(mc *MemgraphCluster) { mc.Spec.Coordinators = 5 }), MsgCoordinators},
		{"one coordinator", with(func(mc *MemgraphCluster) { mc.Spec.Coordinators = 1 }),
			with(func(mc *MemgraphCluster) { mc.Spec.Coordinators = 3 }), MsgCoordinators},
		{"negative data instances", with(func(mc *MemgraphCluster) { mc.Spec.DataInstances = -1 }),
			with(func(mc *MemgraphCluster) { mc.Spec.DataInstances = 1 }), MsgDataInstances},
		{"tag in repository", with(func(mc *MemgraphCluster) { mc.Spec.Image.Repository = "memgraph/memgraph:3.12.0" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Image.Repository = "localhost:5000/memgraph/memgraph" }), MsgImageRepository},
		{"digest in repository", with(func(mc *MemgraphCluster) { mc.Spec.Image.Repository = "memgraph/memgraph@sha256:abc" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Image.Repository = "memgraph/memgraph" }), MsgImageRepository},
		{"malformed tag", with(func(mc *MemgraphCluster) { mc.Spec.Image.Tag = ":3.12" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Image.Tag = "3.12.0-relwithdebinfo" }), MsgImageTag},
		{"short digest", with(func(mc *MemgraphCluster) { mc.Spec.Image.Tag = "sha256:abc" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Image.Tag = "sha256:" + hex64 }), MsgImageTag},
		{"same secret keys", with(func(mc *MemgraphCluster) { mc.Spec.Secrets.OrganizationKey = DefaultLicenseKey }),
			with(func(mc *MemgraphCluster) { mc.Spec.Secrets.OrganizationKey = "org" }), MsgSecretKeys},
		{"trailing dot in cluster domain", with(func(mc *MemgraphCluster) { mc.Spec.ClusterDomain = "cluster.local." }),
			with(func(mc *MemgraphCluster) { mc.Spec.ClusterDomain = "corp.internal" }), MsgClusterDomain},
		{"shared port", with(func(mc *MemgraphCluster) { mc.Spec.Ports.Replication = DefaultManagementPort }),
			with(func(mc *MemgraphCluster) { mc.Spec.Ports.Replication = 20001 }), MsgPortsDistinct},
		{"reserved label", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.Labels = map[string]string{LabelComponent: "x"}
		}), with(func(mc *MemgraphCluster) { mc.Spec.DataTemplate.Labels = map[string]string{"component": "x"} }), MsgReservedLabels},
		{"license env shadowed", with(func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraEnv = []corev1.EnvVar{{Name: EnvLicense, Value: "x"}}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraEnv = []corev1.EnvVar{{Name: "MEMGRAPH_USER", Value: "x"}}
		}), MsgReservedEnv},
		{"identity env shadowed", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraEnv = []corev1.EnvVar{{Name: EnvCoordinatorID, Value: "1"}}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraEnv = []corev1.EnvVar{{Name: "COORDINATOR_ID", Value: "1"}}
		}), MsgReservedEnv},
		{"pod name env shadowed", with(func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraEnv = []corev1.EnvVar{{Name: EnvPodName, Value: "x"}}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraEnv = []corev1.EnvVar{{Name: "POD_NAMESPACE", Value: "x"}}
		}), MsgReservedEnv},
		{"port flag in args", with(func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--bolt-port=7688"}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--bolt-server-name-for-init=x"}
		}), MsgReservedArgs},
		{"underscored identity flag in args", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--coordinator_id", "2"}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--log-level", "TRACE"}
		}), MsgReservedArgs},
		{"data directory in args", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"-data-directory=/x"}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--data-recovery-on-startup=true"}
		}), MsgReservedArgs},
		{"TLS flag in args", with(func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--bolt-cert-file=/etc/memgraph/ssl/cert.pem"}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.TLS = &TLS{SecretName: "bolt"}
		}), MsgReservedArgs},
		{"underscored TLS key flag in args", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--bolt_key_file", "/k.pem"}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--bolt-server-name-for-init", "x"}
		}), MsgReservedArgs},
		{"TLS secret name with capitals", with(func(mc *MemgraphCluster) { mc.Spec.TLS = &TLS{SecretName: "Bolt_TLS"} }),
			with(func(mc *MemgraphCluster) { mc.Spec.TLS = &TLS{SecretName: "bolt-tls.v2"} }), MsgTLSSecretName},
		{"cluster TLS secret name with capitals", with(func(mc *MemgraphCluster) {
			mc.Spec.TLS = &TLS{SecretName: "bolt-tls", ClusterSecretName: "Peer_TLS"}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.TLS = &TLS{SecretName: "bolt-tls", ClusterSecretName: "peer-tls"}
		}), MsgClusterSecretName},
		{"intra-cluster TLS flag in extraArgs", with(func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--cluster_ca_file=/ca.crt"}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--cluster-tls-something"}
		}), MsgReservedArgs},
		{"empty TLS secret name", with(func(mc *MemgraphCluster) { mc.Spec.TLS = &TLS{} }),
			with(func(mc *MemgraphCluster) { mc.Spec.TLS = nil }), MsgTLSSecretName},
		{"auth secret name with capitals", with(func(mc *MemgraphCluster) { mc.Spec.Auth = &Auth{SecretName: "Hook_Auth"} }),
			with(func(mc *MemgraphCluster) { mc.Spec.Auth = &Auth{SecretName: "hook-auth.v2"} }), MsgAuthSecretName},
		{"empty auth secret name", with(func(mc *MemgraphCluster) { mc.Spec.Auth = &Auth{} }),
			with(func(mc *MemgraphCluster) { mc.Spec.Auth = nil }), MsgAuthSecretName},
		{"WAL disabled on data", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--storage-wal-enabled=false"}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorTemplate.ExtraArgs = []string{"--storage-wal-enabled=false"}
		}), MsgDataWAL},
		{"WAL negated on data", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--nostorage_wal_enabled"}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraArgs = []string{"--storage-wal-file-size-kib=20480"}
		}), MsgDataWAL},
		{"duplicate extra env", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraEnv = []corev1.EnvVar{{Name: "A"}, {Name: "A"}}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.ExtraEnv = []corev1.EnvVar{{Name: "A"}, {Name: "B"}}
		}), "dataTemplate.extraEnv[1] duplicates item 0: the list's items must be unique by name"},
		{"step timeout below a minute", with(func(mc *MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "59s" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "1m" }), MsgStepTimeout},
		{"step timeout beyond a week", with(func(mc *MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "168h1s" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "167h59m60s" }), MsgStepTimeout},
		{"step timeout in milliseconds", with(func(mc *MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "90000ms" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "90s" }), MsgStepTimeout},
		{"step timeout without a unit", with(func(mc *MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "600" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Rollout.StepTimeout = "1h30m" }), MsgStepTimeout},
		{"stuck-after below a minute", with(func(mc *MemgraphCluster) { mc.Spec.ReplicaHealth.StuckAfter = "30s" }),
			with(func(mc *MemgraphCluster) { mc.Spec.ReplicaHealth.StuckAfter = "1m" }), MsgStuckAfter},
		{"stuck-after without a unit", with(func(mc *MemgraphCluster) { mc.Spec.ReplicaHealth.StuckAfter = "600" }),
			with(func(mc *MemgraphCluster) { mc.Spec.ReplicaHealth.StuckAfter = "2h" }), MsgStuckAfter},
		{"unknown pull policy", with(func(mc *MemgraphCluster) { mc.Spec.Image.PullPolicy = "Sometimes" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Image.PullPolicy = corev1.PullNever }), "image.pullPolicy must be Always, IfNotPresent or Never"},
		{"unknown retention policy", with(func(mc *MemgraphCluster) { mc.Spec.Storage.RetentionPolicy = "Keep" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Storage.RetentionPolicy = RetentionDelete }), "storage.retentionPolicy must be Retain or Delete"},
		{"read-only access mode", with(func(mc *MemgraphCluster) { mc.Spec.Storage.Data.LibStorageAccessMode = "ReadOnlyMany" }),
			with(func(mc *MemgraphCluster) { mc.Spec.Storage.Data.LibStorageAccessMode = "ReadWriteMany" }),
			"storage.data.libStorageAccessMode must be ReadWriteOnce, ReadWriteOncePod or ReadWriteMany"},
		{"negative volume size", with(func(mc *MemgraphCluster) { mc.Spec.Storage.Data.LogPVCSize = resource.MustParse("-1Gi") }),
			with(func(mc *MemgraphCluster) { mc.Spec.Storage.Data.LogPVCSize = resource.MustParse("100Mi") }), MsgVolumeSize},
		{"port out of range", with(func(mc *MemgraphCluster) { mc.Spec.Ports.Bolt = 70000 }),
			with(func(mc *MemgraphCluster) { mc.Spec.Ports.Bolt = 65535 }), "ports.bolt must be at most 65535"},
		{"negative probe timing", with(func(mc *MemgraphCluster) { mc.Spec.DataTemplate.Probes.Startup.PeriodSeconds = -5 }),
			with(func(mc *MemgraphCluster) { mc.Spec.DataTemplate.Probes.Startup.PeriodSeconds = 1 }),
			"dataTemplate.probes.startup.periodSeconds must be at least 1"},
		{"eleven coordinators", with(func(mc *MemgraphCluster) { mc.Spec.Coordinators = 11 }),
			with(func(mc *MemgraphCluster) { mc.Spec.Coordinators = MaxCoordinators }), MsgCoordinatorsMax},
		{"data instances beyond the limit", with(func(mc *MemgraphCluster) { mc.Spec.DataInstances = math.MaxInt32 }),
			with(func(mc *MemgraphCluster) { mc.Spec.DataInstances = MaxDataInstances }), MsgDataInstancesMax},
		{"cluster domain too long", with(func(mc *MemgraphCluster) { mc.Spec.ClusterDomain = strings.Repeat("a.", 126) + "ab" }),
			with(func(mc *MemgraphCluster) { mc.Spec.ClusterDomain = strings.Repeat("a.", 126) + "a" }),
			"clusterDomain must be at most 253 characters long, got 254"},
		{"zero coordinator volume", with(func(mc *MemgraphCluster) { mc.Spec.Storage.Coordinators.LibPVCSize = resource.MustParse("-0.5") }),
			with(func(mc *MemgraphCluster) { mc.Spec.Storage.Coordinators.LibPVCSize = resource.MustParse("0.5") }), MsgVolumeSize},
		{"too many labels", with(func(mc *MemgraphCluster) { mc.Spec.CoordinatorTemplate.Labels = labels(65) }),
			with(func(mc *MemgraphCluster) { mc.Spec.CoordinatorTemplate.Labels = labels(64) }),
			"coordinatorTemplate.labels must have at most 64 entries, got 65"},
		{"extra argument too long", with(func(mc *MemgraphCluster) { mc.Spec.DataTemplate.ExtraArgs = []string{strings.Repeat("x", 1025)} }),
			with(func(mc *MemgraphCluster) { mc.Spec.DataTemplate.ExtraArgs = []string{strings.Repeat("x", 1024)} }),
			"dataTemplate.extraArgs[0] must be at most 1024 characters long, got 1025"},
		{"long image tag", with(func(mc *MemgraphCluster) { mc.Spec.Image.Repository = strings.Repeat("r", 256) }),
			with(func(mc *MemgraphCluster) { mc.Spec.Image.Repository = strings.Repeat("r", 255) }),
			"image.repository must be at most 255 characters long, got 256"},
		{"preferred MAIN by pod name", with(func(mc *MemgraphCluster) { mc.Spec.PreferredMain = "data-1" }),
			with(func(mc *MemgraphCluster) { mc.Spec.PreferredMain = "instance_1" }), MsgPreferredMain},
		{"preferred MAIN with a leading zero", with(func(mc *MemgraphCluster) { mc.Spec.PreferredMain = "instance_01" }),
			with(func(mc *MemgraphCluster) { mc.Spec.PreferredMain = "instance_0" }), MsgPreferredMain},
		{"preferred MAIN beyond the declared instances", with(func(mc *MemgraphCluster) { mc.Spec.PreferredMain = "instance_2" }),
			with(func(mc *MemgraphCluster) { mc.Spec.PreferredMain, mc.Spec.DataInstances = "instance_2", 3 }), MsgPreferredDeclared},
		{"preferred MAIN beyond 128", with(func(mc *MemgraphCluster) { mc.Spec.PreferredMain = "instance_999" }),
			with(func(mc *MemgraphCluster) { mc.Spec.PreferredMain, mc.Spec.DataInstances = "instance_127", 128 }), MsgPreferredDeclared},
		{"source ranges on a NodePort", withExternal(func(e *ExternalAccess) { e.Type, e.LoadBalancerSourceRanges = ExternalNodePort, []string{"10.0.0.0/8"} }),
			withExternal(func(e *ExternalAccess) { e.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} }), MsgSourceRangesType},
		{"a source range that is no CIDR", withExternal(func(e *ExternalAccess) { e.LoadBalancerSourceRanges = []string{"10.0.0.300/8"} }),
			withExternal(func(e *ExternalAccess) { e.LoadBalancerSourceRanges = []string{"2001:db8::/32", "10.0.0.1/32"} }), MsgSourceRange},
		{"an IPv4-mapped source range", withExternal(func(e *ExternalAccess) { e.LoadBalancerSourceRanges = []string{"::ffff:10.0.0.0/104"} }),
			withExternal(func(e *ExternalAccess) { e.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} }), MsgSourceRange},
		{"a hostname template without {instance}", withExternal(func(e *ExternalAccess) { e.HostnameTemplate = "graph.example.com" }),
			withExternal(func(e *ExternalAccess) { e.HostnameTemplate = "{instance}.graph.example.com" }), MsgHostnameInstance},
		{"a hostname template that is no DNS name", withExternal(func(e *ExternalAccess) { e.HostnameTemplate = "{instance}.Graph_Example.com." }),
			withExternal(func(e *ExternalAccess) { e.HostnameTemplate = "db-{instance}.graph.example.com" }), MsgHostnameForm},
		{"preferred MAIN with a sign", with(func(mc *MemgraphCluster) { mc.Spec.PreferredMain = "instance_-1" }),
			with(func(mc *MemgraphCluster) { mc.Spec.PreferredMain = "instance_1" }), MsgPreferredMain},
		{"negative coordinator grace period", with(func(mc *MemgraphCluster) { mc.Spec.CoordinatorTemplate.TerminationGracePeriodSeconds = -1 }),
			with(func(mc *MemgraphCluster) { mc.Spec.CoordinatorTemplate.TerminationGracePeriodSeconds = 1 }), MsgGracePeriod},
		{"data grace period beyond a day", with(func(mc *MemgraphCluster) { mc.Spec.DataTemplate.TerminationGracePeriodSeconds = 86401 }),
			with(func(mc *MemgraphCluster) { mc.Spec.DataTemplate.TerminationGracePeriodSeconds = 86400 }), MsgGracePeriod},
		{"sysctl init container without an image", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.SysctlInitContainer = SysctlInitContainer{Enabled: ptr.To(true)}
		}), with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.SysctlInitContainer = SysctlInitContainer{Enabled: ptr.To(true), Image: "busybox:1.37.0"}
		}), MsgSysctlImage},
		{"max map count below the kernel's default", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.SysctlInitContainer.MaxMapCount = 65529
		}), with(func(mc *MemgraphCluster) { mc.Spec.DataTemplate.SysctlInitContainer.MaxMapCount = 65530 }), MsgMaxMapCount},
		{"max map count beyond the kernel's int", with(func(mc *MemgraphCluster) {
			mc.Spec.DataTemplate.SysctlInitContainer.MaxMapCount = math.MaxInt32 + 1
		}), with(func(mc *MemgraphCluster) { mc.Spec.DataTemplate.SysctlInitContainer.MaxMapCount = math.MaxInt32 }), MsgMaxMapCount},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff([]string{tc.want}, messagesOf(t, tc.invalid().Validate())); diff != "" {
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

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestValidateAcceptsFixtures(t *testing.T) {
	for name, mc := range map[string]*MemgraphCluster{"minimal": minimalCluster(), "every knob": everyKnob(), "retain delete": retainDeleted()} {
		if err := mc.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// One error lists every broken rule, in a stable order.
func TestValidateListsEveryViolation(t *testing.T) {
	mc := minimalCluster()
	mc.Spec.Coordinators = 2
	mc.Spec.Image.Repository = "memgraph:latest"
	mc.Spec.Secrets.LicenseKey = DefaultOrganizationKey
	want := []string{MsgCoordinators, MsgImageRepository, MsgSecretKeys}
	if diff := cmp.Diff(want, messagesOf(t, mc.Validate())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestValidateUpdate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(mc *MemgraphCluster)
		want []string
	}{
		{"scaling both roles is allowed", func(mc *MemgraphCluster) { mc.Spec.Coordinators, mc.Spec.DataInstances = 5, 4 }, nil},
		{"retention policy may change", func(mc *MemgraphCluster) { mc.Spec.Storage.RetentionPolicy = RetentionDelete }, nil},
		{"the same size written differently is no change", func(mc *MemgraphCluster) {
			mc.Spec.Storage.Data.LibPVCSize = resource.MustParse("1024Mi")
		}, nil},
		{"coordinator volume size", func(mc *MemgraphCluster) {
			mc.Spec.Storage.Coordinators.LibPVCSize = resource.MustParse("2Gi")
		}, []string{MsgCoordinatorStorage}},
		{"data storage class", func(mc *MemgraphCluster) { mc.Spec.Storage.Data.LogStorageClassName = "fast" }, []string{MsgDataStorage}},
		{"dropping the data log claim", func(mc *MemgraphCluster) {
			mc.Spec.Storage.Data.CreateLogStorageClaim = ptr.To(false)
		}, []string{MsgDataStorage}},
		{"coordinator settings may change", func(mc *MemgraphCluster) {
			mc.Spec.CoordinatorSettings.GlobalReadOnly = ptr.To(true)
		}, nil},
		{"replication mode", func(mc *MemgraphCluster) { mc.Spec.ReplicationMode = ReplicationAsync }, []string{MsgReplicationFixed}},
		{"replication mode override added", func(mc *MemgraphCluster) {
			mc.Spec.ReplicationModeOverrides = []ReplicationModeOverride{{Instance: "instance_1", Mode: ReplicationAsync}}
		}, []string{MsgReplicationFixed}},
		{"fromBackup added to an existing cluster", func(mc *MemgraphCluster) {
			d := destination()
			mc.Spec.Bootstrap, mc.Spec.Backup = &Bootstrap{FromBackup: &FromBackup{Name: "nightly"}}, &ClusterBackup{Destination: &d}
		}, []string{MsgFromBackupCreateOnly}},
		{"creation rules still apply", func(mc *MemgraphCluster) {
			mc.Spec.Coordinators = 4
			mc.Spec.Storage.Coordinators.LibStorageAccessMode = "ReadWriteMany"
		}, []string{MsgCoordinators, MsgCoordinatorStorage}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			updated := minimalCluster()
			tc.edit(updated)
			if diff := cmp.Diff(tc.want, messagesOf(t, ValidateUpdate(minimalCluster(), updated))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if err := ValidateUpdate(nil, minimalCluster()); err != nil {
		t.Errorf("a create (no old object) of a valid cluster: %v", err)
	}
}

func TestValidateReplicationModes(t *testing.T) {
	override := func(instance string, mode ReplicationMode) ReplicationModeOverride {
		return ReplicationModeOverride{Instance: instance, Mode: mode}
	}
	for _, tc := range []struct {
		name      string
		mode      ReplicationMode
		overrides []ReplicationModeOverride
		want      []string
	}{
		{"unset", "", nil, nil},
		{"Async with a Sync override", ReplicationAsync, []ReplicationModeOverride{override("instance_0", ReplicationSync)}, nil},
		{"StrictSync with Async", ReplicationStrictSync, []ReplicationModeOverride{override("instance_1", ReplicationAsync)}, nil},
		{"unset (Sync) with StrictSync", "", []ReplicationModeOverride{override("instance_1", ReplicationStrictSync)}, []string{MsgReplicationMix}},
		{"StrictSync with Sync", ReplicationStrictSync, []ReplicationModeOverride{override("instance_1", ReplicationSync)}, []string{MsgReplicationMix}},
		{"Async with both", ReplicationAsync, []ReplicationModeOverride{override("instance_0", ReplicationSync),
			override("instance_1", ReplicationStrictSync)}, []string{MsgReplicationMix}},
		{"override of no instance", ReplicationSync, []ReplicationModeOverride{override("data-1", ReplicationAsync)}, []string{MsgOverrideInstance}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := minimalCluster()
			mc.Spec.ReplicationMode, mc.Spec.ReplicationModeOverrides = tc.mode, tc.overrides
			if diff := cmp.Diff(tc.want, messagesOf(t, mc.Validate())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A preferred MAIN of more digits than any declared instance can have breaks both its length
// and its rule, as the API server reports it.
func TestPreferredMainTooLong(t *testing.T) {
	mc := minimalCluster()
	mc.Spec.PreferredMain = "instance_1000"
	want := []string{"preferredMain must be at most 12 characters long, got 13", MsgPreferredMain}
	if diff := cmp.Diff(want, messagesOf(t, mc.Validate())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Scaling the coordinators is refused while the cluster hibernates and in the update that sets or
// clears hibernate; everything else about hibernating is allowed.
func TestValidateUpdateHibernation(t *testing.T) {
	hibernating := func(mc *MemgraphCluster) { mc.Spec.Hibernate = ptr.To(true) }
	awake := func(*MemgraphCluster) {}
	for _, tc := range []struct {
		name     string
		old, new func(mc *MemgraphCluster)
		want     []string
	}{
		{"hibernate", awake, hibernating, nil},
		{"wake", hibernating, awake, nil},
		{"hibernate and scale the coordinators", awake, func(mc *MemgraphCluster) {
			hibernating(mc)
			mc.Spec.Coordinators = 5
		}, []string{MsgHibernateScale}},
		{"scale the coordinators while hibernated", func(mc *MemgraphCluster) {
			hibernating(mc)
			mc.Spec.Coordinators = 5
		}, hibernating, []string{MsgHibernateScale}},
		{"wake and scale the coordinators", hibernating, func(mc *MemgraphCluster) { mc.Spec.Coordinators = 5 }, []string{MsgHibernateScale}},
		{"scale the data instances while hibernated", hibernating, func(mc *MemgraphCluster) {
			hibernating(mc)
			mc.Spec.DataInstances = 4
		}, nil},
		{"scale the coordinators awake", awake, func(mc *MemgraphCluster) { mc.Spec.Coordinators = 7 }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, updated := minimalCluster(), minimalCluster()
			tc.old(old)
			tc.new(updated)
			if diff := cmp.Diff(tc.want, messagesOf(t, ValidateUpdate(old, updated))); diff != "" {
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
		if got := (Rollout{StepTimeout: tc.in}).StepTimeoutSeconds(); got != tc.want {
			t.Errorf("StepTimeoutSeconds(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Defaults. Each mirrors a +kubebuilder:default marker in types.go; crd_test.go proves the
// generated CRD and these constants agree, so a typed spec defaulted here (NewCluster) renders
// exactly like one the API server defaulted.
const (
	DefaultCoordinators          int32 = 3
	DefaultDataInstances         int32 = 2
	DefaultImageRepository             = "docker.io/memgraph/memgraph"
	DefaultImageTag                    = "3.12.0"
	DefaultImagePullPolicy             = corev1.PullIfNotPresent
	DefaultSecretName                  = "memgraph-secrets"
	DefaultLicenseKey                  = "MEMGRAPH_ENTERPRISE_LICENSE"
	DefaultOrganizationKey             = "MEMGRAPH_ORGANIZATION_NAME"
	DefaultRetentionPolicy             = RetentionRetain
	DefaultPVCSize                     = "1Gi"
	DefaultAccessMode                  = AccessMode(corev1.ReadWriteOnce)
	DefaultCreateLogStorageClaim       = true
	DefaultClusterDomain               = "cluster.local"
	DefaultHibernate                   = false
	DefaultIntraClusterTLS             = true
	DefaultStepTimeout                 = "10m"
	DefaultReplicationMode             = ReplicationSync
	DefaultStuckAfter                  = "10m"
	DefaultAntiAffinity                = AntiAffinityPreferred

	DefaultBoltPort        int32 = 7687
	DefaultManagementPort  int32 = 10000
	DefaultReplicationPort int32 = 20000
	DefaultCoordinatorPort int32 = 12000

	// Probe timings, as the HA chart's container.{data,coordinators} values.
	DefaultProbeFailureThreshold            int32 = 20
	DefaultProbeTimeoutSeconds              int32 = 10
	DefaultProbePeriodSeconds               int32 = 5
	DefaultDataStartupProbeFailureThreshold int32 = 1440

	// Termination grace periods (types.go says why each).
	DefaultCoordinatorTerminationGracePeriodSeconds int64 = 30
	DefaultDataTerminationGracePeriodSeconds        int64 = 300

	// The vm.max_map_count init container: off, and Memgraph's own threshold when enabled.
	DefaultSysctlInitContainerEnabled       = false
	DefaultMaxMapCount                int64 = 524288
)

// Defaulted returns a deep copy of mc with every default applied, as the API server would have
// applied the CRD schema defaults. NewCluster uses it once; a Cluster never needs it again. Zero values count as unset: admission never lets a zero count,
// port or probe timing through, so a zero can only mean the field was never defaulted.
func (mc *MemgraphCluster) Defaulted() *MemgraphCluster {
	out := mc.DeepCopy()
	s := &out.Spec
	setInt32(&s.Coordinators, DefaultCoordinators)
	setInt32(&s.DataInstances, DefaultDataInstances)
	setString(&s.Image.Repository, DefaultImageRepository)
	setString(&s.Image.Tag, DefaultImageTag)
	setString((*string)(&s.Image.PullPolicy), string(DefaultImagePullPolicy))
	setString(&s.Secrets.Name, DefaultSecretName)
	setString(&s.Secrets.LicenseKey, DefaultLicenseKey)
	setString(&s.Secrets.OrganizationKey, DefaultOrganizationKey)
	setString((*string)(&s.Storage.RetentionPolicy), string(DefaultRetentionPolicy))
	defaultRoleStorage(&s.Storage.Coordinators)
	defaultRoleStorage(&s.Storage.Data)
	setString(&s.ClusterDomain, DefaultClusterDomain)
	if s.TLS != nil && s.TLS.IntraCluster == nil {
		v := DefaultIntraClusterTLS
		s.TLS.IntraCluster = &v
	}
	if s.Hibernate == nil {
		v := DefaultHibernate
		s.Hibernate = &v
	}
	setString(&s.Rollout.StepTimeout, DefaultStepTimeout)
	setString(&s.ReplicaHealth.StuckAfter, DefaultStuckAfter)
	if s.Backup == nil {
		s.Backup = &ClusterBackup{}
	}
	setString((*string)(&s.Backup.Target), string(BackupPreferReplica))
	if s.ReplicationMode == "" {
		s.ReplicationMode = DefaultReplicationMode
	}
	if s.Placement.AntiAffinity == "" {
		s.Placement.AntiAffinity = DefaultAntiAffinity
	}
	setInt32(&s.Ports.Bolt, DefaultBoltPort)
	setInt32(&s.Ports.Management, DefaultManagementPort)
	setInt32(&s.Ports.Replication, DefaultReplicationPort)
	setInt32(&s.Ports.Coordinator, DefaultCoordinatorPort)
	cp := &s.CoordinatorTemplate.Probes
	defaultProbe(&cp.Readiness)
	defaultProbe(&cp.Liveness)
	defaultProbe(&cp.Startup)
	dp := &s.DataTemplate.Probes
	defaultProbe(&dp.Readiness)
	defaultProbe(&dp.Liveness)
	setInt32(&dp.Startup.FailureThreshold, DefaultDataStartupProbeFailureThreshold)
	setInt32(&dp.Startup.TimeoutSeconds, DefaultProbeTimeoutSeconds)
	setInt32(&dp.Startup.PeriodSeconds, DefaultProbePeriodSeconds)
	setInt64(&s.CoordinatorTemplate.TerminationGracePeriodSeconds, DefaultCoordinatorTerminationGracePeriodSeconds)
	setInt64(&s.DataTemplate.TerminationGracePeriodSeconds, DefaultDataTerminationGracePeriodSeconds)
	sysctl := &s.DataTemplate.SysctlInitContainer
	if sysctl.Enabled == nil {
		v := DefaultSysctlInitContainerEnabled
		sysctl.Enabled = &v
	}
	setInt64(&sysctl.MaxMapCount, DefaultMaxMapCount)
	return out
}

func defaultRoleStorage(rs *RoleStorage) {
	setQuantity(&rs.LibPVCSize, DefaultPVCSize)
	setString((*string)(&rs.LibStorageAccessMode), string(DefaultAccessMode))
	if rs.CreateLogStorageClaim == nil {
		v := DefaultCreateLogStorageClaim
		rs.CreateLogStorageClaim = &v
	}
	setQuantity(&rs.LogPVCSize, DefaultPVCSize)
	setString((*string)(&rs.LogStorageAccessMode), string(DefaultAccessMode))
}

func defaultProbe(p *ProbeTimings) {
	setInt32(&p.FailureThreshold, DefaultProbeFailureThreshold)
	setInt32(&p.TimeoutSeconds, DefaultProbeTimeoutSeconds)
	setInt32(&p.PeriodSeconds, DefaultProbePeriodSeconds)
}

func setInt32(p *int32, def int32) {
	if *p == 0 {
		*p = def
	}
}

func setInt64(p *int64, def int64) {
	if *p == 0 {
		*p = def
	}
}

func setString(p *string, def string) {
	if *p == "" {
		*p = def
	}
}

func setQuantity(p *resource.Quantity, def string) {
	if p.IsZero() {
		*p = resource.MustParse(def)
	}
}

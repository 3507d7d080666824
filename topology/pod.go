package topology

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Paths and names inside the pod, as the HA chart uses them.
const (
	ContainerName = "memgraph"
	LibVolume     = "lib-storage"
	LogVolume     = "log-storage"
	TmpVolume     = "tmp"
	LibMountPath  = "/var/lib/memgraph"
	LogMountPath  = "/var/log/memgraph"
	TmpMountPath  = "/tmp"
	DataDirectory = LibMountPath + "/mg_data"
	// SnapshotDirectory is where Memgraph writes the snapshots of --data-directory
	// (src/storage/v2/durability/paths.hpp 22).
	SnapshotDirectory = DataDirectory + "/snapshots"
	LogFile           = LogMountPath + "/memgraph.log"

	PortNameBolt        = "bolt"
	PortNameManagement  = "management"
	PortNameReplication = "replication"
	PortNameCoordinator = "coordinator"
	PortNameMetrics     = "metrics"
	PortNameBackupAgent = "backup-agent"

	// BackupAgentPort is where the backup-agent sidecar of every data pod serves HTTPS.
	BackupAgentPort int32 = 8443

	// MetricsPort is where every Memgraph pod, coordinator or data instance, serves its metrics
	// (GET /metrics). Memgraph 3.12 defines --metrics-port (default 9091), --metrics-address
	// (default 0.0.0.0) and --metrics-format (default JSON, deprecated; OpenMetrics is the
	// Prometheus text format) in src/flags/general.cpp:41-52, and starts the metrics server
	// for every instance role in src/memgraph.cpp:1046-1059 and 1151-1162 (enterprise build, as
	// the official image is). A coordinator's endpoint carries the cluster view
	// (memgraph_instance_up, memgraph_instance_is_main, memgraph_instance_is_leader per
	// mg_instance) and no per-database series (src/dbms/database.cpp:104-105).
	MetricsPort int32 = 9091

	memgraphUID int64 = 101
	memgraphGID int64 = 103
)

// CoordinatorHostnameEnv is the value of MEMGRAPH_COORDINATOR_HOSTNAME in the coordinator
// template: the kubelet expands $(POD_NAME), giving Network.Coordinator(id).Host for the pod whose
// pod-index label is id.
func CoordinatorHostnameEnv(n Network) string {
	return n.fqdn(CoordinatorSetName(n.Cluster), "$("+v1alpha1.EnvPodName+")")
}

// commonArgs are the flags both roles run with, before the user's extraArgs (which therefore
// override the logging and metrics flags). The HA flags travel as environment, never as flags.
func commonArgs(s *v1alpha1.MemgraphClusterSpec) []string {
	return append([]string{
		fmt.Sprintf("--bolt-port=%d", s.Ports.Bolt),
		"--data-directory=" + DataDirectory,
		"--log-level=INFO",
		"--also-log-to-stderr",
		"--log-file=" + LogFile,
		"--log-retention-days=35",
		"--metrics-format=OpenMetrics",
		fmt.Sprintf("--metrics-port=%d", MetricsPort),
	}, slices.Concat(boltTLSArgs(s.TLS), clusterTLSArgs(s.TLS))...)
}

// coordinatorArgs and dataArgs end with the role's --memory-limit (memory.go), then the user's
// extraArgs.
func coordinatorArgs(s *v1alpha1.MemgraphClusterSpec) []string {
	o := s.CoordinatorTemplate.PodOptions
	return slices.Concat(commonArgs(s), memoryLimitArgs(o), o.ExtraArgs)
}

// dataArgs enable the WAL, without which an HA data instance refuses to start, and turn off the
// snapshot on exit as the chart does (a replica's snapshot on every restart only costs time).
func dataArgs(s *v1alpha1.MemgraphClusterSpec) []string {
	o := s.DataTemplate.PodOptions
	return slices.Concat(commonArgs(s), []string{"--storage-wal-enabled=true", "--storage-snapshot-on-exit=false"},
		memoryLimitArgs(o), o.ExtraArgs)
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path},
	}}
}

func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key},
	}}
}

func portEnv(name string, port int32) corev1.EnvVar {
	return corev1.EnvVar{Name: name, Value: strconv.Itoa(int(port))}
}

// commonEnv is the license and the chart's scratch paths (the root filesystem is read-only).
func commonEnv(s *v1alpha1.MemgraphClusterSpec) []corev1.EnvVar {
	return []corev1.EnvVar{
		secretEnv(v1alpha1.EnvLicense, s.Secrets.Name, s.Secrets.LicenseKey),
		secretEnv(v1alpha1.EnvOrganization, s.Secrets.Name, s.Secrets.OrganizationKey),
		{Name: "DGL_DOWNLOAD_DIR", Value: TmpMountPath + "/.dgl"},
		{Name: "DGLDEFAULTDIR", Value: TmpMountPath + "/.dgl"},
		{Name: "MGCONSOLE_HISTORY_PATH", Value: TmpMountPath + "/.memgraph"},
	}
}

// coordinatorEnv sets all five HA variables. POD_NAME comes first so that $(POD_NAME) expands.
// MEMGRAPH_NURAFT_LOG_FILE is empty, as the chart leaves --nuraft-log-file: NuRaft then logs
// nowhere, instead of into an unrotated file on the log volume.
func coordinatorEnv(mc *v1alpha1.MemgraphCluster, n Network) []corev1.EnvVar {
	s := &mc.Spec
	env := []corev1.EnvVar{
		fieldEnv(v1alpha1.EnvPodName, "metadata.name"),
		fieldEnv(v1alpha1.EnvCoordinatorID, "metadata.labels['"+LabelPodIndex+"']"),
		{Name: v1alpha1.EnvCoordinatorHostname, Value: CoordinatorHostnameEnv(n)},
		portEnv(v1alpha1.EnvCoordinatorPort, s.Ports.Coordinator),
		portEnv(v1alpha1.EnvManagementPort, s.Ports.Management),
		{Name: v1alpha1.EnvNuRaftLogFile},
	}
	env = append(env, commonEnv(s)...)
	return append(env, s.CoordinatorTemplate.ExtraEnv...)
}

func dataEnv(mc *v1alpha1.MemgraphCluster) []corev1.EnvVar {
	s := &mc.Spec
	env := []corev1.EnvVar{portEnv(v1alpha1.EnvManagementPort, s.Ports.Management)}
	env = append(env, commonEnv(s)...)
	return append(env, s.DataTemplate.ExtraEnv...)
}

func containerPort(name string, port int32) corev1.ContainerPort {
	return corev1.ContainerPort{Name: name, ContainerPort: port, Protocol: corev1.ProtocolTCP}
}

// tcpProbe spells out every field the API server would default, so the stored probe equals ours.
func tcpProbe(port int32, failure, timeout, period int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}},
		FailureThreshold: failure,
		TimeoutSeconds:   timeout,
		PeriodSeconds:    period,
		SuccessThreshold: 1,
	}
}

func fromTimings(port int32, t v1alpha1.ProbeTimings) *corev1.Probe {
	return tcpProbe(port, t.FailureThreshold, t.TimeoutSeconds, t.PeriodSeconds)
}

func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func podSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsUser:      ptr.To(memgraphUID),
		RunAsGroup:     ptr.To(memgraphGID),
		FSGroup:        ptr.To(memgraphGID),
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func volumeMounts() []corev1.VolumeMount {
	return []corev1.VolumeMount{
		{Name: LibVolume, MountPath: LibMountPath},
		{Name: LogVolume, MountPath: LogMountPath},
		{Name: TmpVolume, MountPath: TmpMountPath},
	}
}

// podVolumes are the pod's own volumes; lib (and log, when claimed) come from the
// volumeClaimTemplates. Without a log claim the logs go to an emptyDir, because the root
// filesystem is read-only and Memgraph must be able to write its log file.
func podVolumes(rs v1alpha1.RoleStorage) []corev1.Volume {
	vols := []corev1.Volume{{Name: TmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	if !*rs.CreateLogStorageClaim {
		vols = append(vols, corev1.Volume{Name: LogVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	return vols
}

// podSpec assembles a role's pod. enableServiceLinks is off because the kubelet's service-link
// variables are named after Services (<NAME>_PORT=tcp://...), and a Service called, say,
// memgraph-coordinator would inject MEMGRAPH_COORDINATOR_PORT and break Memgraph's HA setup.
// Memgraph never talks to the Kubernetes API, so no service-account token is mounted.
func podSpec(c corev1.Container, o v1alpha1.PodOptions, rs v1alpha1.RoleStorage, gracePeriod int64) corev1.PodSpec {
	c.Name = ContainerName
	c.VolumeMounts = volumeMounts()
	c.SecurityContext = containerSecurityContext()
	c.Resources = o.Resources
	c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	return corev1.PodSpec{
		Containers:                    []corev1.Container{c},
		Volumes:                       podVolumes(rs),
		SecurityContext:               podSecurityContext(),
		TerminationGracePeriodSeconds: ptr.To(gracePeriod),
		EnableServiceLinks:            ptr.To(false),
		AutomountServiceAccountToken:  ptr.To(false),
		NodeSelector:                  o.NodeSelector,
		Tolerations:                   o.Tolerations,
		PriorityClassName:             o.PriorityClassName,
	}
}

// placePod gives a role's pod its affinity and topology spread: the template's own when it sets
// them, the placement's defaults otherwise (placement.go).
func placePod(pod *corev1.PodSpec, o v1alpha1.PodOptions, p v1alpha1.Placement, cluster, role string) {
	pod.Affinity = roleAffinity(o.Affinity, p, cluster, role)
	pod.TopologySpreadConstraints = roleSpread(o.TopologySpreadConstraints, cluster, role)
}

func image(s *v1alpha1.MemgraphClusterSpec) string { return s.Image.Reference() }

func coordinatorPodSpec(mc *v1alpha1.MemgraphCluster, n Network) corev1.PodSpec {
	s := &mc.Spec
	p := s.CoordinatorTemplate.Probes
	c := corev1.Container{
		Image:           image(s),
		ImagePullPolicy: s.Image.PullPolicy,
		Args:            coordinatorArgs(s),
		Env:             coordinatorEnv(mc, n),
		Ports: []corev1.ContainerPort{
			containerPort(PortNameBolt, s.Ports.Bolt),
			containerPort(PortNameManagement, s.Ports.Management),
			containerPort(PortNameCoordinator, s.Ports.Coordinator),
			containerPort(PortNameMetrics, MetricsPort),
		},
		ReadinessProbe: fromTimings(s.Ports.Coordinator, p.Readiness),
		LivenessProbe:  fromTimings(s.Ports.Coordinator, p.Liveness),
		StartupProbe:   fromTimings(s.Ports.Coordinator, p.Startup),
	}
	t := s.CoordinatorTemplate
	pod := podSpec(c, t.PodOptions, s.Storage.Coordinators, t.TerminationGracePeriodSeconds)
	placePod(&pod, t.PodOptions, s.Placement, mc.Name, RoleCoordinator)
	return withClusterTLS(withBoltTLS(pod, s.TLS), s.TLS)
}

func dataPodSpec(mc *v1alpha1.MemgraphCluster) corev1.PodSpec {
	s := &mc.Spec
	p := s.DataTemplate.Probes
	c := corev1.Container{
		Image:           image(s),
		ImagePullPolicy: s.Image.PullPolicy,
		Args:            dataArgs(s),
		Env:             dataEnv(mc),
		Ports: []corev1.ContainerPort{
			containerPort(PortNameBolt, s.Ports.Bolt),
			containerPort(PortNameManagement, s.Ports.Management),
			containerPort(PortNameReplication, s.Ports.Replication),
			containerPort(PortNameMetrics, MetricsPort),
		},
		ReadinessProbe: fromTimings(s.Ports.Bolt, p.Readiness),
		LivenessProbe:  fromTimings(s.Ports.Bolt, p.Liveness),
		StartupProbe:   tcpProbe(s.Ports.Bolt, p.Startup.FailureThreshold, p.Startup.TimeoutSeconds, p.Startup.PeriodSeconds),
	}
	t := s.DataTemplate
	pod := podSpec(c, t.PodOptions, s.Storage.Data, t.TerminationGracePeriodSeconds)
	placePod(&pod, t.PodOptions, s.Placement, mc.Name, RoleData)
	pod = withClusterTLS(withBoltTLS(pod, s.TLS), s.TLS)
	if init, ok := sysctlInitContainer(t.SysctlInitContainer); ok {
		pod.InitContainers = []corev1.Container{init}
	}
	return pod
}

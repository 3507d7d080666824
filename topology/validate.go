package topology

import (
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// The Go side of the CRD's x-kubernetes-validations rules. Each message is, word for word, the
// message of the CEL rule in types.go (validate_test.go checks the generated CRD against this
// list), so the hook reports a spec that skipped admission exactly as admission would have.
const (
	MsgClusterName        = "metadata.name must be at most 40 characters of lower-case letters, digits and '-', starting with a letter and ending with a letter or digit: it prefixes the StatefulSets <name>-coordinator and <name>-data and names the client Service; pick a shorter name"
	MsgCoordinators       = "coordinators must be odd and at least 3 (3, 5, 7, ...): Raft needs a majority, and an even count survives no more failures than the odd count below it"
	MsgDataInstances      = "dataInstances must be at least 1: a cluster without a data instance has nothing to serve"
	MsgImageRepository    = "image.repository must not carry a tag or digest: put the tag in image.tag (e.g. repository docker.io/memgraph/memgraph, tag 3.12.0)"
	MsgImageTag           = "image.tag must be a tag such as 3.12.0 or a digest such as sha256:<64 lower-case hex digits>"
	MsgSecretKeys         = "secrets.licenseKey and secrets.organizationKey must name different keys of the Secret: the license and the organization name are separate values"
	MsgClusterDomain      = "clusterDomain must be a DNS domain such as cluster.local, lower case, without a leading or trailing dot"
	MsgPortsDistinct      = "ports.bolt, ports.management, ports.replication and ports.coordinator must all differ: each is a separate listener"
	MsgReservedLabels     = "labels must not set app.kubernetes.io/name, app.kubernetes.io/instance, app.kubernetes.io/component or app.kubernetes.io/managed-by: the hook sets them to select the pods; use another key"
	MsgReservedEnv        = "extraEnv must not set POD_NAME, MEMGRAPH_ENTERPRISE_LICENSE, MEMGRAPH_ORGANIZATION_NAME, MEMGRAPH_MANAGEMENT_PORT, MEMGRAPH_COORDINATOR_PORT, MEMGRAPH_COORDINATOR_ID, MEMGRAPH_NURAFT_LOG_FILE, MEMGRAPH_COORDINATOR_HOSTNAME, MEMGRAPH_BOLT_PORT, DGL_DOWNLOAD_DIR, DGLDEFAULTDIR or MGCONSOLE_HISTORY_PATH: the hook sets them (the license from spec.secrets, identity from the pod, ports from spec.ports); remove the variable"
	MsgReservedArgs       = "extraArgs must not set --bolt-port, --bolt-address, --management-port, --coordinator-port, --coordinator-id, --coordinator-hostname, --nuraft-log-file, --data-directory, --init-file, --init-data-file, --bolt-cert-file or --bolt-key-file: ports come from spec.ports, identity and paths are derived by the hook, Bolt TLS comes from spec.tls (so that the hook dials it too), and Memgraph rejects init files in a high-availability cluster; remove the flag"
	MsgTLSSecretName      = "tls.secretName must name a Secret in the cluster's namespace: lower-case letters, digits, '-' and '.', such as memgraph-bolt-tls"
	MsgDataWAL            = "dataTemplate.extraArgs must not set --storage-wal-enabled: a data instance in a high-availability cluster must run with the WAL enabled, and the hook enables it; remove the flag"
	MsgCoordinatorStorage = "storage.coordinators is immutable: it shapes the StatefulSet's volumeClaimTemplates, which Kubernetes cannot change in place. Delete the MemgraphCluster (and its retained PersistentVolumeClaims, if the volumes must change too) and create it again with the new storage"
	MsgDataStorage        = "storage.data is immutable: it shapes the StatefulSet's volumeClaimTemplates, which Kubernetes cannot change in place. Delete the MemgraphCluster (and its retained PersistentVolumeClaims, if the volumes must change too) and create it again with the new storage"
)

// Regular expressions shared, character for character, with the CEL rules (both are RE2 and
// unanchored unless the pattern anchors itself).
const (
	clusterNamePattern    = `^[a-z]([-a-z0-9]*[a-z0-9])?$`
	clusterDomainPattern  = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	repositoryTagPattern  = `:[^/]*$`
	imageTagPattern       = `^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`
	imageDigestPattern    = `^sha256:[a-f0-9]{64}$`
	reservedArgsPattern   = `^--?(bolt[-_]port|bolt[-_]address|management[-_]port|coordinator[-_]port|coordinator[-_]id|coordinator[-_]hostname|nuraft[-_]log[-_]file|data[-_]directory|init[-_]file|init[-_]data[-_]file|bolt[-_]cert[-_]file|bolt[-_]key[-_]file)(=|$)`
	walArgPattern         = `^--?(no)?storage[-_]wal[-_]enabled(=|$)`
	maxClusterNameLength  = 40
	maxPort               = 65535
	maxSecretNameLength   = 253
	reservedEnvNamesInCEL = `'POD_NAME', 'MEMGRAPH_ENTERPRISE_LICENSE', 'MEMGRAPH_ORGANIZATION_NAME', 'MEMGRAPH_MANAGEMENT_PORT', 'MEMGRAPH_COORDINATOR_PORT', 'MEMGRAPH_COORDINATOR_ID', 'MEMGRAPH_NURAFT_LOG_FILE', 'MEMGRAPH_COORDINATOR_HOSTNAME', 'MEMGRAPH_BOLT_PORT', 'DGL_DOWNLOAD_DIR', 'DGLDEFAULTDIR', 'MGCONSOLE_HISTORY_PATH'`
)

var (
	clusterNameRE   = regexp.MustCompile(clusterNamePattern)
	clusterDomainRE = regexp.MustCompile(clusterDomainPattern)
	repositoryTagRE = regexp.MustCompile(repositoryTagPattern)
	imageTagRE      = regexp.MustCompile(imageTagPattern)
	imageDigestRE   = regexp.MustCompile(imageDigestPattern)
	reservedArgsRE  = regexp.MustCompile(reservedArgsPattern)
	walArgRE        = regexp.MustCompile(walArgPattern)
)

// reservedLabelKeys and reservedEnvNames are what the hook sets itself.
var (
	reservedLabelKeys = []string{LabelName, LabelInstance, LabelComponent, LabelManagedBy}
	reservedEnvNames  = []string{
		EnvPodName, EnvLicense, EnvOrganization,
		EnvManagementPort, EnvCoordinatorPort, EnvCoordinatorID, EnvNuRaftLogFile, EnvCoordinatorHostname,
		EnvBoltPort, "DGL_DOWNLOAD_DIR", "DGLDEFAULTDIR", "MGCONSOLE_HISTORY_PATH",
	}
)

// Violation is one broken rule: the field it is about and the message that says how to fix it.
// +kubebuilder:object:generate=false
type Violation struct {
	Field   string
	Message string
}

// ValidationError lists every rule a MemgraphCluster breaks.
// +kubebuilder:object:generate=false
type ValidationError struct {
	Violations []Violation
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.Field + ": " + v.Message
	}
	return "invalid MemgraphCluster: " + strings.Join(parts, "; ")
}

type violations []Violation

func (vs *violations) add(broken bool, field, msg string) {
	if broken {
		*vs = append(*vs, Violation{Field: field, Message: msg})
	}
}

func (vs violations) err() error {
	if len(vs) == 0 {
		return nil
	}
	return &ValidationError{Violations: vs}
}

// Validate checks mc, with defaults applied, against every creation-time rule of the CRD — the
// CEL rules with their exact messages, and the schema's enums and ranges in the same spirit — and
// returns a *ValidationError naming every violated rule, or nil.
func (mc *MemgraphCluster) Validate() error {
	var vs violations
	d := mc.Defaulted()
	s := &d.Spec
	vs.add(len(d.Name) > maxClusterNameLength || !clusterNameRE.MatchString(d.Name), "metadata.name", MsgClusterName)
	vs.add(s.Coordinators < 3 || s.Coordinators%2 != 1, "spec.coordinators", MsgCoordinators)
	vs.add(s.DataInstances < 1, "spec.dataInstances", MsgDataInstances)
	vs.add(strings.Contains(s.Image.Repository, "@") || repositoryTagRE.MatchString(s.Image.Repository), "spec.image.repository", MsgImageRepository)
	vs.add(!imageTagRE.MatchString(s.Image.Tag) && !imageDigestRE.MatchString(s.Image.Tag), "spec.image.tag", MsgImageTag)
	vs.add(s.Secrets.LicenseKey == s.Secrets.OrganizationKey, "spec.secrets", MsgSecretKeys)
	vs.add(!clusterDomainRE.MatchString(s.ClusterDomain), "spec.clusterDomain", MsgClusterDomain)
	p := s.Ports
	vs.add(hasDuplicate([]int32{p.Bolt, p.Management, p.Replication, p.Coordinator}), "spec.ports", MsgPortsDistinct)
	validatePodOptions(&vs, "spec.coordinatorTemplate", &s.CoordinatorTemplate.PodOptions)
	validatePodOptions(&vs, "spec.dataTemplate", &s.DataTemplate.PodOptions)
	vs.add(slices.ContainsFunc(s.DataTemplate.ExtraArgs, walArgRE.MatchString), "spec.dataTemplate", MsgDataWAL)
	// A Secret name is a DNS subdomain, the very shape of clusterDomainPattern.
	vs.add(s.TLS != nil && (len(s.TLS.SecretName) > maxSecretNameLength || !clusterDomainRE.MatchString(s.TLS.SecretName)),
		"spec.tls.secretName", MsgTLSSecretName)
	validateSchema(&vs, s)
	return vs.err()
}

func validatePodOptions(vs *violations, path string, o *PodOptions) {
	vs.add(slices.ContainsFunc(reservedLabelKeys, func(k string) bool { _, ok := o.Labels[k]; return ok }),
		path+".labels", MsgReservedLabels)
	vs.add(slices.ContainsFunc(o.ExtraEnv, func(e corev1.EnvVar) bool { return slices.Contains(reservedEnvNames, e.Name) }),
		path+".extraEnv", MsgReservedEnv)
	vs.add(slices.ContainsFunc(o.ExtraArgs, reservedArgsRE.MatchString), path+".extraArgs", MsgReservedArgs)
	names := make([]string, len(o.ExtraEnv))
	for i, e := range o.ExtraEnv {
		names[i] = e.Name
	}
	vs.add(hasDuplicate(names), path+".extraEnv", "extraEnv must not list a variable twice: keep one entry per name")
}

// validateSchema covers the schema-level constraints (enums, ranges) a spec that skipped
// admission could break in ways that would produce objects the API server rejects.
func validateSchema(vs *violations, s *MemgraphClusterSpec) {
	vs.add(!slices.Contains([]string{"Always", "IfNotPresent", "Never"}, string(s.Image.PullPolicy)),
		"spec.image.pullPolicy", "image.pullPolicy must be Always, IfNotPresent or Never")
	vs.add(s.Storage.RetentionPolicy != RetentionRetain && s.Storage.RetentionPolicy != RetentionDelete,
		"spec.storage.retentionPolicy", "storage.retentionPolicy must be Retain or Delete")
	for _, r := range []struct {
		path string
		rs   RoleStorage
	}{{"spec.storage.coordinators", s.Storage.Coordinators}, {"spec.storage.data", s.Storage.Data}} {
		vs.add(!validAccessMode(r.rs.LibStorageAccessMode), r.path+".libStorageAccessMode", msgAccessMode)
		vs.add(!validAccessMode(r.rs.LogStorageAccessMode), r.path+".logStorageAccessMode", msgAccessMode)
		vs.add(r.rs.LibPVCSize.Sign() <= 0 || r.rs.LogPVCSize.Sign() <= 0, r.path, "volume sizes must be positive quantities such as 1Gi")
	}
	p := s.Ports
	vs.add(slices.ContainsFunc([]int32{p.Bolt, p.Management, p.Replication, p.Coordinator}, func(port int32) bool { return port < 1 || port > maxPort }),
		"spec.ports", "ports must be between 1 and 65535")
	cp, dp := s.CoordinatorTemplate.Probes, s.DataTemplate.Probes
	timings := []int32{
		cp.Readiness.FailureThreshold, cp.Readiness.TimeoutSeconds, cp.Readiness.PeriodSeconds,
		cp.Liveness.FailureThreshold, cp.Liveness.TimeoutSeconds, cp.Liveness.PeriodSeconds,
		cp.Startup.FailureThreshold, cp.Startup.TimeoutSeconds, cp.Startup.PeriodSeconds,
		dp.Readiness.FailureThreshold, dp.Readiness.TimeoutSeconds, dp.Readiness.PeriodSeconds,
		dp.Liveness.FailureThreshold, dp.Liveness.TimeoutSeconds, dp.Liveness.PeriodSeconds,
		dp.Startup.FailureThreshold, dp.Startup.TimeoutSeconds, dp.Startup.PeriodSeconds,
	}
	vs.add(slices.ContainsFunc(timings, func(t int32) bool { return t < 1 }), "spec", "probe timings must be at least 1")
}

const msgAccessMode = "access mode must be ReadWriteOnce, ReadWriteOncePod or ReadWriteMany"

func validAccessMode(m AccessMode) bool {
	return slices.Contains([]AccessMode{"ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"}, m)
}

// ValidateUpdate checks an update from old to new: every creation-time rule on new (the API
// server evaluates those on every write) plus the transition rules. Storage is compared by value
// after defaulting, so 1Gi and 1024Mi are the same size here (CEL compares them as written).
func ValidateUpdate(old, new *MemgraphCluster) error {
	var vs violations
	if err := new.Validate(); err != nil {
		vs = append(vs, err.(*ValidationError).Violations...)
	}
	if old != nil {
		o, n := old.Defaulted().Spec.Storage, new.Defaulted().Spec.Storage
		vs.add(!equality.Semantic.DeepEqual(o.Coordinators, n.Coordinators), "spec.storage.coordinators", MsgCoordinatorStorage)
		vs.add(!equality.Semantic.DeepEqual(o.Data, n.Data), "spec.storage.data", MsgDataStorage)
	}
	return vs.err()
}

func hasDuplicate[T comparable](xs []T) bool {
	seen := make(map[T]bool, len(xs))
	for _, x := range xs {
		if seen[x] {
			return true
		}
		seen[x] = true
	}
	return false
}

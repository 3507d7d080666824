package v1alpha1

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kjson "sigs.k8s.io/json"
)

// The Go side of the CRD's x-kubernetes-validations rules. Each message is, word for word, the
// message of the CEL rule in types.go (crd_test.go checks the generated CRD against this
// list), so the hook reports a spec that skipped admission exactly as admission would have.
const (
	MsgClusterName        = "metadata.name must be at most 40 characters of lower-case letters, digits and '-', starting with a letter and ending with a letter or digit: it prefixes the StatefulSets <name>-coordinator and <name>-data and names the client Service; pick a shorter name"
	MsgCoordinators       = "coordinators must be odd and at least 3 (3, 5, 7, ...): Raft needs a majority, and an even count survives no more failures than the odd count below it"
	MsgCoordinatorsMax    = "coordinators must be at most 9: every coordinator takes part in each Raft commit of the cluster state, so more coordinators only slow down failover and registration; 9 already survive 4 coordinator failures (Memgraph's HA chart runs 3)"
	MsgDataInstances      = "dataInstances must be at least 1: a cluster without a data instance has nothing to serve"
	MsgDataInstancesMax   = "dataInstances must be at most 128: the MAIN replicates every write to each data instance and the leader coordinator health-checks every instance each second, so more replicas slow down writes and failover instead of adding capacity; split the data over several clusters instead"
	MsgImageRepository    = "image.repository must not carry a tag or digest: put the tag in image.tag (e.g. repository docker.io/memgraph/memgraph, tag 3.12.0)"
	MsgImageTag           = "image.tag must be a tag such as 3.12.0 or a digest such as sha256:<64 lower-case hex digits>"
	MsgSecretKeys         = "secrets.licenseKey and secrets.organizationKey must name different keys of the Secret: the license and the organization name are separate values"
	MsgClusterDomain      = "clusterDomain must be a DNS domain such as cluster.local, lower case, without a leading or trailing dot"
	MsgPortsDistinct      = "ports.bolt, ports.management, ports.replication and ports.coordinator must all differ: each is a separate listener"
	MsgReservedLabels     = "labels must not set app.kubernetes.io/name, app.kubernetes.io/instance, app.kubernetes.io/component or app.kubernetes.io/managed-by: the hook sets them to select the pods; use another key"
	MsgReservedEnv        = "extraEnv must not set POD_NAME, MEMGRAPH_ENTERPRISE_LICENSE, MEMGRAPH_ORGANIZATION_NAME, MEMGRAPH_MANAGEMENT_PORT, MEMGRAPH_COORDINATOR_PORT, MEMGRAPH_COORDINATOR_ID, MEMGRAPH_NURAFT_LOG_FILE, MEMGRAPH_COORDINATOR_HOSTNAME, MEMGRAPH_BOLT_PORT, DGL_DOWNLOAD_DIR, DGLDEFAULTDIR or MGCONSOLE_HISTORY_PATH: the hook sets them (the license from spec.secrets, identity from the pod, ports from spec.ports); remove the variable"
	MsgReservedArgs       = "extraArgs must not set --bolt-port, --bolt-address, --management-port, --coordinator-port, --coordinator-id, --coordinator-hostname, --nuraft-log-file, --data-directory, --init-file, --init-data-file, --bolt-cert-file, --bolt-key-file, --cluster-cert-file, --cluster-key-file or --cluster-ca-file: ports come from spec.ports, identity and paths are derived by the hook, TLS comes from spec.tls (so that the hook dials it too and every instance agrees on it), and Memgraph rejects init files in a high-availability cluster; remove the flag"
	MsgTLSSecretName      = "tls.secretName must name a Secret in the cluster's namespace: lower-case letters, digits, '-' and '.', such as memgraph-bolt-tls"
	MsgClusterSecretName  = "tls.clusterSecretName must name a Secret in the cluster's namespace: lower-case letters, digits, '-' and '.', such as memgraph-cluster-tls"
	MsgIntraClusterTLS    = "spec.tls turns on intra-cluster TLS (tls.intraCluster defaults to true), which a running cluster cannot take one pod at a time: a Memgraph instance with intra-cluster TLS and one without cannot talk to each other (replication, management and Raft become mutual TLS). Set spec.hibernate: true in the same update or before it, and wake the cluster (hibernate: false) once it has; or set tls.intraCluster: false to encrypt Bolt only"
	MsgAuthSecretName     = "auth.secretName must name a Secret in the cluster's namespace: lower-case letters, digits, '-' and '.', such as memgraph-hooks-auth"
	MsgDataWAL            = "dataTemplate.extraArgs must not set --storage-wal-enabled: a data instance in a high-availability cluster must run with the WAL enabled, and the hook enables it; remove the flag"
	MsgCoordinatorStorage = "storage.coordinators is immutable: it shapes the StatefulSet's volumeClaimTemplates, which Kubernetes cannot change in place. Delete the MemgraphCluster (and its retained PersistentVolumeClaims, if the volumes must change too) and create it again with the new storage"
	MsgVolumeSize         = "libPVCSize and logPVCSize must be positive quantities such as 1Gi: Kubernetes refuses a volume claim of zero or negative size"
	MsgPreferredMain      = "preferredMain must name a data instance as SHOW INSTANCES names it, instance_<n> such as instance_0 or instance_2"
	MsgPreferredDeclared  = "preferredMain must be one of the declared data instances, instance_0 to instance_<dataInstances-1>: a dataInstances shrink that would retire the preferred MAIN is refused; set preferredMain to an instance that stays (or remove it), then shrink"
	MsgHibernateScale     = "coordinators must not change while the cluster hibernates, nor in the update that sets or clears hibernate: the coordinators come back from their Raft logs at the declared count, and another count could leave them without a majority; wake the cluster (hibernate: false) first, then scale"
	MsgStepTimeout        = "rollout.stepTimeout must be a duration from 1m to 168h written in hours, minutes and seconds, such as 10m, 90s or 1h30m: how long a replaced pod may take to be Ready and caught up before the rollout reports RolloutStuck"
	MsgStuckAfter         = "replicaHealth.stuckAfter must be a duration from 1m to 168h written in hours, minutes and seconds, such as 10m, 90s or 1h30m: how long a replica may stay in recovery or invalid before Degraded reports it ReplicaStuck"
	MsgGracePeriod        = "terminationGracePeriodSeconds must be from 1 to 86400 (one day): how long Kubernetes waits after SIGTERM before it kills Memgraph; 0 would kill it without a clean shutdown"
	MsgSysctlImage        = "sysctlInitContainer.image is required when sysctlInitContainer.enabled is true: the init container runs sysctl from an image you choose, with a shell and sysctl, such as docker.io/library/busybox:1.37.0; set image, or set enabled to false"
	MsgMaxMapCount        = "sysctlInitContainer.maxMapCount must be from 65530 (the kernel's default) to 2147483647: the init container only ever raises vm.max_map_count, and Memgraph asks for at least 524288"
	MsgReplicationMix     = "replicationMode and replicationModeOverrides must not mix Sync and StrictSync: Memgraph refuses to register a STRICT_SYNC instance beside a SYNC one (and the reverse); use Sync or StrictSync, each with Async where wanted"
	MsgReplicationFixed   = "replicationMode and replicationModeOverrides cannot change once the cluster exists: Memgraph has no ALTER for a registered instance's mode, the MAIN is registered with a mode too and is never unregistered, and Memgraph refuses Sync and StrictSync side by side, so re-registering one instance at a time cannot switch a cluster between them; declare the mode when creating the cluster, or create a new cluster with the mode and move the data"
	MsgOverrideInstance   = "replicationModeOverrides[].instance must name a data instance as SHOW INSTANCES names it, instance_<n> such as instance_1"
	MsgSourceRangesType   = "externalAccess.loadBalancerSourceRanges applies to type LoadBalancer only: Kubernetes refuses it on a NodePort Service; remove it, or use type LoadBalancer"
	MsgSourceRange        = "externalAccess.loadBalancerSourceRanges must be CIDRs such as 203.0.113.0/24 or 2001:db8::/32"
	MsgHostnameInstance   = "externalAccess.hostnameTemplate must contain {instance}, which becomes each member's pod name: without it every member would get the same hostname, and a routing client could not tell them apart"
	MsgHostnameForm       = "externalAccess.hostnameTemplate must be a DNS name once {instance} is replaced, such as {instance}.graph.example.com: lower-case letters, digits, '-' and '.', without a leading or trailing dot"
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
	reservedArgsPattern   = `^--?(bolt[-_]port|bolt[-_]address|management[-_]port|coordinator[-_]port|coordinator[-_]id|coordinator[-_]hostname|nuraft[-_]log[-_]file|data[-_]directory|init[-_]file|init[-_]data[-_]file|bolt[-_]cert[-_]file|bolt[-_]key[-_]file|cluster[-_]cert[-_]file|cluster[-_]key[-_]file|cluster[-_]ca[-_]file)(=|$)`
	walArgPattern         = `^--?(no)?storage[-_]wal[-_]enabled(=|$)`
	preferredMainPattern  = `^instance_(0|[1-9][0-9]{0,2})$`
	stepTimeoutPattern    = `^([0-9]+(h|m|s))+$`
	minStepTimeout        = "1m"
	maxStepTimeout        = "168h"
	maxClusterNameLength  = 40
	minGracePeriod        = 1
	maxGracePeriod        = 86400
	minMaxMapCount        = 65530
	maxMaxMapCount        = 2147483647
	maxPort               = 65535
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
	preferredMainRE = regexp.MustCompile(preferredMainPattern)
	stepTimeoutRE   = regexp.MustCompile(stepTimeoutPattern)
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
	// Namespace and Name are the object's, as decoded (unbounded: Clip before echoing them);
	// empty when its spec did not even decode.
	Namespace, Name string
	Violations      []Violation
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = Clip(v.Field) + ": " + v.Message
	}
	return "invalid MemgraphCluster: " + strings.Join(parts, "; ")
}

type violations []Violation

func (vs *violations) add(broken bool, field, msg string) {
	if broken {
		*vs = append(*vs, Violation{Field: field, Message: msg})
	}
}

// err is the *ValidationError of vs, naming mc when it is known (nil: the object did not decode).
func (vs violations) err(mc *MemgraphCluster) error {
	switch {
	case len(vs) == 0:
		return nil
	case mc == nil:
		return &ValidationError{Violations: vs}
	}
	return &ValidationError{Namespace: mc.Namespace, Name: mc.Name, Violations: vs}
}

// Limits on the member counts, mirrored by CEL rules in types.go. The hook also treats them as
// the ceiling of what it believes a StatefulSet or a pod ordinal says about a cluster: evidence
// beyond them cannot describe a member the hook ever declared.
const (
	MaxCoordinators  = 9
	MaxDataInstances = 128
)

// Validate checks mc, with defaults applied (a zero value counts as unset, as it does when a
// typed object is marshalled for the API server), against every creation-time rule of the CRD —
// its OpenAPI schema (schema.go) and the CEL rules with their exact messages — and returns a
// *ValidationError naming every violated rule, or nil. A parent read from a hook request is
// checked by Admit instead, which tells an explicit zero from an absent field.
func (mc *MemgraphCluster) Validate() error { return mc.Defaulted().validateDefaulted() }

// validateDefaulted is Validate of an object whose defaults are applied.
func (mc *MemgraphCluster) validateDefaulted() error {
	vs := mc.specSchemaViolations()
	mc.celRules(&vs)
	return vs.err(mc)
}

// specSchemaViolations checks the spec's JSON form against the CRD's OpenAPI schema.
func (mc *MemgraphCluster) specSchemaViolations() violations {
	raw, err := json.Marshal(mc.Spec)
	if err != nil {
		return violations{{Field: "spec", Message: err.Error()}}
	}
	var spec any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &spec); err != nil {
		return violations{{Field: "spec", Message: err.Error()}}
	}
	return schemaViolations(spec)
}

// schemaViolations checks a spec in its JSON form, defaults applied, against the CRD's schema.
func schemaViolations(spec any) violations {
	root, err := embeddedSchema()
	if err != nil {
		return violations{{Field: "spec", Message: err.Error()}}
	}
	var c schemaCheck
	root.Properties["spec"].validate(&c, "spec", spec)
	return c.violations()
}

// celRules checks mc as it is (no defaulting) against the Go twin of every CEL rule.
func (mc *MemgraphCluster) celRules(vs *violations) {
	s := &mc.Spec
	vs.add(len(mc.Name) > maxClusterNameLength || !clusterNameRE.MatchString(mc.Name), "metadata.name", MsgClusterName)
	vs.add(s.Coordinators < 3 || s.Coordinators%2 != 1, "spec.coordinators", MsgCoordinators)
	vs.add(s.Coordinators > MaxCoordinators, "spec.coordinators", MsgCoordinatorsMax)
	vs.add(s.DataInstances < 1, "spec.dataInstances", MsgDataInstances)
	vs.add(s.DataInstances > MaxDataInstances, "spec.dataInstances", MsgDataInstancesMax)
	vs.add(strings.Contains(s.Image.Repository, "@") || repositoryTagRE.MatchString(s.Image.Repository), "spec.image.repository", MsgImageRepository)
	vs.add(!imageTagRE.MatchString(s.Image.Tag) && !imageDigestRE.MatchString(s.Image.Tag), "spec.image.tag", MsgImageTag)
	vs.add(s.Secrets.LicenseKey == s.Secrets.OrganizationKey, "spec.secrets", MsgSecretKeys)
	vs.add(!clusterDomainRE.MatchString(s.ClusterDomain), "spec.clusterDomain", MsgClusterDomain)
	p := s.Ports
	vs.add(hasDuplicate([]int32{p.Bolt, p.Management, p.Replication, p.Coordinator}), "spec.ports", MsgPortsDistinct)
	validatePodOptions(vs, "spec.coordinatorTemplate", &s.CoordinatorTemplate.PodOptions)
	validatePodOptions(vs, "spec.dataTemplate", &s.DataTemplate.PodOptions)
	vs.add(slices.ContainsFunc(s.DataTemplate.ExtraArgs, walArgRE.MatchString), "spec.dataTemplate", MsgDataWAL)
	vs.add(!positiveSizes(s.Storage.Coordinators), "spec.storage.coordinators", MsgVolumeSize)
	vs.add(!positiveSizes(s.Storage.Data), "spec.storage.data", MsgVolumeSize)
	// A Secret name is a DNS subdomain, the very shape of clusterDomainPattern; its length is the
	// schema's (MaxLength).
	vs.add(s.TLS != nil && !clusterDomainRE.MatchString(s.TLS.SecretName), "spec.tls.secretName", MsgTLSSecretName)
	vs.add(s.TLS != nil && s.TLS.ClusterSecretName != "" && !clusterDomainRE.MatchString(s.TLS.ClusterSecretName),
		"spec.tls.clusterSecretName", MsgClusterSecretName)
	vs.add(s.Auth != nil && !clusterDomainRE.MatchString(s.Auth.SecretName), "spec.auth.secretName", MsgAuthSecretName)
	_, ok := stepTimeoutSeconds(s.Rollout.StepTimeout)
	vs.add(!ok, "spec.rollout.stepTimeout", MsgStepTimeout)
	_, ok = stepTimeoutSeconds(s.ReplicaHealth.StuckAfter)
	vs.add(!ok, "spec.replicaHealth.stuckAfter", MsgStuckAfter)
	validateWindows(vs, s.MaintenanceWindows)
	validatePreferredMain(vs, s)
	validateShutdown(vs, s)
	validateReplicationModes(vs, s)
	validateBackups(vs, s)
	validateRoles(vs, s)
	validateExternalAccess(vs, s.ExternalAccess)
	*vs = append(*vs, unsafeSettings(&s.CoordinatorSettings)...)
}

// validateReplicationModes is the twin of the overrides' instance rule and of the spec's rule
// against a Sync and StrictSync mix (Memgraph refuses one: coordinator_instance.cpp
// RegisterReplicationInstance, STRICT_SYNC_AND_SYNC_FORBIDDEN).
func validateReplicationModes(vs *violations, s *MemgraphClusterSpec) {
	modes := map[ReplicationMode]bool{s.ModeOf(""): true} // unset reads as Sync, as in the rule
	for i, o := range s.ReplicationModeOverrides {
		vs.add(!preferredMainRE.MatchString(o.Instance), fmt.Sprintf("spec.replicationModeOverrides[%d].instance", i), MsgOverrideInstance)
		modes[o.Mode] = true
	}
	vs.add(modes[ReplicationSync] && modes[ReplicationStrictSync], "spec", MsgReplicationMix)
}

// validateShutdown is the twin of the grace-period and sysctlInitContainer rules.
func validateShutdown(vs *violations, s *MemgraphClusterSpec) {
	outOfRange := func(g int64) bool { return g < minGracePeriod || g > maxGracePeriod }
	vs.add(outOfRange(s.CoordinatorTemplate.TerminationGracePeriodSeconds),
		"spec.coordinatorTemplate.terminationGracePeriodSeconds", MsgGracePeriod)
	vs.add(outOfRange(s.DataTemplate.TerminationGracePeriodSeconds),
		"spec.dataTemplate.terminationGracePeriodSeconds", MsgGracePeriod)
	sysctl := s.DataTemplate.SysctlInitContainer
	vs.add(sysctl.Enabled != nil && *sysctl.Enabled && sysctl.Image == "", "spec.dataTemplate.sysctlInitContainer", MsgSysctlImage)
	vs.add(sysctl.MaxMapCount < minMaxMapCount || sysctl.MaxMapCount > maxMaxMapCount,
		"spec.dataTemplate.sysctlInitContainer.maxMapCount", MsgMaxMapCount)
}

// validatePreferredMain is the twin of the field's rule and of the spec's rule that keeps it
// within the declared data instances (which the CEL rule checks only for a well-formed name).
func validatePreferredMain(vs *violations, s *MemgraphClusterSpec) {
	if s.PreferredMain == "" {
		return
	}
	wellFormed := preferredMainRE.MatchString(s.PreferredMain)
	vs.add(!wellFormed, "spec.preferredMain", MsgPreferredMain)
	if wellFormed {
		ordinal, _ := strconv.Atoi(strings.TrimPrefix(s.PreferredMain, "instance_"))
		vs.add(ordinal >= int(s.DataInstances), "spec", MsgPreferredDeclared)
	}
}

// stepTimeoutSeconds is the twin of the stepTimeout rule: whole hours, minutes and seconds
// (which CEL's duration() adds up as Go's time.ParseDuration does), from 1m to 168h. ok is false
// for anything else.
func stepTimeoutSeconds(s string) (seconds int64, ok bool) {
	if !stepTimeoutRE.MatchString(s) {
		return 0, false
	}
	lowest, _ := durationSeconds(minStepTimeout)
	highest, _ := durationSeconds(maxStepTimeout)
	d, ok := durationSeconds(s)
	return d, ok && d >= lowest && d <= highest
}

// durationSeconds adds up a string of stepTimeoutPattern; ok is false when it overflows.
func durationSeconds(s string) (int64, bool) {
	const ceiling = 1 << 40 // far beyond any bound, far below overflow
	var total, n int64
	for _, c := range s {
		switch c {
		case 'h':
			total, n = total+n*3600, 0
		case 'm':
			total, n = total+n*60, 0
		case 's':
			total, n = total+n, 0
		default:
			n = n*10 + int64(c-'0')
		}
		if n > ceiling || total > ceiling {
			return 0, false
		}
	}
	return total, true
}

// StepTimeoutSeconds is spec.rollout.stepTimeout in seconds; the default's when it is unset or
// (in a spec that skipped admission) invalid.
func (r Rollout) StepTimeoutSeconds() int64 {
	if d, ok := stepTimeoutSeconds(r.StepTimeout); ok {
		return d
	}
	d, _ := stepTimeoutSeconds(DefaultStepTimeout)
	return d
}

func validatePodOptions(vs *violations, path string, o *PodOptions) {
	vs.add(slices.ContainsFunc(reservedLabelKeys, func(k string) bool { _, ok := o.Labels[k]; return ok }),
		path+".labels", MsgReservedLabels)
	vs.add(slices.ContainsFunc(o.ExtraEnv, func(e corev1.EnvVar) bool { return slices.Contains(reservedEnvNames, e.Name) }),
		path+".extraEnv", MsgReservedEnv)
	vs.add(slices.ContainsFunc(o.ExtraArgs, reservedArgsRE.MatchString), path+".extraArgs", MsgReservedArgs)
}

// positiveSizes is the twin of the RoleStorage rule; sizes are defaulted by then, so a zero left
// is one written explicitly.
func positiveSizes(rs RoleStorage) bool {
	return rs.LibPVCSize.Sign() > 0 && rs.LogPVCSize.Sign() > 0
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
		od, nd := old.Defaulted().Spec, new.Defaulted().Spec
		vs.add((*od.Hibernate || *nd.Hibernate) && od.Coordinators != nd.Coordinators, "spec", MsgHibernateScale)
		vs.add(od.ReplicationMode != nd.ReplicationMode ||
			!equality.Semantic.DeepEqual(od.ReplicationModeOverrides, nd.ReplicationModeOverrides), "spec", MsgReplicationFixed)
		vs.add(fromBackupChanged(&od, &nd), "spec", MsgFromBackupCreateOnly)
	}
	return vs.err(new)
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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemgraphCluster is a Memgraph high-availability cluster: an odd number of coordinators (Raft)
// and one or more data instances, run by the memgraph-hooks sync hook through Metacontroller.
//
// The name prefixes every child: StatefulSets <name>-coordinator and <name>-data, headless
// Services of the same names, and the client Service <name>. The StatefulSet name must leave
// room for the controller-revision-hash label (63 characters), hence the 40-character limit.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=mgc
// +kubebuilder:printcolumn:name="Main",type=string,JSONPath=".status.main",description="The data instance that is MAIN"
// +kubebuilder:printcolumn:name="Leader",type=string,JSONPath=".status.leader",description="The coordinator that is the Raft leader"
// +kubebuilder:printcolumn:name="Members",type=string,JSONPath=".status.members",description="Declared members up, out of those declared"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=".status.version",description="The image every pod runs"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase",description="Running, Paused, Hibernating, Hibernated, Waking or Restoring"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="The cluster serves writes: a ready leader and a MAIN that is up"
// +kubebuilder:printcolumn:name="Degraded",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].status`,description="A declared member is down"
// +kubebuilder:printcolumn:name="Converged",type=string,JSONPath=`.status.conditions[?(@.type=="Converged")].status`,description="Every declared member is registered and the StatefulSets are at the declared size",priority=1
// +kubebuilder:printcolumn:name="Read-Only",type=boolean,JSONPath=".status.coordinatorSettings.globalReadOnly",description="global_read_only is true on the coordinators: the cluster refuses writes (spec.coordinatorSettings.globalReadOnly, the maintenance switch)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be at most 40 characters of lower-case letters, digits and '-', starting with a letter and ending with a letter or digit: it prefixes the StatefulSets <name>-coordinator and <name>-data and names the client Service; pick a shorter name"
type MemgraphCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	Spec   MemgraphClusterSpec   `json:"spec,omitempty"`
	Status MemgraphClusterStatus `json:"status,omitempty"`
}

// MemgraphClusterList is a list of MemgraphClusters.
//
// +kubebuilder:object:root=true
type MemgraphClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MemgraphCluster `json:"items"`
}

// MemgraphClusterSpec declares the cluster. Every field is optional: its default is both a CRD
// schema default and a Go constant (defaults.go), and Defaulted applies them in Go.
// +kubebuilder:validation:XValidation:rule="!has(self.preferredMain) || !self.preferredMain.matches('^instance_(0|[1-9][0-9]{0,2})$') || int(self.preferredMain.substring(9)) < self.dataInstances",message="preferredMain must be one of the declared data instances, instance_0 to instance_<dataInstances-1>: a dataInstances shrink that would retire the preferred MAIN is refused; set preferredMain to an instance that stays (or remove it), then shrink"
// +kubebuilder:validation:XValidation:rule="(has(self.hibernate) && self.hibernate) || !(has(self.tls) && (!has(self.tls.intraCluster) || self.tls.intraCluster)) || (has(oldSelf.tls) && (!has(oldSelf.tls.intraCluster) || oldSelf.tls.intraCluster))",message="spec.tls turns on intra-cluster TLS (tls.intraCluster defaults to true), which a running cluster cannot take one pod at a time: a Memgraph instance with intra-cluster TLS and one without cannot talk to each other (replication, management and Raft become mutual TLS). Set spec.hibernate: true in the same update or before it, and wake the cluster (hibernate: false) once it has; or set tls.intraCluster: false to encrypt Bolt only"
// +kubebuilder:validation:XValidation:rule="((!has(self.hibernate) || !self.hibernate) && (!has(oldSelf.hibernate) || !oldSelf.hibernate)) || self.coordinators == oldSelf.coordinators",message="coordinators must not change while the cluster hibernates, nor in the update that sets or clears hibernate: the coordinators come back from their Raft logs at the declared count, and another count could leave them without a majority; wake the cluster (hibernate: false) first, then scale"
// +kubebuilder:validation:XValidation:rule="!has(self.replicationModeOverrides) || ((has(self.replicationMode) ? self.replicationMode : 'Sync') != 'Sync' || self.replicationModeOverrides.all(o, o.mode != 'StrictSync')) && ((has(self.replicationMode) ? self.replicationMode : 'Sync') != 'StrictSync' || self.replicationModeOverrides.all(o, o.mode != 'Sync')) && (!self.replicationModeOverrides.exists(o, o.mode == 'Sync') || !self.replicationModeOverrides.exists(o, o.mode == 'StrictSync'))",message="replicationMode and replicationModeOverrides must not mix Sync and StrictSync: Memgraph refuses to register a STRICT_SYNC instance beside a SYNC one (and the reverse); use Sync or StrictSync, each with Async where wanted"
// +kubebuilder:validation:XValidation:rule="(has(self.replicationMode) ? self.replicationMode : 'Sync') == (has(oldSelf.replicationMode) ? oldSelf.replicationMode : 'Sync') && (has(self.replicationModeOverrides) ? self.replicationModeOverrides : []) == (has(oldSelf.replicationModeOverrides) ? oldSelf.replicationModeOverrides : [])",message="replicationMode and replicationModeOverrides cannot change once the cluster exists: Memgraph has no ALTER for a registered instance's mode, the MAIN is registered with a mode too and is never unregistered, and Memgraph refuses Sync and StrictSync side by side, so re-registering one instance at a time cannot switch a cluster between them; declare the mode when creating the cluster, or create a new cluster with the mode and move the data"
// +kubebuilder:validation:XValidation:rule="!has(self.bootstrap) || !has(self.bootstrap.fromBackup) || has(self.bootstrap.fromBackup.destination) || (has(self.backup) && has(self.backup.destination))",message="bootstrap.fromBackup reads the backup from spec.backup.destination unless it names a store of its own: set spec.backup.destination (the store the backup is in, where the cluster's own backups will go too), or bootstrap.fromBackup.destination with key"
// +kubebuilder:validation:XValidation:rule="!has(self.bootstrap) || !has(self.bootstrap.fromBackup) || (has(oldSelf.bootstrap) && has(oldSelf.bootstrap.fromBackup) && self.bootstrap.fromBackup == oldSelf.bootstrap.fromBackup)",message="bootstrap.fromBackup can only be set when the cluster is created: restoring replaces the data, and an existing cluster already has data of its own. To restore a backup, create a new MemgraphCluster with bootstrap.fromBackup (under another name, or after deleting this one and its PersistentVolumeClaims)"
type MemgraphClusterSpec struct {
	// Coordinators is the number of coordinators, the Raft members that elect MAIN. Odd and at
	// least 3: Raft needs a majority, and an even count survives no more failures than the odd
	// count below it.
	// +kubebuilder:default=3
	// +kubebuilder:validation:XValidation:rule="self >= 3 && self % 2 == 1",message="coordinators must be odd and at least 3 (3, 5, 7, ...): Raft needs a majority, and an even count survives no more failures than the odd count below it"
	// +kubebuilder:validation:XValidation:rule="self <= 9",message="coordinators must be at most 9: every coordinator takes part in each Raft commit of the cluster state, so more coordinators only slow down failover and registration; 9 already survive 4 coordinator failures (Memgraph's HA chart runs 3)"
	// +optional
	Coordinators int32 `json:"coordinators,omitempty"`

	// DataInstances is the number of data instances: one MAIN, the rest replicas.
	// +kubebuilder:default=2
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="dataInstances must be at least 1: a cluster without a data instance has nothing to serve"
	// +kubebuilder:validation:XValidation:rule="self <= 128",message="dataInstances must be at most 128: the MAIN replicates every write to each data instance and the leader coordinator health-checks every instance each second, so more replicas slow down writes and failover instead of adding capacity; split the data over several clusters instead"
	// +optional
	DataInstances int32 `json:"dataInstances,omitempty"`

	// +kubebuilder:default={}
	// +optional
	Image Image `json:"image,omitempty"`

	// Secrets names the Secret with the license (memgraph-secrets, keys MEMGRAPH_ENTERPRISE_LICENSE
	// and MEMGRAPH_ORGANIZATION_NAME by default). The default is spelled out in full, not {}, so
	// that the API server can check it against the keys-differ rule.
	// +kubebuilder:default={name:"memgraph-secrets",licenseKey:"MEMGRAPH_ENTERPRISE_LICENSE",organizationKey:"MEMGRAPH_ORGANIZATION_NAME"}
	// +optional
	Secrets Secrets `json:"secrets,omitempty"`

	// +kubebuilder:default={}
	// +optional
	Storage Storage `json:"storage,omitempty"`

	// TLS serves Bolt over TLS on every pod of both roles, and makes the hook reach the
	// coordinators over TLS, verified with the Secret's CA. Unset, Bolt is plaintext.
	// +optional
	TLS *TLS `json:"tls,omitempty"`

	// Auth names the Secret with the credentials the hook sends when it reads SHOW REPLICAS on
	// the MAIN data instance, which proves a MAIN handover's target caught up. Set it when the data
	// instances require authentication (once any Memgraph user exists); unset, the hook connects
	// without credentials. Coordinators ignore authentication in Memgraph 3.12.
	// +optional
	Auth *Auth `json:"auth,omitempty"`

	// ClusterDomain is the cluster's DNS domain; every advertised address is
	// <pod>.<service>.<namespace>.svc.<clusterDomain>.
	// +kubebuilder:default="cluster.local"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="clusterDomain must be a DNS domain such as cluster.local, lower case, without a leading or trailing dot"
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`

	// Ports every member listens on and advertises (bolt 7687, management 10000, replication
	// 20000, coordinator 12000 by default). The default is spelled out in full, not {}, so that the
	// API server can check it against the ports-differ rule.
	// +kubebuilder:default={bolt:7687,management:10000,replication:20000,coordinator:12000}
	// +optional
	Ports ClusterPorts `json:"ports,omitempty"`

	// CoordinatorTemplate tunes the coordinators' pods.
	// +kubebuilder:default={}
	// +optional
	CoordinatorTemplate CoordinatorTemplate `json:"coordinatorTemplate,omitempty"`

	// DataTemplate tunes the data instances' pods.
	// +kubebuilder:default={}
	// +optional
	DataTemplate DataTemplate `json:"dataTemplate,omitempty"`

	// PreferredMain names the data instance (instance_<n>, n below dataInstances) that should be
	// MAIN. When another instance is MAIN, the hook hands MAIN over to it once it is up and
	// proven caught up on every database (a planned switchover), and moves MAIN back to it after
	// a failover once it has returned and caught up. Unset, the hook never moves a healthy MAIN.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=12
	// +kubebuilder:validation:XValidation:rule="self.matches('^instance_(0|[1-9][0-9]{0,2})$')",message="preferredMain must name a data instance as SHOW INSTANCES names it, instance_<n> such as instance_0 or instance_2"
	// +optional
	PreferredMain string `json:"preferredMain,omitempty"`

	// Hibernate stops every pod while keeping every registration and every volume: the data
	// replicas first, then the MAIN, then the coordinators, whatever storage.retentionPolicy
	// says. Setting it back to false (or removing it) wakes the cluster: the MAIN and the
	// coordinators first, then the replicas, as they were.
	// +kubebuilder:default=false
	// +optional
	Hibernate *bool `json:"hibernate,omitempty"`

	// CoordinatorSettings are Memgraph's coordinator settings the hook keeps as declared: it reads
	// SHOW COORDINATOR SETTINGS on the leader and sets each declared setting that differs with SET
	// COORDINATOR SETTING, so a value set by hand or lost with a coordinator's Raft data is put
	// back. An unset field is never touched: Memgraph's default (or a value set by hand) stays.
	// +kubebuilder:default={}
	// +optional
	CoordinatorSettings CoordinatorSettings `json:"coordinatorSettings,omitempty"`

	// ReplicationMode is how the MAIN replicates to the data instances (REGISTER INSTANCE … AS
	// ASYNC | AS STRICT_SYNC): Sync (Memgraph's default) waits for every reachable replica and
	// commits on the MAIN when one is down; Async never waits; StrictSync commits only when every
	// strict replica confirms, so writes pause while a strict replica is down or restarts — as
	// each one does in a rolling upgrade. Fixed once the cluster exists (see the spec's rule).
	// +kubebuilder:default=Sync
	// +optional
	ReplicationMode ReplicationMode `json:"replicationMode,omitempty"`

	// ReplicationModeOverrides give single data instances another mode than replicationMode.
	// Memgraph refuses a cluster with both Sync and StrictSync instances.
	// +kubebuilder:validation:MaxItems=128
	// +listType=map
	// +listMapKey=instance
	// +optional
	ReplicationModeOverrides []ReplicationModeOverride `json:"replicationModeOverrides,omitempty"`

	// Bootstrap says where a new cluster's data comes from. Unset, a new cluster starts empty.
	// It is read only while the cluster is created: admission refuses adding or changing
	// bootstrap.fromBackup on a cluster that exists (the spec's rule).
	// +optional
	Bootstrap *Bootstrap `json:"bootstrap,omitempty"`

	// Backup says how the cluster's MemgraphBackups are taken.
	// +kubebuilder:default={}
	// +optional
	Backup *ClusterBackup `json:"backup,omitempty"`

	// Rollout tunes how a change to the pods (a new image, resources, probes, extraArgs, ...)
	// is rolled out: one pod at a time, replicas first, MAIN and Raft leader handed over first.
	// +kubebuilder:default={}
	// +optional
	Rollout Rollout `json:"rollout,omitempty"`

	// ReplicaHealth says when a replica that is not replicating counts as stuck (condition
	// Degraded, reason ReplicaStuck).
	// +kubebuilder:default={}
	// +optional
	ReplicaHealth ReplicaHealth `json:"replicaHealth,omitempty"`

	// Placement spreads each role's pods over nodes and zones, so that one node's loss takes
	// neither the coordinators' Raft majority nor every copy of the data. An affinity or
	// topologySpreadConstraints written in coordinatorTemplate or dataTemplate replaces the
	// hook's own for that role.
	// +kubebuilder:default={}
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// Roles are the Memgraph roles the cluster's MemgraphUsers may name (user_types.go): each
	// created, and kept as declared, before a user that names it.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Roles []ClusterRole `json:"roles,omitempty"`

	// ExternalAccess reaches every member from outside the Kubernetes cluster, each through a
	// Service of its own, and has the coordinators give routing clients (neo4j://) those
	// addresses. Unset, routing clients are given the members' in-cluster names.
	// +optional
	ExternalAccess *ExternalAccess `json:"externalAccess,omitempty"`

	// MaintenanceWindows are when a pod-template change that the spec did not ask for — one a
	// new release of the hook brings — may roll the pods. Outside them such a change waits, every
	// pod keeps running, and the Updated condition says WaitingForMaintenanceWindow with the next
	// window's start. A change made to the spec, a restart (memgraph.com/restartedAt, kubectl
	// memgraph restart) and the safety actions (a switchover before a drain, a failover) never
	// wait. Unset or empty, a hook release's change rolls at once, like any other.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	MaintenanceWindows []MaintenanceWindow `json:"maintenanceWindows,omitempty"`
}

// MaintenanceWindow is a recurring time during which a hook release's pod-template change may
// roll the pods: it opens at each time of the schedule and stays open for the duration.
type MaintenanceWindow struct {
	// Schedule is a cron schedule in UTC with five fields (minute hour day-of-month month
	// day-of-week), such as "0 2 * * 6" for Saturdays at 02:00 UTC.
	// +kubebuilder:validation:MinLength=9
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.split(' ').filter(f, f != '').size() == 5",message="maintenanceWindows[].schedule must be a cron schedule of five fields in UTC (minute hour day-of-month month day-of-week), such as \"0 2 * * 6\" for Saturdays at 02:00"
	Schedule string `json:"schedule"`

	// Duration is how long each window stays open, from 1m to 168h, written in hours, minutes
	// and seconds, such as 4h or 1h30m. A window that opens while the last one is still open
	// extends it.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(h|m|s))+$') && duration(self) >= duration('1m') && duration(self) <= duration('168h')",message="maintenanceWindows[].duration must be a duration from 1m to 168h written in hours, minutes and seconds, such as 4h or 1h30m: how long each window stays open"
	Duration string `json:"duration"`
}

// Rollout tunes rolling upgrades.
type Rollout struct {
	// StepTimeout is how long a replaced pod may take, from its creation, to be Ready, back in
	// the cluster and caught up before the Updated condition reports RolloutStuck. The rollout
	// waits for the pod either way; the timeout only decides when to say that it is stuck.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(h|m|s))+$') && duration(self) >= duration('1m') && duration(self) <= duration('168h')",message="rollout.stepTimeout must be a duration from 1m to 168h written in hours, minutes and seconds, such as 10m, 90s or 1h30m: how long a replaced pod may take to be Ready and caught up before the rollout reports RolloutStuck"
	// +optional
	StepTimeout string `json:"stepTimeout,omitempty"`
}

// Image is the Memgraph image both roles run.
type Image struct {
	// Repository without tag or digest, e.g. docker.io/memgraph/memgraph.
	// +kubebuilder:default="docker.io/memgraph/memgraph"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="!self.contains('@') && !self.matches(':[^/]*$')",message="image.repository must not carry a tag or digest: put the tag in image.tag (e.g. repository docker.io/memgraph/memgraph, tag 3.12.0)"
	// +optional
	Repository string `json:"repository,omitempty"`

	// Tag is an image tag such as 3.12.0, or a digest sha256:<64 hex digits>.
	// +kubebuilder:default="3.12.0"
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$') || self.matches('^sha256:[a-f0-9]{64}$')",message="image.tag must be a tag such as 3.12.0 or a digest such as sha256:<64 lower-case hex digits>"
	// +optional
	Tag string `json:"tag,omitempty"`

	// +kubebuilder:default="IfNotPresent"
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	PullPolicy corev1.PullPolicy `json:"pullPolicy,omitempty"`
}

// Secrets names the Secret the kubelet injects as the license environment of every pod. The hook
// checks that it exists (the customize hook asks for it by name) and never reads its values.
// +kubebuilder:validation:XValidation:rule="self.licenseKey != self.organizationKey",message="secrets.licenseKey and secrets.organizationKey must name different keys of the Secret: the license and the organization name are separate values"
type Secrets struct {
	// +kubebuilder:default="memgraph-secrets"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`

	// LicenseKey is the Secret key holding the enterprise license.
	// +kubebuilder:default="MEMGRAPH_ENTERPRISE_LICENSE"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	LicenseKey string `json:"licenseKey,omitempty"`

	// OrganizationKey is the Secret key holding the organization name the license was issued to.
	// +kubebuilder:default="MEMGRAPH_ORGANIZATION_NAME"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	OrganizationKey string `json:"organizationKey,omitempty"`
}

// TLS names the Secret behind Bolt over TLS.
type TLS struct {
	// SecretName is a kubernetes.io/tls Secret in the cluster's namespace. tls.crt and tls.key
	// are mounted read-only into every pod at /etc/memgraph/ssl and passed to Memgraph as
	// --bolt-cert-file and --bolt-key-file; ca.crt is the CA the hook verifies the coordinators'
	// certificate with, so the certificate must be valid for every coordinator's FQDN (for
	// example *.<name>-coordinator.<namespace>.svc.<clusterDomain>) and for whatever names clients
	// use. cert-manager's Certificate Secrets have this shape. The hook reads the Secret through
	// Metacontroller and never logs or returns its content.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="tls.secretName must name a Secret in the cluster's namespace: lower-case letters, digits, '-' and '.', such as memgraph-bolt-tls"
	SecretName string `json:"secretName"`

	// IntraCluster encrypts and mutually authenticates Memgraph's own traffic — replication,
	// management and Raft — with the certificate, key and CA of ClusterSecretName: every pod of
	// both roles runs with --cluster-cert-file, --cluster-key-file and --cluster-ca-file. An
	// instance with intra-cluster TLS and one without cannot talk, so turning it on or off on a
	// running cluster takes effect only through hibernation (spec.hibernate): the hook holds
	// every pod and says so in the Updated condition until then. Set it to false to encrypt
	// Bolt only.
	// +kubebuilder:default=true
	// +optional
	IntraCluster *bool `json:"intraCluster,omitempty"`

	// ClusterSecretName is the kubernetes.io/tls Secret behind intra-cluster TLS, SecretName when
	// unset. Its tls.crt must verify against its ca.crt, be usable for both server and client
	// authentication (each instance is both), and be valid for every member's FQDN the hook
	// registers: *.<name>-coordinator.<namespace>.svc.<clusterDomain> and
	// *.<name>-data.<namespace>.svc.<clusterDomain>.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="tls.clusterSecretName must name a Secret in the cluster's namespace: lower-case letters, digits, '-' and '.', such as memgraph-cluster-tls"
	// +optional
	ClusterSecretName string `json:"clusterSecretName,omitempty"`
}

// Auth names the Secret with the Memgraph credentials the hook uses on data instances.
type Auth struct {
	// SecretName is a Secret in the cluster's namespace with the keys username and password: a
	// Memgraph user with the REPLICATION (SHOW REPLICAS, SHOW REPLICATION ROLE), DURABILITY
	// (snapshots for backups and restores), MULTI_DATABASE_USE and MULTI_DATABASE_EDIT (SHOW
	// DATABASES, CREATE DATABASE, with access to every database) and RELOAD_TLS (certificate
	// reloads) privileges. The hook reads it through Metacontroller for each sync, keeps it only
	// for that sync's Bolt connections and the backup agents' jobs, and never logs, stores or
	// returns it.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="auth.secretName must name a Secret in the cluster's namespace: lower-case letters, digits, '-' and '.', such as memgraph-hooks-auth"
	SecretName string `json:"secretName"`
}

// RetentionPolicy says what happens to the PersistentVolumeClaims when the cluster is deleted or
// a role is scaled down.
// +kubebuilder:validation:Enum=Retain;Delete
type RetentionPolicy string

const (
	RetentionRetain RetentionPolicy = "Retain"
	RetentionDelete RetentionPolicy = "Delete"
)

// Storage holds the volume claims of both roles, in the Helm chart's vocabulary.
type Storage struct {
	// RetentionPolicy becomes both StatefulSets' persistentVolumeClaimRetentionPolicy whenDeleted
	// and whenScaled. Retain keeps the data when the cluster is deleted or shrunk.
	// +kubebuilder:default="Retain"
	// +optional
	RetentionPolicy RetentionPolicy `json:"retentionPolicy,omitempty"`

	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storage.coordinators is immutable: it shapes the StatefulSet's volumeClaimTemplates, which Kubernetes cannot change in place. Delete the MemgraphCluster (and its retained PersistentVolumeClaims, if the volumes must change too) and create it again with the new storage"
	// +optional
	Coordinators RoleStorage `json:"coordinators,omitempty"`

	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storage.data is immutable: it shapes the StatefulSet's volumeClaimTemplates, which Kubernetes cannot change in place. Delete the MemgraphCluster (and its retained PersistentVolumeClaims, if the volumes must change too) and create it again with the new storage"
	// +optional
	Data RoleStorage `json:"data,omitempty"`
}

// AccessMode is a PersistentVolumeClaim access mode a Memgraph volume can use.
// +kubebuilder:validation:Enum=ReadWriteOnce;ReadWriteOncePod;ReadWriteMany
type AccessMode string

// RoleStorage is one role's volume claims: lib (/var/lib/memgraph) and log (/var/log/memgraph).
// Every field lands in a volumeClaimTemplate and is therefore immutable after creation.
// +kubebuilder:validation:XValidation:rule="(!has(self.libPVCSize) || isQuantity(string(self.libPVCSize)) && quantity(string(self.libPVCSize)).isGreaterThan(quantity('0'))) && (!has(self.logPVCSize) || isQuantity(string(self.logPVCSize)) && quantity(string(self.logPVCSize)).isGreaterThan(quantity('0')))",message="libPVCSize and logPVCSize must be positive quantities such as 1Gi: Kubernetes refuses a volume claim of zero or negative size"
type RoleStorage struct {
	// +kubebuilder:default="1Gi"
	// +optional
	LibPVCSize resource.Quantity `json:"libPVCSize,omitzero"`

	// +kubebuilder:default="ReadWriteOnce"
	// +optional
	LibStorageAccessMode AccessMode `json:"libStorageAccessMode,omitempty"`

	// LibStorageClassName is the StorageClass of the lib volume; empty uses the cluster's default.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	LibStorageClassName string `json:"libStorageClassName,omitempty"`

	// CreateLogStorageClaim gives /var/log/memgraph its own claim; false puts the logs on an
	// emptyDir that dies with the pod.
	// +kubebuilder:default=true
	// +optional
	CreateLogStorageClaim *bool `json:"createLogStorageClaim,omitempty"`

	// +kubebuilder:default="1Gi"
	// +optional
	LogPVCSize resource.Quantity `json:"logPVCSize,omitzero"`

	// +kubebuilder:default="ReadWriteOnce"
	// +optional
	LogStorageAccessMode AccessMode `json:"logStorageAccessMode,omitempty"`

	// LogStorageClassName is the StorageClass of the log volume; empty uses the cluster's default.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	LogStorageClassName string `json:"logStorageClassName,omitempty"`
}

// ClusterPorts are the ports every member listens on and advertises. Registration is built from
// them, so they must all differ.
// +kubebuilder:validation:XValidation:rule="self.bolt != self.management && self.bolt != self.replication && self.bolt != self.coordinator && self.management != self.replication && self.management != self.coordinator && self.replication != self.coordinator",message="ports.bolt, ports.management, ports.replication and ports.coordinator must all differ: each is a separate listener"
type ClusterPorts struct {
	// +kubebuilder:default=7687
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Bolt int32 `json:"bolt,omitempty"`
	// +kubebuilder:default=10000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Management int32 `json:"management,omitempty"`
	// +kubebuilder:default=20000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Replication int32 `json:"replication,omitempty"`
	// +kubebuilder:default=12000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Coordinator int32 `json:"coordinator,omitempty"`
}

// CoordinatorTemplate tunes the coordinators' pods.
type CoordinatorTemplate struct {
	PodOptions `json:",inline"`

	// +kubebuilder:default={}
	// +optional
	Probes CoordinatorProbes `json:"probes,omitempty"`

	// TerminationGracePeriodSeconds is how long Kubernetes waits, after SIGTERM, before it kills
	// a coordinator. A coordinator writes its Raft log as it commits and flushes nothing on exit,
	// so the chart's 30 s is ample.
	// +kubebuilder:default=30
	// +kubebuilder:validation:XValidation:rule="self >= 1 && self <= 86400",message="terminationGracePeriodSeconds must be from 1 to 86400 (one day): how long Kubernetes waits after SIGTERM before it kills Memgraph; 0 would kill it without a clean shutdown"
	// +optional
	TerminationGracePeriodSeconds int64 `json:"terminationGracePeriodSeconds,omitempty"`
}

// DataTemplate tunes the data instances' pods.
// +kubebuilder:validation:XValidation:rule="!has(self.extraArgs) || self.extraArgs.all(a, !a.matches('^--?(no)?storage[-_]wal[-_]enabled(=|$)'))",message="dataTemplate.extraArgs must not set --storage-wal-enabled: a data instance in a high-availability cluster must run with the WAL enabled, and the hook enables it; remove the flag"
type DataTemplate struct {
	PodOptions `json:",inline"`

	// +kubebuilder:default={}
	// +optional
	Probes DataProbes `json:"probes,omitempty"`

	// TerminationGracePeriodSeconds is how long Kubernetes waits, after SIGTERM, before it kills
	// a data instance. With --storage-snapshot-on-exit=true in extraArgs (the hook runs it false),
	// Memgraph writes a full snapshot of every database before it exits
	// (src/storage/v2/inmemory/storage.cpp:655 at v3.12.0; the flag is
	// src/flags/general.cpp:131), which takes time in proportion to the graph; killed halfway, the
	// exit snapshot is lost and the next start recovers from the older snapshot and the WAL. The
	// default of 300 s leaves five minutes for that; a pod that exits sooner does not wait.
	// +kubebuilder:default=300
	// +kubebuilder:validation:XValidation:rule="self >= 1 && self <= 86400",message="terminationGracePeriodSeconds must be from 1 to 86400 (one day): how long Kubernetes waits after SIGTERM before it kills Memgraph; 0 would kill it without a clean shutdown"
	// +optional
	TerminationGracePeriodSeconds int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// SysctlInitContainer raises the node's vm.max_map_count before Memgraph starts. Off by
	// default: it runs privileged, as root. The default is spelled out in full, not {}, so that
	// the API server can check it against the image-when-enabled rule.
	// +kubebuilder:default={enabled:false,maxMapCount:524288}
	// +optional
	SysctlInitContainer SysctlInitContainer `json:"sysctlInitContainer,omitempty"`
}

// SysctlInitContainer is an init container in every data pod that raises the node's
// vm.max_map_count to maxMapCount when it is lower (it never lowers it). Memgraph maps memory in
// many areas and warns at startup below 524288 (src/memgraph.cpp:97 and 426-435 at v3.12.0); a
// large graph on a node with the kernel's default 65530 can fail to allocate. The setting is
// node-wide and not namespaced, so the container must be privileged and run as root; enable it
// only where the namespace's Pod Security admission allows that, or set the sysctl on the nodes
// instead. The coordinators hold no graph and get no such container.
// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || !self.enabled || has(self.image)",message="sysctlInitContainer.image is required when sysctlInitContainer.enabled is true: the init container runs sysctl from an image you choose, with a shell and sysctl, such as docker.io/library/busybox:1.37.0; set image, or set enabled to false"
type SysctlInitContainer struct {
	// +kubebuilder:default=false
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// MaxMapCount is the least vm.max_map_count the node must have.
	// +kubebuilder:default=524288
	// +kubebuilder:validation:XValidation:rule="self >= 65530 && self <= 2147483647",message="sysctlInitContainer.maxMapCount must be from 65530 (the kernel's default) to 2147483647: the init container only ever raises vm.max_map_count, and Memgraph asks for at least 524288"
	// +optional
	MaxMapCount int64 `json:"maxMapCount,omitempty"`

	// Image runs the init container's /bin/sh and sysctl, e.g. docker.io/library/busybox:1.37.0.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`
}

// PodOptions are the per-role pod settings shared by both roles.
type PodOptions struct {
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitzero"`

	// Labels go on the role's pods, StatefulSet and Services; never into selectors.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="!('app.kubernetes.io/name' in self) && !('app.kubernetes.io/instance' in self) && !('app.kubernetes.io/component' in self) && !('app.kubernetes.io/managed-by' in self)",message="labels must not set app.kubernetes.io/name, app.kubernetes.io/instance, app.kubernetes.io/component or app.kubernetes.io/managed-by: the hook sets them to select the pods; use another key"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// ExtraEnv is appended to the container's environment.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(e, !(e.name in ['POD_NAME', 'MEMGRAPH_ENTERPRISE_LICENSE', 'MEMGRAPH_ORGANIZATION_NAME', 'MEMGRAPH_MANAGEMENT_PORT', 'MEMGRAPH_COORDINATOR_PORT', 'MEMGRAPH_COORDINATOR_ID', 'MEMGRAPH_NURAFT_LOG_FILE', 'MEMGRAPH_COORDINATOR_HOSTNAME', 'MEMGRAPH_BOLT_PORT', 'DGL_DOWNLOAD_DIR', 'DGLDEFAULTDIR', 'MGCONSOLE_HISTORY_PATH']))",message="extraEnv must not set POD_NAME, MEMGRAPH_ENTERPRISE_LICENSE, MEMGRAPH_ORGANIZATION_NAME, MEMGRAPH_MANAGEMENT_PORT, MEMGRAPH_COORDINATOR_PORT, MEMGRAPH_COORDINATOR_ID, MEMGRAPH_NURAFT_LOG_FILE, MEMGRAPH_COORDINATOR_HOSTNAME, MEMGRAPH_BOLT_PORT, DGL_DOWNLOAD_DIR, DGLDEFAULTDIR or MGCONSOLE_HISTORY_PATH: the hook sets them (the license from spec.secrets, identity from the pod, ports from spec.ports); remove the variable"
	// +optional
	ExtraEnv []corev1.EnvVar `json:"extraEnv,omitempty"`

	// ExtraArgs are appended to Memgraph's command line after the hook's own flags, so they
	// override its tuning flags (e.g. --log-level) but may not touch identity or ports.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--?(bolt[-_]port|bolt[-_]address|management[-_]port|coordinator[-_]port|coordinator[-_]id|coordinator[-_]hostname|nuraft[-_]log[-_]file|data[-_]directory|init[-_]file|init[-_]data[-_]file|bolt[-_]cert[-_]file|bolt[-_]key[-_]file|cluster[-_]cert[-_]file|cluster[-_]key[-_]file|cluster[-_]ca[-_]file)(=|$)'))",message="extraArgs must not set --bolt-port, --bolt-address, --management-port, --coordinator-port, --coordinator-id, --coordinator-hostname, --nuraft-log-file, --data-directory, --init-file, --init-data-file, --bolt-cert-file, --bolt-key-file, --cluster-cert-file, --cluster-key-file or --cluster-ca-file: ports come from spec.ports, identity and paths are derived by the hook, TLS comes from spec.tls (so that the hook dials it too and every instance agrees on it), and Memgraph rejects init files in a high-availability cluster; remove the flag"
	// +optional
	ExtraArgs []string `json:"extraArgs,omitempty"`

	// +kubebuilder:validation:MaxProperties=64
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// +kubebuilder:validation:MaxItems=64
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// +kubebuilder:validation:MaxItems=16
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// +kubebuilder:validation:MaxLength=253
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// CoordinatorProbes are the timings of the coordinators' TCP probes on the coordinator port.
type CoordinatorProbes struct {
	// +kubebuilder:default={}
	// +optional
	Readiness ProbeTimings `json:"readiness,omitempty"`
	// +kubebuilder:default={}
	// +optional
	Liveness ProbeTimings `json:"liveness,omitempty"`
	// +kubebuilder:default={}
	// +optional
	Startup ProbeTimings `json:"startup,omitempty"`
}

// DataProbes are the timings of the data instances' TCP probes on the Bolt port. The startup
// probe allows two hours by default, as the chart does: recovering a large snapshot takes time.
type DataProbes struct {
	// +kubebuilder:default={}
	// +optional
	Readiness ProbeTimings `json:"readiness,omitempty"`
	// +kubebuilder:default={}
	// +optional
	Liveness ProbeTimings `json:"liveness,omitempty"`
	// +kubebuilder:default={}
	// +optional
	Startup DataStartupProbeTimings `json:"startup,omitempty"`
}

// ProbeTimings are a probe's timings (the chart's readiness/liveness defaults).
type ProbeTimings struct {
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +optional
	FailureThreshold int32 `json:"failureThreshold,omitempty"`
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +optional
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +optional
	PeriodSeconds int32 `json:"periodSeconds,omitempty"`
}

// DataStartupProbeTimings are the data instances' startup probe timings (1440 x 5 s = 2 h).
type DataStartupProbeTimings struct {
	// +kubebuilder:default=1440
	// +kubebuilder:validation:Minimum=1
	// +optional
	FailureThreshold int32 `json:"failureThreshold,omitempty"`
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +optional
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +optional
	PeriodSeconds int32 `json:"periodSeconds,omitempty"`
}

// Reference is the image as a container names it: repository:tag, or repository@digest when the
// tag is a sha256 digest.
func (i Image) Reference() string {
	if imageDigestRE.MatchString(i.Tag) {
		return i.Repository + "@" + i.Tag
	}
	return i.Repository + ":" + i.Tag
}

// IntraClusterOn reports whether t asks for intra-cluster TLS: t is set and intraCluster is not
// false.
func (t *TLS) IntraClusterOn() bool {
	return t != nil && (t.IntraCluster == nil || *t.IntraCluster)
}

// ClusterSecret is the Secret behind intra-cluster TLS (clusterSecretName, else secretName), ""
// when it is off.
func (t *TLS) ClusterSecret() string {
	switch {
	case !t.IntraClusterOn():
		return ""
	case t.ClusterSecretName != "":
		return t.ClusterSecretName
	}
	return t.SecretName
}

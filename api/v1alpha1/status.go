package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The hook reads back three things of its prior status, and copies them without deciding any
// Bolt step on them: each condition's lastTransitionTime, carried over while the condition's
// status holds (meta.SetStatusCondition); lastOperation, carried over by a pass that writes
// nothing, so that a steady cluster's status never changes; and the replicas' records, carried
// over between two reads of SHOW REPLICAS, each record's since kept while the replica's health
// holds — the one thing a report reads from it is how long a replica has been unhealthy
// (Degraded, ReplicaStuck).

// MemgraphClusterStatus is what the sync hook observed; of a prior status, only a condition's
// lastTransitionTime (while its status holds), lastOperation (while no pass writes) and the
// replicas' records (between reads) are kept. Metacontroller sets observedGeneration itself.
type MemgraphClusterStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Coordinators is the number of coordinators registered in Raft, as observed.
	// +optional
	Coordinators int32 `json:"coordinators,omitempty"`

	// DataInstances is the number of data instances registered, as observed.
	// +optional
	DataInstances int32 `json:"dataInstances,omitempty"`

	// Main is the registered name (instance_<ordinal>) of the data instance that is MAIN.
	// +optional
	Main string `json:"main,omitempty"`

	// Leader is the registered name (coordinator_<id>) of the Raft leader.
	// +optional
	Leader string `json:"leader,omitempty"`

	// Members is "<up>/<declared>": how many of the declared coordinators and data instances are
	// up (pod Ready and, in the leader's SHOW INSTANCES, health up) out of how many are declared,
	// e.g. "4/5". The Degraded condition names the members that are down and why.
	// +optional
	Members string `json:"members,omitempty"`

	// Phase is what the cluster is doing as a whole: Running, Paused (memgraph.com/paused),
	// Hibernating, Hibernated or Waking (spec.hibernate), or Restoring (spec.bootstrap.fromBackup:
	// no data instance is registered before the backup is restored).
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// RestoredFrom names the backup the cluster was restored from (spec.bootstrap.fromBackup):
	// "MemgraphBackup <name>" or the object's s3:// URI. Set once the data instances are
	// registered, which the hook holds until the restore succeeded.
	// +optional
	RestoredFrom string `json:"restoredFrom,omitempty"`

	// Restore is the restore of spec.bootstrap.fromBackup while the data instances wait for it,
	// as the backup agent of the instance restored into reports it; unset once they are
	// registered (RestoredFrom then names the backup).
	// +optional
	Restore *RestoreStatus `json:"restore,omitempty"`

	// LastOperation is what the hook last wrote to the coordinators: the Bolt writes of the most
	// recent pass that wrote anything, their outcome and when. A pass that writes nothing
	// carries it forward unchanged (the one record of the prior status the hook copies).
	// +optional
	LastOperation *Operation `json:"lastOperation,omitempty"`

	// Operations are the last 10 Bolt commands the hook sent, newest first: each command as
	// Memgraph received it (a secret it carries replaced by '<redacted>'), its outcome and when.
	// Each pass adds the commands it sent and carries the older records forward.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	Operations []OperationRecord `json:"operations,omitempty"`

	// Version is the image (repository:tag, or repository@digest) every pod of both roles runs,
	// read from the Pods; empty while they run different images, as in the middle of an upgrade.
	// +optional
	Version string `json:"version,omitempty"`

	// TargetVersion is the image the pods are being rolled to while a rollout is in progress
	// (the Updated condition is not True); empty otherwise.
	// +optional
	TargetVersion string `json:"targetVersion,omitempty"`

	// Pods counts ready and desired pods per role.
	// +optional
	Pods PodCounts `json:"pods,omitzero"`

	// CoordinatorSettings are the declared coordinator settings the leader holds as declared, as
	// last read and set (SHOW COORDINATOR SETTINGS after SET COORDINATOR SETTING); a setting the
	// spec does not declare is not shown. Unset when none is declared or the pass did not read them.
	// +optional
	CoordinatorSettings *CoordinatorSettings `json:"coordinatorSettings,omitempty"`

	// ExternalAccess is each member's address outside the Kubernetes cluster
	// (spec.externalAccess), or what it waits for. Unset without spec.externalAccess.
	// +optional
	ExternalAccess *ExternalAccessStatus `json:"externalAccess,omitempty"`

	// Replicas are the replicas the MAIN's SHOW REPLICAS lists, in ordinal order, with
	// Memgraph's state for each: read at most every 30 s, carried forward in between.
	// +kubebuilder:validation:MaxItems=128
	// +listType=map
	// +listMapKey=name
	// +optional
	Replicas []ReplicaStatus `json:"replicas,omitempty"`

	// Rebuild is the rebuild the memgraph.com/rebuild annotation asks for, as last judged; unset
	// without the annotation. The Rebuild condition says the same in words.
	// +optional
	Rebuild *RebuildStatus `json:"rebuild,omitempty"`

	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Warnings name what the hook ignored in what it was sent: a StatefulSet replica count or a
	// pod ordinal beyond the most members a MemgraphCluster may declare, which no member the hook
	// manages can account for. Sorted, and at most MaxWarnings of them.
	// +listType=atomic
	// +optional
	Warnings []string `json:"warnings,omitempty"`
}

// RestoreStatus is a restore in progress.
type RestoreStatus struct {
	// Source is "MemgraphBackup <name>" or the object's s3:// URI.
	Source string `json:"source"`

	// Instance is the data instance restored into (the one that becomes the first MAIN).
	// +optional
	Instance string `json:"instance,omitempty"`

	// Phase is Pending (the restore waits for something Message names), Downloading (an object
	// streams into Memgraph), Recovering (Memgraph loads it), Completed or Failed.
	// +optional
	Phase string `json:"phase,omitempty"`

	// RestoredBytes of TotalBytes have streamed into Memgraph.
	// +optional
	RestoredBytes int64 `json:"restoredBytes,omitempty"`
	// +optional
	TotalBytes int64 `json:"totalBytes,omitempty"`

	// Databases are the backup's databases, each restored or not yet.
	// +listType=atomic
	// +optional
	Databases []RestoreDatabase `json:"databases,omitempty"`

	// StartedAt is when the agent's restore job started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// Message says what the restore waits for or why it failed, in Memgraph's or the object
	// store's words where one of them refused.
	// +optional
	Message string `json:"message,omitempty"`

	// Note is what a restore does not bring back: users and roles are not in a snapshot.
	// +optional
	Note string `json:"note,omitempty"`
}

// RestoreDatabase is one database of a restore.
type RestoreDatabase struct {
	Name     string `json:"name"`
	Restored bool   `json:"restored"`
}

// MaxWarnings bounds status.warnings; the last one counts those left out.
const MaxWarnings = 10

// PodCounts are the ready and desired pods of each role.
type PodCounts struct {
	Coordinators  RolePods `json:"coordinators"`
	DataInstances RolePods `json:"dataInstances"`
}

// RolePods are one role's ready pods out of the desired ones (the StatefulSet's spec.replicas).
type RolePods struct {
	Ready   int32 `json:"ready"`
	Desired int32 `json:"desired"`
}

// Operation is one pass's Bolt writes, as status.lastOperation reports them.
type Operation struct {
	// Writes are the writes the pass sent, in order, by kind and member, e.g. "DEMOTE
	// instance_2; SET instance_0 TO MAIN; UNREGISTER instance_2".
	Writes string `json:"writes"`
	// Result is Succeeded, Failed (a write was refused or failed: Message is Memgraph's own
	// message) or Interrupted (the leader moved, a failover was still running or the sync budget
	// ran out; the next pass re-observes).
	Result OperationResult `json:"result"`
	// +optional
	Message string `json:"message,omitempty"`
	// Time is when the pass ended.
	Time metav1.Time `json:"time"`
}

// MaxOperations bounds status.operations.
const MaxOperations = 10

// OperationRecord is one Bolt command the hook sent, as status.operations lists it.
type OperationRecord struct {
	// Time is when the command ended.
	Time metav1.Time `json:"time"`
	// Command is the query as Memgraph received it, e.g. "DEMOTE INSTANCE instance_2", with any
	// secret it carries (a password, a license key) replaced by '<redacted>'.
	Command string `json:"command"`
	// Outcome is Succeeded, Failed (Memgraph refused it or it failed: Message is Memgraph's own
	// message) or Interrupted (the leader moved, a failover was still running or the sync budget
	// ran out: the next pass re-observes).
	Outcome OperationResult `json:"outcome"`
	// +optional
	Message string `json:"message,omitempty"`
}

// OperationResult is how a pass's writes ended.
// +kubebuilder:validation:Enum=Succeeded;Failed;Interrupted
type OperationResult string

const (
	OperationSucceeded   OperationResult = "Succeeded"
	OperationFailed      OperationResult = "Failed"
	OperationInterrupted OperationResult = "Interrupted"
)

// Phase is status.phase.
// +kubebuilder:validation:Enum=Running;Paused;Hibernating;Hibernated;Waking;Restoring
type Phase string

const (
	// PhaseRunning: the hook reconciles the cluster as declared.
	PhaseRunning Phase = "Running"
	// PhasePaused: memgraph.com/paused is set; the hook changes nothing.
	PhasePaused Phase = "Paused"
	// PhaseHibernating: spec.hibernate is set and pods are still stopping.
	PhaseHibernating Phase = "Hibernating"
	// PhaseHibernated: no pod of the cluster runs; volumes and registrations are kept.
	PhaseHibernated Phase = "Hibernated"
	// PhaseWaking: spec.hibernate was cleared; the MAIN and the coordinators come back before
	// the replicas.
	PhaseWaking Phase = "Waking"
	// PhaseRestoring: spec.bootstrap.fromBackup is set and the data instances wait, unregistered,
	// for the backup to be restored into the instance that becomes MAIN.
	PhaseRestoring Phase = "Restoring"
)

// ConditionType names a condition of MemgraphClusterStatus.
type ConditionType string

// The conditions the hook reports.
const (
	// ConditionReady: a MAIN is elected and the leader answers.
	ConditionReady ConditionType = "Ready"
	// ConditionConverged: every declared member is registered, nothing is retiring, and the
	// StatefulSets are at the declared size.
	ConditionConverged ConditionType = "Converged"
	// ConditionPaused: the memgraph.com/paused annotation is set, so the hook returns every child
	// as observed and sends no Bolt write.
	ConditionPaused ConditionType = "Paused"
	// ConditionHibernated: spec.hibernate is set and no pod of the cluster is left.
	ConditionHibernated ConditionType = "Hibernated"
	// ConditionUpdated: every pod runs its StatefulSet's current pod template (no rollout is
	// in progress).
	ConditionUpdated ConditionType = "Updated"
	// ConditionDegraded: a declared member is down (its pod not Ready, or its health down in the
	// leader's SHOW INSTANCES); the message names each one and why. The cluster may still serve
	// writes: Ready says whether it does.
	ConditionDegraded ConditionType = "Degraded"
	// ConditionCoordinatorSettings: the leader holds every setting spec.coordinatorSettings
	// declares. Present only when the spec declares one.
	ConditionCoordinatorSettings ConditionType = "CoordinatorSettings"
	// ConditionAutomaticFailover: present (False) only when the spec leaves the coordinators no
	// failover candidate for some MAIN (reason AutomaticFailoverGap).
	ConditionAutomaticFailover ConditionType = "AutomaticFailover"
	// ConditionHighlyAvailable: no single node's loss would take the cluster down, judged from
	// the pods' spec.nodeName (docs/operations.md, "Placement").
	ConditionHighlyAvailable ConditionType = "HighlyAvailable"
	// ConditionExternalAccess: every member's Service has an address clients outside the
	// Kubernetes cluster can use, and the coordinators give routing clients exactly those
	// addresses. Present only when spec.externalAccess is set.
	ConditionExternalAccess ConditionType = "ExternalAccess"
)

// The reasons of ExternalAccess.
const (
	// ReasonAddressesAdvertised (True): every member's bolt_server in the leader's SHOW INSTANCES
	// is its external address.
	ReasonAddressesAdvertised ConditionReason = "AddressesAdvertised"
	// ReasonAddressPending (False): a member's Service has no address yet (no load balancer
	// ingress, no node port, its pod not scheduled, its node not seen), or the coordinators do not
	// give clients the assigned address yet; the message names each member and what it waits for.
	ReasonAddressPending ConditionReason = "AddressPending"
	// ReasonAddressUnusable (False): Kubernetes assigned an address Memgraph cannot advertise — a
	// load balancer with IPv6 addresses alone (a bolt_server is host:port with one colon), a node
	// without any address, a hostname longer than DNS allows; the message names each member and
	// the remedy. Such a member stays advertised at its in-cluster name.
	ReasonAddressUnusable ConditionReason = "AddressUnusable"
	// ReasonHostnameTemplateInvalid (False): spec.externalAccess.hostnameTemplate breaks a rule of
	// the CRD (it was stored without it): the hook ignores it and advertises the Services'
	// addresses; the message is the rule's.
	ReasonHostnameTemplateInvalid ConditionReason = "HostnameTemplateInvalid"
)

// The reasons of HighlyAvailable.
const (
	// ReasonSpreadAcrossNodes (True): no node holds half the coordinators or more, nor the MAIN
	// together with every Sync and StrictSync replica.
	ReasonSpreadAcrossNodes ConditionReason = "SpreadAcrossNodes"
	// ReasonSingleNodeRisk (False): one node's loss would take the Raft majority (it holds at
	// least half the coordinators) or every synchronous copy of the data (the MAIN together with
	// every Sync and StrictSync replica); the message names each such node and what it holds.
	ReasonSingleNodeRisk ConditionReason = "SingleNodeRisk"
	// ReasonPodsNotScheduled (Unknown): no pod of the cluster is scheduled on a node yet (or, while
	// it hibernates, any more).
	ReasonPodsNotScheduled ConditionReason = "PodsNotScheduled"
)

// The reasons of CoordinatorSettings and AutomaticFailover.
const (
	// ReasonSettingsApplied: the leader holds every declared coordinator setting.
	ReasonSettingsApplied ConditionReason = "SettingsApplied"
	// ReasonSettingRefused: Memgraph refused a SET COORDINATOR SETTING; the message is the query
	// and Memgraph's own message.
	ReasonSettingRefused ConditionReason = "SettingRefused"
	// ReasonSettingsPending: the settings were not read or not all set in this pass (the cluster
	// is not converged yet, the read failed, or the budget ran out); the message says which.
	ReasonSettingsPending ConditionReason = "SettingsPending"
	// ReasonSettingWithheld: the spec declares a setting Memgraph takes but cannot run with (it
	// was stored without the CRD's rule against it), which the hook never sends; the message
	// names the field and why.
	ReasonSettingWithheld ConditionReason = "SettingWithheld"
	// ReasonAutomaticFailoverGap: with sync_failover_only true, fewer than two data instances are
	// Sync or StrictSync, so a MAIN that fails may never be replaced automatically.
	ReasonAutomaticFailoverGap ConditionReason = "AutomaticFailoverGap"
)

// ConditionReason is the stable, machine-readable reason of a condition.
type ConditionReason string

// The reasons of Ready and Converged (docs/operations.md, "Status", says when each is given).
const (
	ReasonWorkloadsNotReady            ConditionReason = "WorkloadsNotReady"
	ReasonCoordinatorUnreachable       ConditionReason = "CoordinatorUnreachable"
	ReasonNoCoordinatorLeader          ConditionReason = "NoCoordinatorLeader"
	ReasonRegistrationInProgress       ConditionReason = "RegistrationInProgress"
	ReasonRegistrationFailed           ConditionReason = "RegistrationFailed"
	ReasonAllInstancesRegistered       ConditionReason = "AllInstancesRegistered"
	ReasonMainElected                  ConditionReason = "MainElected"
	ReasonNoMainElected                ConditionReason = "NoMainElected"
	ReasonRetirementInProgress         ConditionReason = "RetirementInProgress"
	ReasonLeadershipTransferInProgress ConditionReason = "LeadershipTransferInProgress"
	ReasonNoCaughtUpSurvivor           ConditionReason = "NoCaughtUpSurvivor"
	ReasonTLSConfigInvalid             ConditionReason = "TLSConfigInvalid"
	ReasonCoordinatorHalfJoined        ConditionReason = "CoordinatorHalfJoined"
	ReasonFailoverInProgress           ConditionReason = "FailoverInProgress"
	// ReasonSwitchoverPending (Converged): spec.preferredMain is not MAIN yet, and not up or
	// not caught up enough to take it over; the message says how far behind it is.
	ReasonSwitchoverPending ConditionReason = "SwitchoverPending"
	// ReasonMainDown (Ready): the MAIN's pod is not Ready, or the leader reports the MAIN's
	// health down; writes fail until it is back or a failover elects another MAIN.
	ReasonMainDown ConditionReason = "MainDown"
	// ReasonSecretMissing: a Secret the spec names (spec.secrets.name, spec.tls.secretName,
	// spec.auth.secretName) does not exist in the cluster's namespace; the message names each
	// one and the field that names it. Pods that mount it cannot start.
	ReasonSecretMissing ConditionReason = "SecretMissing"
	// ReasonDrainPending (Converged): a node that runs the MAIN or the Raft leader is cordoned
	// and the drain waits on the hook; the message names the node and what the hook does or
	// awaits, or says why it cannot help (e.g. no replica runs on a schedulable node).
	ReasonDrainPending ConditionReason = "DrainPending"
	// ReasonDisruptionBudgetMoving (Converged): the MAIN's PodDisruptionBudget moved to the MAIN's
	// pod in this sync and the data PodDisruptionBudget follows in the next (the two change one per
	// sync, so no replica is ever under both); the message names the pods.
	ReasonDisruptionBudgetMoving ConditionReason = "DisruptionBudgetMoving"
)

// ReasonTLSCertificateMismatch (Converged): the intra-cluster TLS Secret cannot serve every
// member: missing, malformed, a tls.crt that does not verify against its ca.crt as a server and as
// a client, or whose names do not cover a member's FQDN the hook registers. The message says
// which; the hook goes on with everything else.
const ReasonTLSCertificateMismatch ConditionReason = "TLSCertificateMismatch"

// ReasonCertificateRotating (Converged): some instances serve another certificate than the
// spec.tls Secret's tls.crt. The hook reloads them one at a time (RELOAD … TLS, each proven by a
// new handshake), waits for the kubelet to project the files, or — when an instance refused the
// reload — restarts the pods through the rollout. The message says which instances and which.
const ReasonCertificateRotating ConditionReason = "CertificateRotating"

// The reasons of Degraded.
const (
	// ReasonMembersDown: at least one declared member is down; the message names each one and
	// why (its pod's waiting reason and message, Unschedulable, not Ready, or health down).
	ReasonMembersDown ConditionReason = "MembersDown"
	// ReasonAllMembersUp: every declared member is up.
	ReasonAllMembersUp ConditionReason = "AllMembersUp"
)

// The reasons of Paused and Hibernated; Converged (and Ready, when nothing runs) give them too.
const (
	ReasonPaused      ConditionReason = "Paused"
	ReasonReconciling ConditionReason = "Reconciling"
	// ReasonHibernationPending: spec.hibernate is set, but a coordinator scale-down is still
	// retiring members; the pods stop once it is done.
	ReasonHibernationPending ConditionReason = "HibernationPending"
	ReasonHibernating        ConditionReason = "Hibernating"
	ReasonHibernated         ConditionReason = "Hibernated"
	ReasonWaking             ConditionReason = "Waking"
	ReasonAwake              ConditionReason = "Awake"
)

// The reasons of Updated; Converged gives the last three too while a rollout is not done.
const (
	// ReasonUpToDate: every pod runs its StatefulSet's current pod template.
	ReasonUpToDate ConditionReason = "UpToDate"
	// ReasonRolloutInProgress: pods are being replaced one at a time; the message names the pod,
	// how many are done and the next step.
	ReasonRolloutInProgress ConditionReason = "RolloutInProgress"
	// ReasonWaitingForMaintenanceWindow: the pods' template differs from their StatefulSet's only
	// by what a release of the hook changed, and no window of spec.maintenanceWindows is open;
	// every pod keeps running, and the message names the next window's start.
	ReasonWaitingForMaintenanceWindow ConditionReason = "WaitingForMaintenanceWindow"
	// ReasonRolloutBlocked: the next pod cannot be released safely (e.g. it runs the MAIN and no
	// survivor is caught up to take it over); nothing is released until that changes.
	ReasonRolloutBlocked ConditionReason = "RolloutBlocked"
	// ReasonRolloutStuck: a replaced pod is not Ready (or not back in the cluster, or not caught
	// up) spec.rollout.stepTimeout after it was created; the rollout stops where it is.
	ReasonRolloutStuck ConditionReason = "RolloutStuck"
	// ReasonDowngradeRefused: the spec's image is an older Memgraph version than a pod runs.
	// Memgraph's snapshots and WAL may not load in an older version, and a newer MAIN cannot
	// replicate to an older replica, so no pod is replaced until the MemgraphCluster carries
	// AnnotationAllowDowngrade "true" (or the spec asks for the running version again).
	ReasonDowngradeRefused ConditionReason = "DowngradeRefused"
	// ReasonDowngradeNeedsHibernation: a downgrade AnnotationAllowDowngrade allows, while the
	// MAIN runs a newer version than the spec's: replicas rolled to the older version could not
	// replicate from it, so no pod is replaced until the cluster hibernates and wakes at the
	// spec's version, all pods together.
	ReasonDowngradeNeedsHibernation ConditionReason = "DowngradeNeedsHibernation"
	// ReasonUpgradeNeedsMigration: the change crosses Memgraph 3.9, across which every
	// coordinator's data must be wiped (Memgraph's "migrating to v3.9 HA" procedure); it is never
	// rolled.
	ReasonUpgradeNeedsMigration ConditionReason = "UpgradeNeedsMigration"
	// ReasonIntraClusterTLSNeedsHibernation: the spec turns intra-cluster TLS on or off while
	// pods run the other way. A Memgraph instance with intra-cluster TLS and one without cannot
	// talk (replication, management and Raft are mutual TLS on one side only), so no pod is
	// replaced: the change takes effect when the cluster hibernates and wakes (spec.hibernate).
	ReasonIntraClusterTLSNeedsHibernation ConditionReason = "IntraClusterTLSNeedsHibernation"
)

// Equal reports whether r and o record the same command at the same time with the same outcome.
func (r OperationRecord) Equal(o OperationRecord) bool {
	return r.Time.Equal(&o.Time) && r.Command == o.Command && r.Outcome == o.Outcome && r.Message == o.Message
}

package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReplicaHealth tunes how the hook judges the replicas the MAIN reports in SHOW REPLICAS.
type ReplicaHealth struct {
	// StuckAfter is how long a replica that is up may stay in Memgraph's "recovery" or "invalid"
	// state, without being "ready" or "replicating" in between, before the Degraded condition
	// reports it (reason ReplicaStuck). A replica recovering from the MAIN's snapshot takes as
	// long as the data takes to copy and load: raise it for large data sets. A "diverged" replica
	// is reported at once.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(h|m|s))+$') && duration(self) >= duration('1m') && duration(self) <= duration('168h')",message="replicaHealth.stuckAfter must be a duration from 1m to 168h written in hours, minutes and seconds, such as 10m, 90s or 1h30m: how long a replica may stay in recovery or invalid before Degraded reports it ReplicaStuck"
	// +optional
	StuckAfter string `json:"stuckAfter,omitempty"`
}

// StuckAfterDuration is spec.replicaHealth.stuckAfter; the default's when it is unset or (in a spec that
// skipped admission) invalid.
func (h ReplicaHealth) StuckAfterDuration() time.Duration {
	if d, ok := stepTimeoutSeconds(h.StuckAfter); ok {
		return time.Duration(d) * time.Second
	}
	d, _ := stepTimeoutSeconds(DefaultStuckAfter)
	return time.Duration(d) * time.Second
}

// ReplicaStatus is one replica as its MAIN's SHOW REPLICAS last reported it.
type ReplicaStatus struct {
	// Name is the replica's registered name, instance_<n>.
	Name string `json:"name"`
	// SyncMode is how the MAIN replicates to it, in Memgraph's words: sync, async or strict_sync.
	// +optional
	SyncMode string `json:"syncMode,omitempty"`
	// State is Memgraph's data_info status of the replica, the worst of its databases': ready
	// (it holds everything the MAIN committed), replicating (a transaction is on its way),
	// recovery (the MAIN is sending it snapshot and WAL files), invalid (the MAIN could not reach
	// it or its last replication failed; it checks again) or diverged (its history branched off
	// the MAIN's; Memgraph 3.12 under coordinators recovers such a replica with a force reset
	// instead, reporting recovery). Empty when the MAIN listed no database for it.
	// +optional
	State string `json:"state,omitempty"`
	// Database is the database whose status State is, when the replica's databases differ.
	// +optional
	Database string `json:"database,omitempty"`
	// Since is when the replica was first seen in State's health — healthy (ready, replicating)
	// or not (recovery, invalid, diverged) — without a read of the other in between.
	Since metav1.Time `json:"since"`
}

// ReplicaStateHealthy reports whether a replica in Memgraph state is replicating normally: ready or
// replicating.
func ReplicaStateHealthy(state string) bool { return state == "ready" || state == "replicating" }

// RebuildStatus is the rebuild AnnotationRebuild asks for, as the hook last judged it.
type RebuildStatus struct {
	// Instance is the annotation's value: the data instance to rebuild.
	Instance string `json:"instance"`
	// Phase is Unregistering (the hook unregisters it now), Waiting (it cannot yet: the message
	// of the Rebuild condition says why), Refused (it never will: the MAIN, or no declared data
	// instance) or Held (it is unregistered, and stays so while the annotation stands: replace
	// its volume, then remove the annotation).
	Phase RebuildPhase `json:"phase"`
}

// RebuildPhase is status.rebuild.phase.
// +kubebuilder:validation:Enum=Unregistering;Waiting;Refused;Held
type RebuildPhase string

const (
	RebuildUnregistering RebuildPhase = "Unregistering"
	RebuildWaiting       RebuildPhase = "Waiting"
	RebuildRefused       RebuildPhase = "Refused"
	RebuildHeld          RebuildPhase = "Held"
)

// ConditionRebuild: present only while AnnotationRebuild stands; True once the instance is
// unregistered and held (reason RebuildHeld), else False with RebuildUnregistering,
// RebuildWaiting or RebuildRefused and the message saying why.
const ConditionRebuild ConditionType = "Rebuild"

// The reasons of Rebuild, one per RebuildPhase, and of Converged while a rebuild stands.
const (
	ReasonRebuildUnregistering ConditionReason = "RebuildUnregistering"
	ReasonRebuildWaiting       ConditionReason = "RebuildWaiting"
	ReasonRebuildRefused       ConditionReason = "RebuildRefused"
	ReasonRebuildHeld          ConditionReason = "RebuildHeld"
	// ReasonRebuildInProgress (Converged): AnnotationRebuild stands; the message is the Rebuild
	// condition's.
	ReasonRebuildInProgress ConditionReason = "RebuildInProgress"
)

// The reasons of Degraded besides MembersDown and AllMembersUp.
const (
	// ReasonReplicaDiverged: the MAIN reports a replica "diverged"; the message names it, its
	// database and how to rebuild it.
	ReasonReplicaDiverged ConditionReason = "ReplicaDiverged"
	// ReasonReplicaStuck: a replica that is up has been in "recovery" or "invalid" for
	// spec.replicaHealth.stuckAfter or longer; the message names it, Memgraph's state and since
	// when.
	ReasonReplicaStuck ConditionReason = "ReplicaStuck"
)

// RebuildPhaseReason is the Rebuild condition's reason for a phase.
func RebuildPhaseReason(p RebuildPhase) ConditionReason {
	switch p {
	case RebuildUnregistering:
		return ReasonRebuildUnregistering
	case RebuildRefused:
		return ReasonRebuildRefused
	case RebuildHeld:
		return ReasonRebuildHeld
	}
	return ReasonRebuildWaiting
}

package topology

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The hook reads back one thing of its prior status: each condition's lastTransitionTime, carried
// over while the condition's status holds (meta.SetStatusCondition), so that a steady cluster's
// status never changes. Nothing else of it is ever an input to a decision.

// MemgraphClusterStatus is what the sync hook observed; of a prior status, only a condition's
// lastTransitionTime is kept while its status holds. Metacontroller sets observedGeneration
// itself.
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

// ConditionType names a condition of MemgraphClusterStatus.
type ConditionType string

// The conditions the hook reports.
const (
	// ConditionReady: a MAIN is elected and the leader answers.
	ConditionReady ConditionType = "Ready"
	// ConditionConverged: every declared member is registered, nothing is retiring, and the
	// StatefulSets are at the declared size.
	ConditionConverged ConditionType = "Converged"
	// ConditionUpdated: every pod runs its StatefulSet's current pod template (no rollout is
	// in progress).
	ConditionUpdated ConditionType = "Updated"
)

// ConditionReason is the stable, machine-readable reason of a condition.
type ConditionReason string

// The reasons of Ready and Converged (README.md, "Status", says when each is given).
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
)

// The reasons of Updated; Converged gives the last three too while a rollout is not done.
const (
	// ReasonUpToDate: every pod runs its StatefulSet's current pod template.
	ReasonUpToDate ConditionReason = "UpToDate"
	// ReasonRolloutInProgress: pods are being replaced one at a time; the message names the pod,
	// how many are done and the next step.
	ReasonRolloutInProgress ConditionReason = "RolloutInProgress"
	// ReasonRolloutBlocked: the next pod cannot be released safely (e.g. it runs the MAIN and no
	// survivor is caught up to take it over); nothing is released until that changes.
	ReasonRolloutBlocked ConditionReason = "RolloutBlocked"
	// ReasonRolloutStuck: a replaced pod is not Ready (or not back in the cluster, or not caught
	// up) spec.rollout.stepTimeout after it was created; the rollout stops where it is.
	ReasonRolloutStuck ConditionReason = "RolloutStuck"
)

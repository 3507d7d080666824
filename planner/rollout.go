package planner

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Rolling upgrades. Any change to a role's pod template — a new image, resources, probes,
// extraArgs, the memgraph.com/restartedAt annotation, a template edit by a human, a rollback —
// gives its StatefulSet a new status.updateRevision, and every pod whose controller-revision-hash
// label differs is replaced. The hook never deletes a pod: it owns each StatefulSet's
// rollingUpdate.partition, below which the StatefulSet controller replaces nothing, and lowers
// it by one pod per step once the cluster is proven able to lose that pod.
//
// Invariants (PlanRollout):
//
//   - One pod of the cluster per step: data instances first, then coordinators, each from the
//     highest index down (the only order a partition allows). The next pod is released only
//     when every pod above it in its role is Ready at the new revision and back in the cluster
//     (registered and up in the leader's view; a data replica also caught up on every database
//     of the MAIN), every declared pod of both roles is Ready, every declared member is up, and
//     the cluster has a MAIN (no step of either role while the plan is electing one).
//   - The MAIN's pod is released only after MAIN was handed over (the same lag-gated Handover
//     as a retirement), preferring a survivor already at the new revision, so MAIN moves once
//     (twice when it starts on the highest ordinal: then no pod is at the new revision yet); no
//     caught-up survivor blocks the rollout (RolloutBlocked). A single data
//     instance has no survivor and is replaced in place. The leader's pod is released only
//     after YIELD LEADERSHIP, and Raft picks the successor.
//   - A pod that is not Ready and not at the new revision is released without the Memgraph
//     gates (it is down already: a rollback of a pod stuck at a broken revision must reach it),
//     unless it is the MAIN or the leader, or its row reports itself so (a view may show two
//     while an election or a failover settles), or a pod above it still waits (podWait).
//   - Stateless: the partition follows from the pods alone. A released pod that is gone or
//     terminating stays released (the partition is one above the highest live pod not at the
//     new revision), so a pod is never recreated at the old revision halfway through. The prior
//     status and the observed partition are never inputs; a MAIN or leader moved by anyone is
//     where the next step starts from, never moved back.
//   - Hold everything (the partition at the number of pods that exist, or at the returned
//     replicas when that is lower) when the revision the StatefulSet reports does not describe
//     the template this sync returns: the template changes in this very sync (the pod-template
//     hash differs), or the controller has not yet observed the generation the template arrived
//     with (AnnotationTemplateGeneration; a change of replicas or partition alone bumps the
//     generation too, but leaves the revision as it is). New members of a growth then start at
//     the new revision, existing ones wait.
//   - Scaling composes: while a role is retiring members (its StatefulSet is above the declared
//     count) its partition is the returned replica count, so no retiring pod is ever released,
//     and nothing in the cluster is released until the scale-down is done.
//   - Older replicas of a newer MAIN (a failover mid-upgrade put MAIN on an updated pod) are
//     released together, without the gates: they receive nothing from it (rollout_oldermain.go).
//   - Stuck detection has no memory either: a pod at the new revision that still fails its gate
//     spec.rollout.stepTimeout after its own creationTimestamp makes the condition RolloutStuck;
//     nothing further is released until it recovers or the spec changes.

// RolloutPod is one of a role's pods as the sync request shows it.
type RolloutPod struct {
	Index       int         // ordinal minus the StatefulSet's first ordinal
	Revision    string      // its controller-revision-hash label
	Ready       bool        // condition Ready is True
	Terminating bool        // metadata.deletionTimestamp is set
	Created     metav1.Time // metadata.creationTimestamp
	Image       string      // the memgraph container's image
	Node        string      // spec.nodeName, "" while unscheduled
	// ClusterTLS: the memgraph container runs with intra-cluster TLS (topology.ArgClusterCertFile).
	ClusterTLS bool
}

// RolloutSet is one role's StatefulSet as the sync request shows it.
type RolloutSet struct {
	Exists             bool
	UpdateRevision     string // status.updateRevision
	CurrentRevision    string // status.currentRevision
	Generation         int64  // metadata.generation
	ObservedGeneration int64  // status.observedGeneration
	// TemplateGeneration is the set's AnnotationTemplateGeneration: the generation with which
	// its pod template arrived (0 when unknown).
	TemplateGeneration int64
	// Span is the number of pods the set has or had: the larger of spec.replicas,
	// status.replicas and one past the highest pod index.
	Span int32
	// TemplateChanging: the children this sync returns change the set's pod template (the
	// pod-template hash differs from the observed one), so UpdateRevision is about to be stale.
	TemplateChanging bool
	// Provenance is where the set's pod template comes from (NextTemplateRecord): a rollout that
	// is a hook release's change alone rolls only when Maintenance.MayRoll.
	Provenance TemplateProvenance
	Pods       []RolloutPod
}

// Workloads is what a sync knows about the pods besides the cluster's own view: both
// StatefulSets with their pods, the time of the sync, spec.rollout.stepTimeout and the image the
// spec asks for.
type Workloads struct {
	Coordinators, Data RolloutSet
	Now                metav1.Time     // when the sync runs (the hook's clock; the planner reads none)
	StepTimeout        metav1.Duration // spec.rollout.stepTimeout
	Image              string
	// AllowDowngrade: the MemgraphCluster carries memgraph.com/allow-downgrade "true".
	AllowDowngrade bool
	// CordonedNodes are the cordoned Nodes (NodeCordoned): a handover avoids a replica on one,
	// which a drain is about to evict.
	CordonedNodes map[string]bool
	// ClusterTLS: the spec asks for intra-cluster TLS (topology.Cluster.IntraClusterTLS).
	ClusterTLS bool
	// Maintenance is what spec.maintenanceWindows say now (MaintenanceAt).
	Maintenance Maintenance
	// SpecGeneration is the MemgraphCluster's metadata.generation, which the StatefulSets record.
	SpecGeneration int64
}

// RolloutInput is everything PlanRollout looks at.
type RolloutInput struct {
	Declared topology.Declared
	Replicas topology.Replicas // the replica counts this sync returns
	Workloads
	// Cluster is the leader's view (with Lag when RolloutNeedsCatchUpReads said so); nil when this sync
	// could not observe the cluster. Without it no pod is released.
	Cluster *Observed
	// rows is Cluster indexed, when Decide has indexed it already.
	rows *rowIndex
}

// RolloutStep is one sync's part of a rollout.
type RolloutStep struct {
	Partitions topology.Partitions
	// TemplateGenerations are the AnnotationTemplateGeneration values to return: the generation
	// each set's pod template arrived with, or arrives with in this sync's update.
	TemplateGenerations topology.TemplateGenerations
	// Records are the records to return on the StatefulSets (NextTemplateRecord), coordinators
	// first.
	Records [2]topology.TemplateRecord
	// Handover moves MAIN off the data instance whose pod is next; a later sync releases the
	// pod once the MAIN has moved.
	Handover *Handover
	// Yield: the leader's pod is next; YIELD LEADERSHIP first, a later sync releases it.
	Yield bool
	// Reason (v1alpha1.ReasonUpToDate, …) and Message of the Updated condition.
	Reason  v1alpha1.ConditionReason
	Message string
	// Version is the image every live pod runs ("" while they differ); TargetVersion the
	// spec's image while the rollout is not done.
	Version       string
	TargetVersion string
	// VersionWarning names the images whose Memgraph version is unknown, to which no version rule
	// applies (status.warnings), or "".
	VersionWarning string
}

// Commands are the Bolt steps the rollout needs this sync: at most one, and when there is one
// no pod is released in the same sync.
func (s RolloutStep) Commands() []Command {
	switch {
	case s.Handover != nil:
		return []Command{*s.Handover}
	case s.Yield:
		return []Command{YieldLeadership{}}
	}
	return nil
}

// Done reports a finished (or never started) rollout.
func (s RolloutStep) Done() bool { return s.Reason == v1alpha1.ReasonUpToDate }

// InProgress reports a rollout that is not done and not waiting for a maintenance window; the
// zero step (none planned) is not one.
func (s RolloutStep) InProgress() bool { return s.Reason != "" && !s.Done() && !s.WaitsForWindow() }

// WaitsForWindow reports a hook release's template change that waits for a maintenance window:
// nothing rolls, by design, so the cluster is not in the middle of anything.
func (s RolloutStep) WaitsForWindow() bool {
	return s.Reason == v1alpha1.ReasonWaitingForMaintenanceWindow
}

// PlanRollout decides the partitions of both StatefulSets and the step the rollout takes. See
// the invariants above.
func PlanRollout(in RolloutInput) RolloutStep {
	step, _ := planRollout(in)
	return step
}

// planRollout is PlanRollout and RolloutNeedsCatchUpReads of one input, on one reading of it.
func planRollout(in RolloutInput) (RolloutStep, bool) {
	p := newRolloutPlan(in)
	needsLag := p.needsLag()
	step := RolloutStep{
		Partitions: topology.Partitions{
			Coordinators:  p.coordinators.restingPartition(),
			DataInstances: p.data.restingPartition(),
		},
		TemplateGenerations: topology.TemplateGenerations{
			Coordinators:  p.coordinators.templateGeneration(),
			DataInstances: p.data.templateGeneration(),
		},
		Records: [2]topology.TemplateRecord{p.coordinators.record, p.data.record},
	}
	p.decide(&step)
	p.releaseOlderThanMain(&step)
	step.Version = p.version()
	step.VersionWarning = versionWarning(in.Workloads)
	if !step.Done() {
		step.TargetVersion = in.Image
	}
	return step, needsLag
}

// RolloutNeedsCatchUpReads reports whether PlanRollout needs SHOW REPLICATION LAG in Cluster.Lag: when
// the data instances are rolling, to prove the replaced replicas caught up and to choose whom to
// hand MAIN to.
func RolloutNeedsCatchUpReads(in RolloutInput) bool {
	return newRolloutPlan(in).needsLag()
}

func (p *rolloutPlan) needsLag() bool {
	return p.active() == &p.data && p.data.state() == roleRolling && (!p.retiring() || p.rollsThroughRetirement()) &&
		p.refused() == nil
}

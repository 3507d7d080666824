package planner

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// What a pass's outcome implies besides its verdict: the rollout step it reports, the members'
// health, the pod the MAIN's budget protects, the certificate record it leaves.

// PassRollout is the rollout step a pass reports: the one a stage planned (a rollout planned on
// the leader's table while pods are down, or hibernation's), else the plan's, else one planned on
// the StatefulSets alone (unviewed, at the replica counts the pass returns) when no plan stood on
// a view of the cluster.
func PassRollout(out Outcome, unviewed RolloutInput) RolloutStep {
	switch {
	case out.Rollout.Reason != "":
		return out.Rollout
	case out.Plan.Rollout.Reason != "":
		return out.Plan.Rollout
	}
	unviewed.Replicas = out.Replicas
	return PlanRollout(unviewed)
}

// Health is each declared member's health: its pod (Ready, or why it cannot start) and, when
// the pass read a ready leader's table, its registration and health there.
func (out Outcome) Health() MemberHealth {
	in := HealthInput{Declared: out.Declared, PodReady: out.PodReady, Problems: out.Problems}
	if _, leadership := ReadLeadership(out.Latest.Instances); leadership == LeaderReady {
		in.Instances = out.Latest.Instances
	}
	return ReadMemberHealth(in)
}

// Placement is where the declared members run, and the MAIN when the pass read one: the input
// of HighlyAvailable and SingleNodeRisks.
func (out Outcome) Placement() PlacementInput {
	in := PlacementInput{Declared: out.Declared, PodNodes: out.PodNodes}
	if out.Latest.Leader != "" {
		in.Main = out.Progress.Main
	}
	return in
}

// MainBudgetPod is the pod the MAIN's PodDisruptionBudget protects: the MAIN's when the pass read
// who is MAIN (after its steps, so the pass that hands MAIN over moves the budget), else observed
// (the pod the observed budget protects) while it is still a declared data pod — a pass that
// cannot read the cluster (pods not Ready while a drain evicts replicas, a leader election)
// never releases the MAIN. "" when neither is known.
func MainBudgetPod(out Outcome, observed string) string {
	if out.Latest.Leader != "" && out.Progress.Main != "" {
		if pod, ok := out.Declared.DataPod(out.Progress.Main); ok {
			return pod
		}
	}
	for _, di := range out.Declared.DataInstances {
		if di.Pod == observed {
			return di.Pod
		}
	}
	return ""
}

// BudgetsSettled reports whether the data PodDisruptionBudgets are where the MAIN keeps them:
// the observed MAIN's budget selects the pod MainBudgetPod protects, so the data budget the pass
// renders leaves that pod out and the next pass renders both as they are. Until then each pass
// moves one of the two (topology.RenderMainBudget), and the cluster is not converged.
func (out Outcome) BudgetsSettled() bool {
	return MainBudgetPod(out, out.MainBudgetHeld) == out.MainBudgetHeld
}

// budgetMove says which write of the budgets' move this pass made and which the next one makes.
func (out Outcome) budgetMove() string {
	held, main := out.MainBudgetHeld, MainBudgetPod(out, out.MainBudgetHeld)
	switch {
	case held == "":
		return fmt.Sprintf("the MAIN's PodDisruptionBudget now protects %s, the MAIN's pod; the data PodDisruptionBudget "+
			"leaves it out on the next sync (the budgets change one per sync, so no replica is ever under both)", main)
	case main == "":
		return fmt.Sprintf("the MAIN's PodDisruptionBudget protected %s, no longer a declared data pod, and is removed; the data "+
			"PodDisruptionBudget selects every data pod on the next sync", held)
	}
	return fmt.Sprintf("MAIN moved from pod %s to %s: the MAIN's PodDisruptionBudget now protects %s; the data PodDisruptionBudget "+
		"selects %s again and leaves %s out on the next sync (the budgets change one per sync, so no replica is ever under both)",
		held, main, main, held, main)
}

// NextCertificateRecord is the certificate rotation's record the StatefulSets carry after the
// pass (topology.NextCertificateRecord): the restart the rotation stage chose, the content it
// recorded as reloaded, on the observed record and the spec.tls Secret's stamp.
func NextCertificateRecord(observed topology.CertificateRecord, stamp string, out Outcome, now time.Time) topology.CertificateRecord {
	restart := ""
	if out.Rotation.Action == RotationRestart {
		restart = out.Rotation.Stamp
	}
	return topology.NextCertificateRecord(observed, stamp, restart, out.Rotation.Record, now)
}

// ClusterSummary is what a pass observed of its cluster, as the per-cluster gauges show it.
type ClusterSummary struct {
	MainPresent     bool // the leader's SHOW INSTANCES names a MAIN that serves writes
	LeaderPresent   bool // a ready leader answered
	MembersUp       int
	MembersDeclared int
	// RolloutStep is the pod a rollout in progress replaces, counted from 1 (pods updated + 1);
	// 0 when no rollout is in progress.
	RolloutStep int
	// SingleNodeRisk: one node's loss would take the cluster down (HighlyAvailable is False).
	SingleNodeRisk bool
}

// Summarize is what the pass observed of its cluster: the MAIN and the leader as Ready judges
// them (ServesWrites on the latest table a ready leader answered), the members' health, the
// rollout's step on w, and whether one node's loss would take it down (HighlyAvailable).
func Summarize(out Outcome, health MemberHealth, w *Workloads) ClusterSummary {
	s := ClusterSummary{MembersUp: health.Up, MembersDeclared: health.Declared,
		SingleNodeRisk: HighlyAvailable(out.Placement()).Status == metav1.ConditionFalse}
	if _, leadership := ReadLeadership(out.Latest.Instances); leadership == LeaderReady {
		s.LeaderPresent = true
		s.MainPresent = ServesWrites(out.Declared, out.Latest.Instances, out.PodReady).Status == metav1.ConditionTrue
	}
	if out.Rollout.InProgress() && w != nil {
		s.RolloutStep = updatedPods(w.Coordinators) + updatedPods(w.Data) + 1
	}
	return s
}

// updatedPods counts the set's pods that run its update revision and are not being deleted.
func updatedPods(s RolloutSet) int {
	n := 0
	for _, p := range s.Pods {
		if s.UpdateRevision != "" && p.Revision == s.UpdateRevision && !p.Terminating {
			n++
		}
	}
	return n
}

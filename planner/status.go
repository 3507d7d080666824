package planner

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// StatusInput is what a MemgraphCluster's status is built from: the admitted cluster (its prior
// conditions and its spec's warnings), the pass's outcome and its verdicts, the evidence the
// pass ignored (topology.Warnings.Render), the status.lastOperation and status.operations the
// shell keeps, and the time a changed condition is stamped with.
type StatusInput struct {
	Cluster       *topology.Cluster
	Outcome       Outcome
	Verdicts      Verdicts
	Ignored       []string
	LastOperation *v1alpha1.Operation
	Operations    []v1alpha1.OperationRecord
	Now           time.Time
}

// Status is the cluster's status after a pass: observation only, the same for the same input.
// Metacontroller adds observedGeneration itself.
func Status(in StatusInput) v1alpha1.MemgraphClusterStatus {
	c, out, v := in.Cluster, in.Outcome, in.Verdicts
	coordinatorPods, dataPods := out.Declared.PodNames()
	health := out.Health()
	problems := ReplicaProblems(out.ReplicaRecords, health.Down, c.ReplicaStuckAfter(), in.Now)
	st := v1alpha1.MemgraphClusterStatus{
		Pods: v1alpha1.PodCounts{
			Coordinators:  v1alpha1.RolePods{Ready: readyCount(out.PodReady, coordinatorPods), Desired: int32(len(coordinatorPods))},
			DataInstances: v1alpha1.RolePods{Ready: readyCount(out.PodReady, dataPods), Desired: int32(len(dataPods))},
		},
		CoordinatorSettings: out.Settings.Applied(),
		ExternalAccess:      out.Declared.External.Status(),
		Members:             health.Members(),
		Phase:               v.Phase,
		LastOperation:       in.LastOperation,
		Operations:          in.Operations,
		Warnings:            in.Ignored,
		Version:             out.Rollout.Version,
		TargetVersion:       out.Rollout.TargetVersion,
	}
	conditions := append(make([]typedCondition, 0, 10), []typedCondition{
		{v1alpha1.ConditionReady, v.Ready},
		{v1alpha1.ConditionDegraded, Degraded(DegradedInput{Health: health, Problems: problems, Phase: v.Phase, Cluster: c.Name()})},
		{v1alpha1.ConditionConverged, v.Converged},
		{v1alpha1.ConditionUpdated, v.Updated},
		{v1alpha1.ConditionPaused, v.Paused},
		{v1alpha1.ConditionHibernated, v.Hibernated},
		{v1alpha1.ConditionHighlyAvailable, HighlyAvailable(out.Placement())},
	}...)
	if cond, ok := SettingsCondition(out.Declared, out.Settings); ok {
		conditions = append(conditions, typedCondition{v1alpha1.ConditionCoordinatorSettings, cond})
	}
	if cond, ok := FailoverGapCondition(out.Declared); ok {
		conditions = append(conditions, typedCondition{v1alpha1.ConditionAutomaticFailover, cond})
	}
	if cond, ok := ExternalAccessCondition(out.Declared, out.Latest); ok {
		conditions = append(conditions, typedCondition{v1alpha1.ConditionExternalAccess, cond})
	}
	if r := out.Rebuild(); r.Declared() {
		st.Rebuild = &v1alpha1.RebuildStatus{Instance: r.Instance, Phase: r.Phase}
		conditions = append(conditions, typedCondition{v1alpha1.ConditionRebuild, RebuildCondition(r)})
	}
	st.Replicas = out.ReplicaRecords
	st.Conditions = make([]metav1.Condition, 0, len(conditions))
	for _, cond := range conditions {
		st.Conditions = append(st.Conditions, RenderCondition(c.PriorConditions(), cond.typ, cond.c, c.Generation(), in.Now))
	}
	_, paused := c.Paused()
	_, downgrade := c.AllowDowngrade()
	for _, warning := range append([]string{paused, downgrade, out.Rollout.VersionWarning}, c.Warnings()...) {
		if warning != "" {
			st.Warnings = append(st.Warnings, warning)
		}
	}
	restoreStatus(c, out, &st)
	if out.Latest.Leader != "" {
		st.Leader, st.Main = out.Latest.Leader, out.Progress.Main
		st.Coordinators, st.DataInstances = RegisteredCounts(out.Latest.Instances)
	}
	return st
}

type typedCondition struct {
	typ v1alpha1.ConditionType
	c   Condition
}

// RenderCondition renders one condition. The only thing read back from the prior status is its
// lastTransitionTime, which meta.SetStatusCondition carries over while the status is unchanged,
// so a steady cluster's status never changes (each status write would trigger another sync).
func RenderCondition(previous []metav1.Condition, typ v1alpha1.ConditionType, c Condition, generation int64, now time.Time) metav1.Condition {
	var conds []metav1.Condition
	if old := meta.FindStatusCondition(previous, string(typ)); old != nil && !old.LastTransitionTime.IsZero() {
		conds = append(conds, *old)
	}
	meta.SetStatusCondition(&conds, metav1.Condition{
		Type:               string(typ),
		Status:             c.Status,
		Reason:             string(c.Reason),
		Message:            c.Message,
		ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now.UTC().Truncate(time.Second)),
	})
	return conds[0]
}

// restoreStatus sets status.phase Restoring while the restore holds registration, with the
// restore's progress (status.restore) when the pass read it, and status.restoredFrom once data
// instances are registered, from the leader's latest view.
func restoreStatus(c *topology.Cluster, out Outcome, st *v1alpha1.MemgraphClusterStatus) {
	from, latest := c.FromBackup(), out.Latest
	if from == nil || latest.Leader == "" || st.Phase != v1alpha1.PhaseRunning {
		return
	}
	if Restoring(latest.Instances) {
		st.Phase, st.Restore = v1alpha1.PhaseRestoring, out.Restore
		return
	}
	st.RestoredFrom = c.RestoreLabel()
}

// RegisteredCounts counts the registered members of each role a table lists.
func RegisteredCounts(rows []memgraph.Instance) (coordinators, data int32) {
	for _, r := range rows {
		switch {
		case !r.Registered():
		case r.IsCoordinator():
			coordinators++
		default:
			data++
		}
	}
	return coordinators, data
}

func readyCount(ready map[string]bool, pods []string) int32 {
	var n int32
	for _, p := range pods {
		if ready[p] {
			n++
		}
	}
	return n
}

package hooks

import (
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// render builds the response from the pass's outcome alone, appended to dst: the desired children at
// the replica counts the outcome permits, and the status the verdict (planner.Verdict) and the
// observations give, with op as status.lastOperation and ops as status.operations. It is pure; now stamps a condition whose
// status changed.
func render(dst []byte, p *admittedParent, obs *observation, out planner.Outcome, op *topology.Operation, ops []topology.OperationRecord, now time.Time) ([]byte, planner.Verdicts, error) {
	v := planner.Verdict(out)
	children, err := desiredChildren(p, obs, out, now)
	if err != nil {
		return nil, v, err
	}
	st := status(p.cluster, obs, out, v, op, now)
	st.Operations = ops
	resp := &syncResponse{Status: st, Children: children, ResyncAfterSeconds: v.ResyncAfterSeconds}
	if out.DryRun {
		resp.Plan = make([]string, 0, len(out.Plan.Commands))
		for _, cmd := range append(out.Plan.Commands[:len(out.Plan.Commands):len(out.Plan.Commands)], out.Settings.Step.Commands...) {
			resp.Plan = append(resp.Plan, cmd.String())
		}
	}
	raw, err := resp.appendTo(dst)
	return raw, v, err
}

// desiredChildren are the children a pass returns, as a JSON array: every observed one frozen
// while paused, else the cluster's at the replica counts the outcome permits, shaped for
// hibernation and with the MAIN's budget once the MAIN is known (mainBudgetPod; rendered once
// per distinct input, admittedParent.children).
func desiredChildren(p *admittedParent, obs *observation, out planner.Outcome, now time.Time) ([]byte, error) {
	if out.Paused {
		return json.Marshal(obs.frozen)
	}
	children, err := renderedChildren(p, obs, out, now)
	if err != nil {
		return nil, err
	}
	return withAgentSecret(children, p.cluster, obs.agentSecret)
}

// renderedChildren are the cluster's children from topology (cached per distinct input).
func renderedChildren(p *admittedParent, obs *observation, out planner.Outcome, now time.Time) ([]byte, error) {
	r := rendering{replicas: out.Replicas, partitions: out.Rollout.Partitions, generations: out.Rollout.TemplateGenerations,
		mainPod: mainBudgetPod(out, obs), restart: obs.certificateRecord().Restart, record: certificateRecord(obs, out, now)}
	if w := out.Hibernation.Window; w != nil {
		r.window, r.windowed = *w, true
	}
	return p.children(r)
}

// certificateRecord is the certificate rotation's record the StatefulSets carry after this pass
// (topology.NextCertificateRecord): the restart the rotation stage chose, the content it recorded
// as reloaded.
func certificateRecord(obs *observation, out planner.Outcome, now time.Time) topology.CertificateRecord {
	restart := ""
	if out.Rotation.Action == planner.RotationRestart {
		restart = out.Rotation.Stamp
	}
	return topology.NextCertificateRecord(obs.certificateRecord(), obs.tls.stamp, restart, out.Rotation.Record, now)
}

// status is pure observation of this pass. Metacontroller adds observedGeneration itself.
func status(c *topology.Cluster, obs *observation, out planner.Outcome, v planner.Verdicts, op *topology.Operation, now time.Time) topology.MemgraphClusterStatus {
	coordinatorPods, dataPods := podNames(out.Declared)
	health := memberHealth(out)
	st := topology.MemgraphClusterStatus{
		Pods: topology.PodCounts{
			Coordinators:  topology.RolePods{Ready: obs.readyCount(coordinatorPods), Desired: int32(len(coordinatorPods))},
			DataInstances: topology.RolePods{Ready: obs.readyCount(dataPods), Desired: int32(len(dataPods))},
		},
		Conditions: []metav1.Condition{
			condition(c.PriorConditions(), topology.ConditionReady, v.Ready, c.Generation(), now),
			condition(c.PriorConditions(), topology.ConditionDegraded, health.DegradedIn(v.Phase), c.Generation(), now),
			condition(c.PriorConditions(), topology.ConditionConverged, v.Converged, c.Generation(), now),
			condition(c.PriorConditions(), topology.ConditionUpdated, v.Updated, c.Generation(), now),
			condition(c.PriorConditions(), topology.ConditionPaused, v.Paused, c.Generation(), now),
			condition(c.PriorConditions(), topology.ConditionHibernated, v.Hibernated, c.Generation(), now),
		},
		CoordinatorSettings: out.Settings.Applied(),
		Members:             health.Members(),
		Phase:               v.Phase,
		LastOperation:       op,
		Warnings:            obs.ignored.render(),
		Version:             out.Rollout.Version,
		TargetVersion:       out.Rollout.TargetVersion,
	}
	if cond, ok := planner.SettingsCondition(out.Declared, out.Settings); ok {
		st.Conditions = append(st.Conditions, condition(c.PriorConditions(), topology.ConditionCoordinatorSettings, cond, c.Generation(), now))
	}
	if cond, ok := planner.FailoverGapCondition(out.Declared); ok {
		st.Conditions = append(st.Conditions, condition(c.PriorConditions(), topology.ConditionAutomaticFailover, cond, c.Generation(), now))
	}
	for _, warning := range []string{pausedWarning(c), downgradeWarning(c), out.Rollout.VersionWarning} {
		if warning != "" {
			st.Warnings = append(st.Warnings, warning)
		}
	}
	restoreStatus(c, out.Latest, &st)
	if out.Latest.Leader != "" {
		st.Leader, st.Main = out.Latest.Leader, out.Progress.Main
		st.Coordinators, st.DataInstances = registeredCounts(out.Latest.Instances)
	}
	return st
}

// memberHealth is each declared member's health: its pod (Ready, or why it cannot start) and,
// when the pass read a ready leader's table, its registration and health there.
func memberHealth(out planner.Outcome) planner.MemberHealth {
	in := planner.HealthInput{Declared: out.Declared, PodReady: out.PodReady, Problems: out.Problems}
	if _, leadership := planner.ReadLeadership(out.Latest.Instances); leadership == planner.LeaderReady {
		in.Instances = out.Latest.Instances
	}
	return planner.ReadMemberHealth(in)
}

func pausedWarning(c *topology.Cluster) string {
	_, warning := c.Paused()
	return warning
}

func downgradeWarning(c *topology.Cluster) string {
	_, warning := c.AllowDowngrade()
	return warning
}

// condition renders one condition. The only thing read back from the prior status is its
// lastTransitionTime, which meta.SetStatusCondition carries over while the status is unchanged,
// so a steady cluster's status never changes (each status write would trigger another sync).
func condition(previous []metav1.Condition, typ topology.ConditionType, c planner.Condition, generation int64, now time.Time) metav1.Condition {
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

// registeredCounts counts the registered members of each role a table lists.
func registeredCounts(rows []memgraph.Instance) (coordinators, data int32) {
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

func podNames(d topology.Declared) (coordinators, data []string) {
	for _, c := range d.Coordinators {
		coordinators = append(coordinators, c.Pod)
	}
	for _, di := range d.DataInstances {
		data = append(data, di.Pod)
	}
	return coordinators, data
}

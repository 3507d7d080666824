package hooks

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// render builds the response from the pass's outcome alone: the desired children at the
// replica counts the outcome permits, and the status the verdict (planner.Verdict) and the
// observations give. It is pure; now stamps a condition whose status changed.
func render(c *topology.Cluster, work workloads, out planner.Outcome, now time.Time) (*syncResponse, planner.Verdicts, error) {
	v := planner.Verdict(out)
	children, err := topology.DesiredChildren(c, out.Replicas, out.Rollout.Partitions, out.Rollout.TemplateGenerations)
	if err != nil {
		return nil, v, err
	}
	statusMap, err := toMap(status(c, work, out, v, now))
	if err != nil {
		return nil, v, err
	}
	resp := &syncResponse{Status: statusMap, Children: children, ResyncAfterSeconds: v.ResyncAfterSeconds}
	if out.DryRun {
		resp.Plan = make([]string, 0, len(out.Plan.Commands))
		for _, cmd := range out.Plan.Commands {
			resp.Plan = append(resp.Plan, cmd.String())
		}
	}
	return resp, v, nil
}

// status is pure observation of this pass. Metacontroller adds observedGeneration itself.
func status(c *topology.Cluster, work workloads, out planner.Outcome, v planner.Verdicts, now time.Time) topology.MemgraphClusterStatus {
	coordinatorPods, dataPods := podNames(out.Declared)
	st := topology.MemgraphClusterStatus{
		Pods: topology.PodCounts{
			Coordinators:  topology.RolePods{Ready: work.readyCount(coordinatorPods), Desired: int32(len(coordinatorPods))},
			DataInstances: topology.RolePods{Ready: work.readyCount(dataPods), Desired: int32(len(dataPods))},
		},
		Conditions: []metav1.Condition{
			condition(c.PriorConditions(), topology.ConditionReady, v.Ready, c.Generation(), now),
			condition(c.PriorConditions(), topology.ConditionConverged, v.Converged, c.Generation(), now),
			condition(c.PriorConditions(), topology.ConditionUpdated, v.Updated, c.Generation(), now),
		},
		Warnings:      work.ignored.render(),
		Version:       out.Rollout.Version,
		TargetVersion: out.Rollout.TargetVersion,
	}
	if out.Latest.Leader != "" {
		st.Leader, st.Main = out.Latest.Leader, out.Now.Main
		st.Coordinators, st.DataInstances = registeredCounts(out.Latest.Instances)
	}
	return st
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

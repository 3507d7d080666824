package hooks

import (
	"encoding/json"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// status is pure observation of this pass. Metacontroller adds observedGeneration itself.
func (p *pass) status(now time.Time, ready, converged verdict) topology.MemgraphClusterStatus {
	coordinatorPods, dataPods := podNames(p.declared)
	st := topology.MemgraphClusterStatus{
		Pods: topology.PodCounts{
			Coordinators:  topology.RolePods{Ready: p.work.readyCount(coordinatorPods), Desired: int32(len(coordinatorPods))},
			DataInstances: topology.RolePods{Ready: p.work.readyCount(dataPods), Desired: int32(len(dataPods))},
		},
		Conditions: conditions(p.cluster.Status.Conditions, p.cluster.Generation, now, ready, converged),
		Warnings:   p.work.ignored.render(),
	}
	if p.final.leader != "" {
		st.Leader = p.final.leader
		st.Main = mainName(p.final.instances)
		st.Coordinators, st.DataInstances = registeredCounts(p.final.instances)
	}
	return st
}

// toMap converts a typed value to the generic JSON form of the response.
func toMap(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(raw, &out)
}

package planner

import (
	"cmp"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Result is one pass's plan.
type Result struct {
	Commands []Command         // in execution order; empty when converged
	Replicas topology.Replicas // the replica counts the hook may return this pass
	Progress Progress
}

// Plan diffs the declared topology against the leader's view. Order: ADD COORDINATOR…,
// REGISTER INSTANCE…, SET INSTANCE TO MAIN (only when provably none), the MAIN handover,
// UNREGISTER INSTANCE…, REMOVE COORDINATOR…, YIELD LEADERSHIP. See the package doc for why.
//
// An observation of a leader that is not ready (LeaderNotReady) plans nothing and holds the
// StatefulSets: it is no evidence about any instance.
func Plan(d topology.Declared, o Observed) Result {
	if leaderNotReady(o) {
		return Result{Replicas: Hold(d, o.Current), Progress: Progress{Leader: o.Leader, LeaderNotReady: true}}
	}
	v := index(o)
	m := observeMain(v)
	r := retiringMembers(d, v)
	p := Progress{
		Leader:                o.Leader,
		Main:                  m.name,
		RetiringCoordinators:  topology.Names(r.coordinators),
		RetiringDataInstances: topology.Names(r.data),
	}
	var cmds []Command
	cmds = append(cmds, planCoordinatorRegistration(d, v, &p)...)
	cmds = append(cmds, planDataRegistration(d, v, &p)...)
	cmds = append(cmds, planPromotion(d, v, m, r.data, &p)...)
	cmds = append(cmds, planDataRetirement(d, v, m, r.data, &p)...)
	cmds = append(cmds, planCoordinatorRetirement(v, r.coordinators, &p)...)
	return Result{Commands: cmds, Replicas: permittedReplicas(d, o.Current, r), Progress: p}
}

// NeedsReplicationLag reports whether Plan needs SHOW REPLICATION LAG for this observation:
// only when the observed MAIN is a retiring instance, i.e. a handover is due. The hook then
// fetches it and plans again with Observed.Lag set.
func NeedsReplicationLag(d topology.Declared, o Observed) bool {
	if leaderNotReady(o) {
		return false
	}
	v := index(o)
	m := observeMain(v)
	_, retires := topology.Find(retiringMembers(d, v).data, m.name)
	return m.name != "" && retires
}

// compareMemberNames orders instance_<n> and coordinator_<id> by number, anything else after
// them by name, so name lists read in ordinal order (instance_2 before instance_10).
func compareMemberNames(a, b string) int {
	na, oka := memberNumber(a)
	nb, okb := memberNumber(b)
	switch {
	case oka && okb:
		return cmp.Or(cmp.Compare(na, nb), strings.Compare(a, b))
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

func memberNumber(name string) (int, bool) {
	if n, ok := topology.ParseDataInstanceName(name); ok {
		return n, true
	}
	return topology.ParseCoordinatorName(name)
}

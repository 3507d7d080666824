package planner

import (
	"cmp"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Plan is one pass's plan.
type Plan struct {
	Commands []Command         // in execution order; empty when converged
	Replicas topology.Replicas // the replica counts the hook may return this pass
	Progress Progress
	// Rollout is the rollout's step on this observation (the partitions, and its handover or
	// yield, which end Commands); zero when Observed.Workloads is nil.
	Rollout RolloutStep
	// NeedsCatchUpReads is NeedsCatchUpReads(d, o) of the observation planned on.
	NeedsCatchUpReads bool
}

// Decide diffs the declared topology against the leader's view. Order: ADD COORDINATOR…,
// REGISTER INSTANCE…, UPDATE CONFIG…, SET INSTANCE TO MAIN (only when provably none), the MAIN
// handover, UNREGISTER INSTANCE… (retiring instances, then a rebuild's), REMOVE COORDINATOR…,
// YIELD LEADERSHIP. See the package doc for why.
//
// An observation of a leader that is not ready (LeaderNotReady) plans nothing and holds the
// StatefulSets: it is no evidence about any instance.
func Decide(d topology.Declared, o Observed) Plan {
	if leaderNotReady(o) {
		r := Plan{Replicas: Hold(d, o.Span), Progress: Progress{Leader: o.Leader, LeaderNotReady: true}}
		if o.Workloads != nil {
			// No evidence about any instance: the rollout releases nothing either.
			r.Rollout = PlanRollout(RolloutInput{Declared: d, Replicas: r.Replicas, Workloads: *o.Workloads})
		}
		return r
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
	cmds = append(cmds, planDataRegistration(d, v, m, &p)...)
	cmds = append(cmds, planAdvertisement(d, v, &p)...)
	cmds = append(cmds, planPromotion(d, v, m, r.data, &p)...)
	cmds = append(cmds, planDataRetirement(d, v, m, r.data, o.Workloads, &p)...)
	cmds = append(cmds, planRebuild(d, v, m, &p)...)
	cmds = append(cmds, planCoordinatorRetirement(v, r.coordinators, &p)...)
	res := Plan{Commands: cmds, Replicas: permittedReplicas(d, o.Span, r), Progress: p}
	res.NeedsCatchUpReads = mainNeedsCatchUp(d, m, r) || registrationNeedsProof(d, v, m) || rebuildNeedsProof(d, v, m)
	if o.Workloads != nil {
		// Its gates need every declared member registered and up, a MAIN and nothing retiring,
		// so besides a switchover it only ever adds a step to an otherwise empty plan. One MAIN
		// handover per pass: a switchover planned here goes first, and the rollout's step waits
		// for the next pass, which plans again from where MAIN is then.
		in := rolloutInput(d, o, res.Replicas)
		in.rows = &v
		var rolloutReads bool
		res.Rollout, rolloutReads = planRollout(in)
		res.NeedsCatchUpReads = res.NeedsCatchUpReads || rolloutReads
		if p.HandoverFrom != "" {
			res.Rollout.Handover, res.Rollout.Yield = nil, false
		}
		res.Commands = append(res.Commands, res.Rollout.Commands()...)
	}
	return res
}

func rolloutInput(d topology.Declared, o Observed, returned topology.Replicas) RolloutInput {
	return RolloutInput{Declared: d, Replicas: returned, Workloads: *o.Workloads, Cluster: &o}
}

// NeedsCatchUpReads reports whether Decide needs SHOW REPLICATION LAG and the MAIN's SHOW REPLICAS
// for this observation: when the observed MAIN is a retiring instance or not the preferred MAIN
// (a handover may be due), when the data instances are rolling (a replaced replica must be
// proven caught up, and MAIN may be handed over), or when a data instance is to be registered
// beside a MAIN (which must be proven alive first). The hook then reads them and plans again with
// Observed.Lag and Observed.Replicas set.
func NeedsCatchUpReads(d topology.Declared, o Observed) bool {
	if leaderNotReady(o) {
		return false
	}
	v := index(o)
	r := retiringMembers(d, v)
	m := observeMain(v)
	return mainNeedsCatchUp(d, m, r) || registrationNeedsProof(d, v, m) || rebuildNeedsProof(d, v, m) ||
		o.Workloads != nil && RolloutNeedsCatchUpReads(rolloutInput(d, o, permittedReplicas(d, o.Span, r)))
}

// registrationNeedsProof: a declared data instance is not registered while a MAIN row exists,
// which must be proven alive first (planDataRegistration). One held for a rebuild is not to be
// registered.
func registrationNeedsProof(d topology.Declared, v rowIndex, m mainState) bool {
	if m.name == "" {
		return false
	}
	for _, di := range d.DataInstances {
		if !v.dataRegistered(di.Name) && !rebuildHolds(d, di.Name) {
			return true
		}
	}
	return false
}

// mainNeedsCatchUp: the MAIN retires or a switchover is due, either of which hands MAIN over to a
// replica proven caught up.
func mainNeedsCatchUp(d topology.Declared, m mainState, r retiring) bool {
	_, retires := topology.Find(r.data, m.name)
	return m.name != "" && retires || switchoverDue(d, m)
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

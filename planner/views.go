package planner

import (
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// How a pass reads the cluster: which coordinator's answer is the view (discovery), the
// leader's own table, and the catch-up proofs.

// discover asks the coordinators of order (DiscoveryOrder, or a part of it, in its order) out
// of total for SHOW INSTANCES until Discover has chosen the view to plan on, every one was
// asked, or the budget ran out. Each gets a fair share of the budget left. The answers of a
// part never look like those of a cluster whose every coordinator is fresh, so a part never
// bootstraps one.
func (p *pass) discover(order []topology.Coordinator, total int) (Discovery, flow) {
	answers := make([]Answer, 0, len(order))
	var disc Discovery
	for i, c := range order {
		if p.expired {
			break
		}
		got, ok := p.read(Read{What: ReadInstances, From: c.BoltServer, Share: len(order) - i})
		if !ok {
			return disc, waiting
		}
		answers = append(answers, Answer{Coordinator: c, Instances: got.Rows, Err: got.Err})
		if disc = Discover(answers, total); disc.Found() {
			break
		}
	}
	return disc, goOn
}

// leaderView is a view taken on the leader itself, where writes are executed: v when it already
// is, otherwise SHOW INSTANCES on the leader v names (LeaderOf), which must name itself.
func (p *pass) leaderView(v View) (View, flow, error) {
	if v.FromLeader() {
		return v, goOn, nil
	}
	leader, err := LeaderOf(p.d, v)
	if err != nil {
		return View{}, goOn, err
	}
	got, ok := p.read(Read{What: ReadInstances, From: leader.BoltServer})
	if !ok {
		return View{}, waiting, nil
	}
	if got.Err != nil {
		return View{}, goOn, fmt.Errorf("leader %s: %w", v.Leader, got.Err)
	}
	lv := NewView(leader, got.Rows)
	if err := CheckLeaderView(v.Leader, lv); err != nil {
		return View{}, goOn, err
	}
	return lv, goOn, nil
}

// readyLeaderView is the leader's own table when the leader is ready; ok is false when it could
// not be read or the leader is not ready (its table is no evidence).
func (p *pass) readyLeaderView(found View) (lv View, ok bool, f flow) {
	lv, f, err := p.leaderView(found)
	if f == waiting || err != nil {
		return View{}, false, f
	}
	_, leadership := ReadLeadership(lv.Instances)
	return lv, leadership == LeaderReady, goOn
}

// readWhileWaiting reads the cluster while declared pods are not Ready, for the status alone:
// discovery among the Ready coordinators, then the leader's own table. It writes nothing (writes
// wait for every declared pod). The view is zero when no coordinator pod is Ready, or no ready
// leader answered.
func (p *pass) readWhileWaiting() (View, Progress, flow) {
	var ready []topology.Coordinator
	order := DiscoveryOrder(p.d)
	for _, c := range order {
		if p.in.PodReady[c.Pod] {
			ready = append(ready, c)
		}
	}
	if len(ready) == 0 {
		return View{}, Progress{}, goOn
	}
	disc, f := p.discover(ready, len(order))
	if f == waiting || !disc.Found() {
		return View{}, Progress{}, f
	}
	lv, ok, f := p.readyLeaderView(disc.View)
	if !ok {
		return View{}, Progress{}, f
	}
	return lv, p.progressOn(lv), goOn
}

// reread is the leader's table after the steps, to report what the cluster looks like after
// them (the handover's proof when it was the last write). After a yield the old leader may name
// no leader yet, and after a FORCE RESET it may not be ready yet (its table says nothing about
// the instances): then ok is false and the view before the steps stands.
func (p *pass) reread(leader topology.Coordinator) (View, bool, flow) {
	got, ok := p.read(Read{What: ReadInstances, From: leader.BoltServer})
	if !ok {
		return View{}, false, waiting
	}
	if got.Err != nil {
		return View{}, false, goOn
	}
	_, leadership := ReadLeadership(got.Rows)
	return NewView(leader, got.Rows), leadership == LeaderReady, goOn
}

// catchUp reads the catch-up proofs of a handover on the leader lv: SHOW REPLICATION LAG there
// and the MAIN's SHOW REPLICAS, into o.
func (p *pass) catchUp(lv View, o *Observed) (flow, error) {
	got, ok := p.read(Read{What: ReadLag, From: lv.Coordinator.BoltServer})
	if !ok {
		return waiting, nil
	}
	if got.Err != nil {
		return goOn, got.Err
	}
	o.Lag = got.Lag
	if o.Replicas, ok = p.mainReplicas(lv.Instances); !ok {
		return waiting, nil
	}
	return goOn, nil
}

package planner

import (
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// retiring holds the members of each role's retiring range that are still registered.
type retiring struct {
	coordinators []topology.Coordinator  // ascending id
	data         []topology.DataInstance // ascending ordinal
}

// retiringMembers is the registered part of each role's retiring range. The range is
// [declared, current) as topology.Declare computed it, widened by every registered member that
// carries exactly our identity for an ordinal at or above the declared count: its pod can only
// belong to our StatefulSet, so the StatefulSet is (or was) that large, whatever a stale cache
// says. "Exactly our identity" is the endpoint no other registration can share — the
// coordinator_server of a coordinator, the management_server of a data instance — so an
// instance a human registered under a look-alike name but another address stays untouched.
func retiringMembers(d topology.Declared, v view) retiring {
	var r retiring
	for _, c := range d.RetiringCoordinators {
		if v.coordinatorMember(c.Name) {
			r.coordinators = append(r.coordinators, c)
		}
	}
	firstCoordinator := topology.FirstCoordinatorID + len(d.Coordinators)
	for name, row := range v.coordinators {
		id, ok := topology.ParseCoordinatorName(name)
		if !ok || id < firstCoordinator || containsCoordinator(d.RetiringCoordinators, name) {
			continue
		}
		if c := d.Network.Coordinator(id); row.CoordinatorServer == c.CoordinatorServer {
			r.coordinators = append(r.coordinators, c)
		}
	}
	for _, di := range d.RetiringDataInstances {
		if v.dataRegistered(di.Name) {
			r.data = append(r.data, di)
		}
	}
	firstData := topology.FirstDataOrdinal + len(d.DataInstances)
	for name, row := range v.data {
		n, ok := topology.ParseDataInstanceName(name)
		if !ok || n < firstData || containsData(d.RetiringDataInstances, name) {
			continue
		}
		if di := d.Network.DataInstance(n); row.ManagementServer == di.ManagementServer {
			r.data = append(r.data, di)
		}
	}
	slices.SortFunc(r.coordinators, func(a, b topology.Coordinator) int { return a.ID - b.ID })
	slices.SortFunc(r.data, func(a, b topology.DataInstance) int { return a.Ordinal - b.Ordinal })
	return r
}

// planDataRetirement hands MAIN off a retiring instance when one is MAIN, then unregisters the
// retiring instances. It never unregisters a MAIN: the retiring MAIN only after a Handover
// planned just before (the hook stops at a failed command, so the UNREGISTER never runs unless
// the handover landed), and while no row reports a MAIN, none (a dead one may be the MAIN Raft
// records; a live one may be the MAIN an interrupted handover demoted).
func planDataRetirement(d topology.Declared, v view, m mainState, members []topology.DataInstance, p *Progress) []Command {
	var cmds []Command
	handedOver := false
	if m.name != "" && containsData(members, m.name) {
		candidates, why := caughtUpSurvivors(d, v, m.name)
		if len(candidates) == 0 {
			p.NoCaughtUpSurvivor = why
		} else {
			cmds = append(cmds, Handover{From: m.name, To: candidates[0]})
			p.HandoverFrom, p.HandoverTo = m.name, candidates[0]
			handedOver = true
		}
	}
	for _, di := range members {
		switch {
		case di.Name == m.name && !handedOver:
			continue
		case m.name == "":
			// No MAIN: a retiring replica may be the MAIN a handover demoted before the pass
			// that ran it was killed, holding every acknowledged write; keep it registered until
			// a MAIN exists again.
			p.RetiringMaybeMain = append(p.RetiringMaybeMain, di.Name)
			continue
		case di.Name != m.name && v.data[di.Name].Role == memgraph.RoleMain:
			// A second row reporting main: Raft has one MAIN, so the view is inconsistent, and
			// Memgraph refuses to unregister an alive MAIN. Keep it until a view settles.
			p.RetiringMaybeMain = append(p.RetiringMaybeMain, di.Name)
			continue
		}
		cmds = append(cmds, UnregisterInstance{Name: di.Name})
	}
	return cmds
}

// planCoordinatorRetirement removes every retiring coordinator that is neither the leader nor
// half-joined, then, when the leader we are connected to is retiring, yields leadership as the
// plan's last command: Raft chooses the successor, so nothing after it could be planned. A
// retiring leader that was never ADDed (a half-joined member that won an election) first ADDs
// itself — the one way its application log gets the entry — so that a later pass can remove it.
func planCoordinatorRetirement(v view, members []topology.Coordinator, p *Progress) []Command {
	var cmds, addSelf []Command
	yield := false
	for _, c := range members {
		switch {
		case c.Name == v.leader:
			if !v.coordinatorRegistered(c.Name) {
				addSelf = append(addSelf, AddCoordinator{ID: c.ID, Config: coordinatorConfig(c)})
			}
			yield = true
		case v.halfJoined[c.Name]:
			// REMOVE COORDINATOR of a member missing from the leader's application log ends the
			// leader process (memgraph-ha.md §11.1).
			p.HalfJoined = append(p.HalfJoined, c.Name)
		case v.leaders[c.Name]:
			// Reported as leader by its row but not the one we are connected to: the view is
			// mid-election. Never aim REMOVE at a leader; the next pass sees a settled view.
		case len(v.leaders) == 0:
			p.LeaderUnknown = true
		default:
			cmds = append(cmds, RemoveCoordinator{ID: c.ID})
		}
	}
	if yield {
		cmds = append(append(cmds, addSelf...), YieldLeadership{})
		p.YieldPending = true
	}
	return cmds
}

func containsCoordinator(cs []topology.Coordinator, name string) bool {
	return slices.ContainsFunc(cs, func(c topology.Coordinator) bool { return c.Name == name })
}

func containsData(ds []topology.DataInstance, name string) bool {
	return slices.ContainsFunc(ds, func(di topology.DataInstance) bool { return di.Name == name })
}

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
// [declared, span) as topology.Declare computed it, widened by every registered member that
// carries exactly our identity for an ordinal at or above the declared count: its pod can only
// belong to our StatefulSet, so the StatefulSet is (or was) that large, whatever a stale cache
// says. "Exactly our identity" is the endpoint no other registration can share — the
// coordinator_server of a coordinator, the management_server of a data instance — so an
// instance a human registered under a look-alike name but another address stays untouched.
func retiringMembers(d topology.Declared, v rowIndex) retiring {
	n := d.Network
	return retiring{
		coordinators: retiringOf(d.Coordinators, d.RetiringCoordinators, v.coordinators, topology.FirstCoordinatorID, n.Coordinator),
		data:         retiringOf(d.DataInstances, d.RetiringDataInstances, v.data, topology.FirstDataOrdinal, n.DataInstance),
	}
}

// retiringOf is one role's part of retiringMembers: the members of its retiring range present in
// rows (the role's rows by name), and every row above the declared ordinals (which start at
// first) that carries exactly the identity member(ordinal) would have, in ordinal order.
func retiringOf[M topology.Role](declared, retiringRange []M, rows map[string]memgraph.Instance, first int,
	member func(ordinal int) M) []M {
	var out []M
	for _, m := range retiringRange {
		if _, ok := rows[m.Core().Name]; ok {
			out = append(out, m)
		}
	}
	firstRetiring := first + len(declared)
	for name, row := range rows {
		n, ok := memberNumber(name)
		if !ok || n < firstRetiring {
			continue
		}
		if _, listed := topology.Find(retiringRange, name); listed {
			continue
		}
		if m := member(n); m.Core().Name == name && uniqueEndpoint(row) == m.UniqueEndpoint() {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b M) int { return a.Core().Ordinal - b.Core().Ordinal })
	return out
}

// uniqueEndpoint is the endpoint of a row no other registration can share: a coordinator's
// coordinator_server, a data instance's management_server (topology's UniqueEndpoint).
func uniqueEndpoint(row memgraph.Instance) string {
	if row.IsCoordinator() {
		return row.CoordinatorServer
	}
	return row.ManagementServer
}

// planDataRetirement hands MAIN off a retiring instance when one is MAIN (to the preferred MAIN
// when it is a caught-up survivor), or else over to the preferred MAIN (planSwitchover), then
// unregisters the retiring instances. It never unregisters a MAIN: the retiring MAIN only after a Handover
// planned just before (the hook stops at a failed command, so the UNREGISTER never runs unless
// the handover landed), and while no row reports a MAIN, none (a dead one may be the MAIN Raft
// records; a live one may be the MAIN an interrupted handover demoted).
func planDataRetirement(d topology.Declared, v rowIndex, m mainState, members []topology.DataInstance, w *Workloads, p *Progress) []Command {
	var cmds []Command
	handedOver := false
	if _, retires := topology.Find(members, m.name); m.name != "" && retires {
		candidates, why := caughtUpSurvivors(d, v, m.name)
		if to := preferred(d, candidates); to == "" {
			p.NoCaughtUpSurvivor = why
		} else {
			cmds = append(cmds, Handover{From: m.name, To: to})
			p.HandoverFrom, p.HandoverTo = m.name, to
			handedOver = true
		}
	}
	cmds = append(cmds, planSwitchover(d, v, m, w, handedOver, p)...)
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
func planCoordinatorRetirement(v rowIndex, members []topology.Coordinator, p *Progress) []Command {
	var cmds, addSelf []Command
	yield := false
	for _, c := range members {
		switch {
		case c.Name == v.leader:
			if !v.coordinatorRegistered(c.Name) {
				addSelf = append(addSelf, AddCoordinator{ID: c.ID(), Config: coordinatorConfig(c)})
			}
			yield = true
		case v.halfJoined[c.Name]:
			// REMOVE COORDINATOR of a member missing from the leader's application log ends the
			// leader process (Memgraph v3.12.0 coordinator_instance.cpp 930–939).
			p.HalfJoined = append(p.HalfJoined, c.Name)
		case v.leaders[c.Name]:
			// Reported as leader by its row but not the one we are connected to: the view is
			// mid-election. Never aim REMOVE at a leader; the next pass sees the view after the election.
		case len(v.leaders) == 0:
			p.LeaderUnknown = true
		default:
			cmds = append(cmds, RemoveCoordinator{ID: c.ID()})
		}
	}
	if yield {
		cmds = append(append(cmds, addSelf...), YieldLeadership{})
		p.YieldPending = true
	}
	return cmds
}

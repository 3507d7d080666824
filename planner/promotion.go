package planner

import (
	"slices"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// mainState is what the observation proves about the MAIN.
type mainState struct {
	name string // the row reporting role main; "" when none does
	// unproven are registered data instances whose role the leader does not know (not alive).
	// Without a main row, any of them may be the MAIN Raft records: the leader shows a dead MAIN
	// as down/unknown, exactly like a dead replica.
	unproven []string
}

// noMain: the observation proves Raft records no MAIN, so SET INSTANCE TO MAIN cannot meet
// "there is already a main instance in cluster".
func (m mainState) noMain() bool { return m.name == "" && len(m.unproven) == 0 }

// observeMain looks at every data row, including instances a human registered: one of those
// may be the MAIN too.
func observeMain(v rowIndex) mainState {
	var m mainState
	for name, row := range v.data {
		switch {
		case row.Role == memgraph.RoleMain:
			// Raft has one MAIN; should a view ever show two rows, pick one deterministically.
			if m.name == "" || compareMemberNames(name, m.name) < 0 {
				m.name = name
			}
		case !isUpReplica(row):
			m.unproven = append(m.unproven, name)
		}
	}
	if m.name != "" {
		m.unproven = nil
	}
	slices.SortFunc(m.unproven, compareMemberNames)
	return m
}

// planPromotion sets a MAIN only when the observation proves there is none: the preferred MAIN
// when it is observed up, else the lowest-ordinal declared instance observed up, else the
// preferred or the first declared one (then nothing declared is
// registered yet, and this plan registers it just before: a newly registered instance starts
// alive). It never targets a retiring instance or one outside the declared set, nor one newer
// than another alive instance (newerThanReplica): among versions, the oldest alive wins; when no
// declared candidate qualifies (the oldest is someone else's instance), nobody is promoted and
// Progress.PromotionWaits says why. retiring is the
// registered part of the data retiring range, widened as retiringMembers widens it.
func planPromotion(d topology.Declared, v rowIndex, m mainState, retiring []topology.DataInstance, p *Progress) []Command {
	if !m.noMain() {
		p.MainUnproven = m.unproven
		return nil
	}
	if len(d.DataInstances) == 0 || restoreHolds(d, v) {
		return nil
	}
	if len(retiring) > 0 {
		// No MAIN while a shrink is under way: a handover was interrupted between DEMOTE and
		// SET, or the MAIN was demoted by hand. Whoever holds the latest writes must win, and
		// only Memgraph knows who that is.
		p.ForceReset = true
		return []Command{ForceResetClusterState{}}
	}
	var up, newer []string
	for _, di := range d.DataInstances {
		if row, ok := v.data[di.Name]; ok && isUpReplica(row) {
			if why := newerThanReplica(v, di.Name, ""); why != "" {
				newer = append(newer, why) // the election goes to the oldest version alive
				continue
			}
			up = append(up, di.Name)
		}
	}
	target := preferred(d, up)
	switch {
	case target != "":
	case len(newer) > 0:
		p.PromotionWaits = "no MAIN is elected: " + strings.Join(newer, "; ")
		return nil
	case d.PreferredMain != "":
		target = d.PreferredMain // registered by this very plan, like every declared instance
	default:
		target = d.DataInstances[0].Name
	}
	if why := newerThanReplica(v, target, ""); why != "" {
		p.PromotionWaits = "no MAIN is elected: " + why
		return nil
	}
	p.Promote = target
	return []Command{SetInstanceToMain{Name: target}}
}

package planner

import (
	"errors"
	"fmt"
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// View is one coordinator's answer to SHOW INSTANCES.
type View struct {
	Coordinator topology.Coordinator // whom the hook asked
	Instances   []memgraph.Instance
	Leader      string // the row reporting role leader (ReadLeadership); "" when none
}

// NewView records what coordinator c answered.
func NewView(c topology.Coordinator, rows []memgraph.Instance) View {
	leader, _ := ReadLeadership(rows)
	return View{Coordinator: c, Instances: rows, Leader: leader}
}

// FromLeader reports whether the coordinator asked is the leader it names.
func (v View) FromLeader() bool { return v.Leader == v.Coordinator.Name }

// fresh reports a coordinator that is leader of its own one-member cluster and was never ADDed:
// it lists only itself, unregistered.
func (v View) fresh() bool {
	coordinators, registered := 0, 0
	for _, row := range v.Instances {
		if row.IsCoordinator() {
			coordinators++
		}
		if row.Registered() {
			registered++
		}
	}
	return coordinators <= 1 && registered == 0
}

// listsItselfAs reports whether rows can be coordinator c's answer: every coordinator lists
// itself in SHOW INSTANCES, a fresh one alone, a member among the others. An answer that does
// not came from another server at c's address (a pod address reused after c's pod went) or from
// a coordinator removed from its cluster: neither speaks for c, and planning on it could
// bootstrap a second Raft cluster beside the real one. The name is the test, not the
// coordinator_server, which may differ from the declared one on a cluster registered with other
// addresses (reported, never rewritten).
func listsItselfAs(c topology.Coordinator, rows []memgraph.Instance) bool {
	return slices.ContainsFunc(rows, func(r memgraph.Instance) bool { return r.IsCoordinator() && r.Name == c.Name })
}

// notItself is the problem of an answer that does not list the coordinator asked (listsItselfAs).
func notItself(c topology.Coordinator) string {
	return fmt.Sprintf("%s: the answer at its address does not list %s: another server answers there "+
		"(an address reused after its pod went) or it was removed from the cluster", c.Name, c.Name)
}

// DiscoveryOrder is the order the hook asks the coordinators in: declared, then retiring, by id.
func DiscoveryOrder(d topology.Declared) []topology.Coordinator {
	return append(append(make([]topology.Coordinator, 0, len(d.Coordinators)+len(d.RetiringCoordinators)),
		d.Coordinators...), d.RetiringCoordinators...)
}

// Answer is one coordinator's reply during leader discovery: its rows, or why it gave none.
type Answer struct {
	Coordinator topology.Coordinator
	Instances   []memgraph.Instance
	Err         error
}

// Discovery is what the answers gathered so far say about the leader.
type Discovery struct {
	View      View     // the view to plan on; its Leader is "" while none is chosen
	Asked     int      // coordinators asked
	Reachable bool     // at least one answered
	NotReady  string   // a leader some coordinator named that had not finished reconciling
	Problems  []string // why the other answers were not chosen, one per coordinator
}

// Found reports whether a view to plan on was chosen: the hook stops asking.
func (d Discovery) Found() bool { return d.View.Leader != "" }

// Discover chooses the view to plan on from the answers of the first coordinators of
// DiscoveryOrder (in that order), out of total. The first view of an established cluster that
// names a ready leader is chosen at once: on a converged cluster that costs one query. A
// coordinator that names no leader answers from a stale state machine, and one that names a
// leader that is not ready yet answers that leader's local Raft copy (every health unknown,
// LeaderNotReady): neither is chosen.
//
// A fresh coordinator (leader of only itself, never ADDed) looks exactly like a wiped one, so
// its self-view is chosen, to bootstrap the cluster, only when all total coordinators answered
// and every one of them is fresh: if any is unreachable, not yet asked, or belongs to an
// established cluster, bootstrapping here could start a second Raft cluster beside the real one
// and end with two MAINs. For the same reason an answer that does not list the coordinator
// asked (listsItselfAs) is never chosen and counts as a coordinator that is not fresh.
func Discover(answers []Answer, total int) Discovery {
	var disc Discovery
	var fallback *View
	allFresh := len(answers) == total
	for _, a := range answers {
		disc.Asked++
		name := a.Coordinator.Name
		if a.Err != nil {
			allFresh = false
			disc.Problems = append(disc.Problems, fmt.Sprintf("%s: %s", name, Explain(a.Err)))
			continue
		}
		disc.Reachable = true
		if !listsItselfAs(a.Coordinator, a.Instances) {
			allFresh = false
			disc.Problems = append(disc.Problems, notItself(a.Coordinator))
			continue
		}
		v := NewView(a.Coordinator, a.Instances)
		_, leadership := ReadLeadership(a.Instances)
		switch {
		case leadership == LeaderNotReady:
			allFresh = false
			disc.NotReady = v.Leader
			disc.Problems = append(disc.Problems, fmt.Sprintf("%s: %s leads but is not ready", name, v.Leader))
		case v.FromLeader() && v.fresh():
			if fallback == nil {
				fallback = &v
			}
		case v.Leader == "":
			allFresh = false
			disc.Problems = append(disc.Problems, fmt.Sprintf("%s: names no leader", name))
		default:
			disc.View = v
			return disc
		}
	}
	switch {
	case fallback != nil && allFresh:
		disc.View = *fallback
	case fallback != nil:
		disc.Problems = append(disc.Problems,
			fmt.Sprintf("%s: fresh, not bootstrapped while the other coordinators are not all fresh", fallback.Coordinator.Name))
	}
	return disc
}

// LeaderOf is the coordinator to ask for the leader's own view when v, a follower's, names
// another leader: the declared (or retiring) coordinator of that name, else the address v's row
// for it reports.
func LeaderOf(d topology.Declared, v View) (topology.Coordinator, error) {
	if c, ok := topology.Find(DiscoveryOrder(d), v.Leader); ok {
		return c, nil
	}
	for _, row := range v.Instances {
		if row.IsCoordinator() && row.Name == v.Leader && row.BoltServer != "" {
			id, _ := topology.ParseCoordinatorName(v.Leader)
			return topology.Coordinator{Member: topology.Member{Ordinal: id, Name: v.Leader, BoltServer: row.BoltServer}}, nil
		}
	}
	return topology.Coordinator{}, fmt.Errorf("leader %s has no known Bolt address", v.Leader)
}

// CheckLeaderView refuses the answer of the coordinator asked as the leader named when it does
// not name itself (leadership moved in between).
func CheckLeaderView(named string, lv View) error {
	if !listsItselfAs(lv.Coordinator, lv.Instances) {
		return errors.New(notItself(lv.Coordinator))
	}
	if !lv.FromLeader() {
		return fmt.Errorf("%s was named leader but reports leader %q", named, lv.Leader)
	}
	return nil
}

// SettlesPass reports whether the plan r, made from view v, ends the pass without a read on the
// leader: nothing to do, no handover due (its lag is the leader's to serve), and, when v is a
// follower's, no StatefulSet shrinking below held and no rollout in progress (a shrink and a
// pod's release rest only on the leader's own table).
func SettlesPass(r Plan, v View, held topology.Replicas) bool {
	shrinks := r.Replicas.Coordinators < held.Coordinators || r.Replicas.DataInstances < held.DataInstances
	return len(r.Commands) == 0 && !r.NeedsCatchUpReads && (v.FromLeader() || !shrinks && !r.Rollout.InProgress())
}

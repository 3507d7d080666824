package hooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// view is one coordinator's answer to SHOW INSTANCES.
type view struct {
	coordinator topology.Coordinator // whom we asked
	instances   []memgraph.Instance
	leader      string // name of the row whose role is leader; "" when none
}

func (v view) fromLeader() bool { return v.leader == v.coordinator.Name }

// fresh reports a coordinator that is leader of its own one-member cluster and was never ADDed:
// it lists only itself, with an empty bolt_server.
func (v view) fresh() bool {
	coordinators, registered := 0, 0
	for _, in := range v.instances {
		if in.IsCoordinator() {
			coordinators++
			if in.BoltServer != "" {
				registered++
			}
		} else {
			registered++
		}
	}
	return coordinators <= 1 && registered == 0
}

// observation is the outcome of leader discovery.
type observation struct {
	view      view
	reachable bool // at least one coordinator answered
	asked     int  // coordinators asked before discovery ended
	errs      []string
	// notReady names a leader some coordinator reported that had not finished reconciling (its
	// table was its local Raft copy): "no leader yet", not a view to plan on.
	notReady string
}

// discoverLeader asks the coordinators in id order (declared, then retiring) for SHOW INSTANCES
// and returns the first view of an established cluster that names a ready leader; on a
// converged cluster that costs one query. A coordinator that names no leader answers from a
// stale state machine, and one that names a leader that is not ready yet answers that leader's
// local Raft copy (every health unknown, planner.LeaderNotReady): both are skipped.
//
// A fresh coordinator (leader of only itself, never ADDed) looks exactly like a wiped one, so
// its self-view is used to bootstrap only when every coordinator answered and every one of them
// is fresh: if any is unreachable or belongs to an established cluster, bootstrapping here could
// start a second Raft cluster beside the real one and end with two MAINs.
//
// Each coordinator gets a fair share of the remaining budget, so one that does not answer
// cannot starve the others.
func discoverLeader(ctx context.Context, conn memgraph.Connector, d topology.Declared) observation {
	var obs observation
	var fallback *view
	allFresh := true
	coordinators := allCoordinators(d)
	for i, c := range coordinators {
		if ctx.Err() != nil {
			allFresh = false
			break
		}
		obs.asked++
		rows, err := showInstancesWithin(ctx, conn, c.BoltServer, len(coordinators)-i)
		if err != nil {
			allFresh = false
			obs.errs = append(obs.errs, fmt.Sprintf("%s: %s", c.Name, errMessage(err)))
			continue
		}
		obs.reachable = true
		v := view{coordinator: c, instances: rows, leader: leaderName(rows)}
		_, leadership := planner.ReadLeadership(rows)
		switch {
		case leadership == planner.LeaderNotReady:
			allFresh = false
			obs.notReady = v.leader
			obs.errs = append(obs.errs, fmt.Sprintf("%s: %s leads but is not ready", c.Name, v.leader))
		case v.fromLeader() && v.fresh():
			if fallback == nil {
				fallback = &v
			}
		case v.leader == "":
			allFresh = false
			obs.errs = append(obs.errs, fmt.Sprintf("%s: names no leader", c.Name))
		default:
			obs.view = v
			return obs
		}
	}
	if fallback != nil && allFresh {
		obs.view = *fallback
	} else if fallback != nil {
		obs.errs = append(obs.errs, fmt.Sprintf("%s: fresh, not bootstrapped while the other coordinators are not all fresh", fallback.coordinator.Name))
	}
	return obs
}

// showInstancesWithin asks one coordinator, giving it 1/share of the time left (at least one
// share is kept for whatever follows discovery).
func showInstancesWithin(ctx context.Context, conn memgraph.Connector, address string, share int) ([]memgraph.Instance, error) {
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)/time.Duration(share+1))
		defer cancel()
	}
	return conn.Client(address).ShowInstances(ctx)
}

// leaderView returns a view taken on the leader itself, where writes are executed: v when it
// already is, otherwise a fresh SHOW INSTANCES on the leader it names.
func leaderView(ctx context.Context, conn memgraph.Connector, d topology.Declared, v view) (view, error) {
	if v.fromLeader() {
		return v, nil
	}
	leader, ok := coordinatorByName(d, v.leader)
	if !ok {
		row, found := rowByName(v.instances, v.leader)
		if !found || row.BoltServer == "" {
			return view{}, fmt.Errorf("leader %s has no known Bolt address", v.leader)
		}
		id, _ := topology.ParseCoordinatorName(v.leader)
		leader = topology.Coordinator{ID: id, Name: v.leader, BoltServer: row.BoltServer}
	}
	rows, err := conn.Client(leader.BoltServer).ShowInstances(ctx)
	if err != nil {
		return view{}, fmt.Errorf("leader %s: %w", v.leader, err)
	}
	lv := view{coordinator: leader, instances: rows, leader: leaderName(rows)}
	if !lv.fromLeader() {
		return view{}, fmt.Errorf("%s was named leader but reports leader %q", v.leader, lv.leader)
	}
	return lv, nil
}

func leaderName(rows []memgraph.Instance) string {
	for _, r := range rows {
		if r.IsCoordinator() && r.Role == memgraph.RoleLeader {
			return r.Name
		}
	}
	return ""
}

func mainName(rows []memgraph.Instance) string {
	for _, r := range rows {
		if !r.IsCoordinator() && r.Role == memgraph.RoleMain {
			return r.Name
		}
	}
	return ""
}

func rowByName(rows []memgraph.Instance, name string) (memgraph.Instance, bool) {
	for _, r := range rows {
		if r.Name == name {
			return r, true
		}
	}
	return memgraph.Instance{}, false
}

func coordinatorByName(d topology.Declared, name string) (topology.Coordinator, bool) {
	for _, c := range allCoordinators(d) {
		if c.Name == name {
			return c, true
		}
	}
	return topology.Coordinator{}, false
}

// errMessage is Memgraph's own message when there is one; a failed handover tells its whole
// story (the refusal in Memgraph's words, or why the new MAIN is not proven, and whether the old
// MAIN was restored), and so does a refused ADD of a half-joined coordinator.
func errMessage(err error) string {
	var handover *planner.HandoverError
	if errors.As(err, &handover) {
		return handover.Error()
	}
	var halfJoined *planner.HalfJoinedError
	if errors.As(err, &halfJoined) {
		return halfJoined.Error()
	}
	var mgErr *memgraph.Error
	if errors.As(err, &mgErr) && mgErr.Message != "" {
		return mgErr.Message
	}
	return strings.TrimSpace(err.Error())
}

// allCoordinators lists the declared coordinators, then the retiring ones, in id order.
func allCoordinators(d topology.Declared) []topology.Coordinator {
	return append(append([]topology.Coordinator{}, d.Coordinators...), d.RetiringCoordinators...)
}

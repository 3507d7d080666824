package hooks

import (
	"context"
	"fmt"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// discover asks the coordinators for SHOW INSTANCES in planner.DiscoveryOrder until
// planner.Discover has chosen the view to plan on, or every coordinator was asked, or the budget
// ran out. Each coordinator gets a fair share of the remaining budget, so one that does not
// answer cannot starve the others.
func discover(ctx context.Context, conn memgraph.Connector, d topology.Declared) planner.Discovery {
	order := planner.DiscoveryOrder(d)
	return discoverAmong(ctx, conn, order, len(order))
}

// discoverAmong is discover asking only the coordinators of order (a part of DiscoveryOrder, in
// its order) out of total: the answers of a part never look like those of a cluster whose every
// coordinator is fresh (planner.Discover), so a part never bootstraps one.
func discoverAmong(ctx context.Context, conn memgraph.Connector, order []topology.Coordinator, total int) planner.Discovery {
	answers := make([]planner.Answer, 0, len(order))
	var disc planner.Discovery
	for i, c := range order {
		if ctx.Err() != nil {
			break
		}
		rows, err := showInstancesWithin(ctx, conn, c.BoltServer, len(order)-i)
		answers = append(answers, planner.Answer{Coordinator: c, Instances: rows, Err: err})
		if disc = planner.Discover(answers, total); disc.Found() {
			break
		}
	}
	return disc
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
// already is, otherwise a fresh SHOW INSTANCES on the leader v names (planner.LeaderOf).
func leaderView(ctx context.Context, conn memgraph.Connector, d topology.Declared, v planner.View) (planner.View, error) {
	if v.FromLeader() {
		return v, nil
	}
	leader, err := planner.LeaderOf(d, v)
	if err != nil {
		return planner.View{}, err
	}
	rows, err := conn.Client(leader.BoltServer).ShowInstances(ctx)
	if err != nil {
		return planner.View{}, fmt.Errorf("leader %s: %w", v.Leader, err)
	}
	lv := planner.NewView(leader, rows)
	if err := planner.CheckLeaderView(v.Leader, lv); err != nil {
		return planner.View{}, err
	}
	return lv, nil
}

// readyCoordinators are the coordinators of DiscoveryOrder whose pods are Ready, in its order.
func (o *observation) readyCoordinators(d topology.Declared) []topology.Coordinator {
	var ready []topology.Coordinator
	for _, c := range planner.DiscoveryOrder(d) {
		if o.ready[c.Pod] {
			ready = append(ready, c)
		}
	}
	return ready
}

package planner

import (
	"errors"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// findMain finds the MAIN of the user's cluster, one SHOW INSTANCES a step (userShowInstances):
// the search of the cluster's own pass (pass.findMain), answered from the user's record. ok is
// false while a read is pending; err says why there is no MAIN to use.
func (w *userWalk) findMain() (main topology.DataInstance, ok bool, err error) {
	c := w.in.Cluster
	d := c.Declare(c.Replicas())
	var reads []Result
	for {
		p := &pass{record: reads, d: d}
		found, f, err := p.findMain(c)
		if f != waiting {
			return found, true, err
		}
		r, isRead := p.pending.(Read)
		if !isRead || r.What != ReadInstances {
			return topology.DataInstance{}, true, fmt.Errorf("finding the MAIN asked for %T, not SHOW INSTANCES", p.pending)
		}
		got, ok := w.step(userShowInstances{from: r.From, share: r.Share})
		if !ok {
			return topology.DataInstance{}, false, nil
		}
		reads = append(reads, Result{Rows: got.Instances, Err: got.Err, Expired: got.Expired})
	}
}

// findMain is the data instance the leader of c names MAIN, from the view discovery chooses and
// then the leader's own table; the MAIN must be a data instance of the cluster and up. A
// MemgraphUser's reads and statements go there.
func (p *pass) findMain(c *topology.Cluster) (topology.DataInstance, flow, error) {
	view, why, f := p.leaderTable(c)
	switch {
	case f == waiting:
		return topology.DataInstance{}, waiting, nil
	case why != "":
		return topology.DataInstance{}, goOn, errors.New(why)
	}
	for _, row := range view.Instances {
		if row.Role != memgraph.RoleMain || row.IsCoordinator() {
			continue
		}
		ordinal, ok := topology.ParseDataInstanceName(row.Name)
		if !ok || row.Health != memgraph.HealthUp {
			return topology.DataInstance{}, goOn, fmt.Errorf("the MAIN of cluster %s, %s, is %s", c.Name(), row.Name, row.Health)
		}
		return c.Network().DataInstance(ordinal), goOn, nil
	}
	return topology.DataInstance{}, goOn, errors.New("cluster " + c.Name() + " has no MAIN: the leader " + view.Leader + " names none")
}

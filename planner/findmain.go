package planner

import (
	"errors"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// MainFound ends the search for a cluster's MAIN (NextMain): the data instance the leader names
// MAIN, which is up, or why there is none.
type MainFound struct {
	Main topology.DataInstance
	Err  error
}

func (MainFound) isStep() {}

// NextMain is the next step of finding the MAIN of c, from what was read so far (done): the view
// discovery chooses, then the leader's own table, whose MAIN must be a data instance of the
// cluster and up. A MemgraphUser's statements go there.
func NextMain(c *topology.Cluster, done []Result) Step {
	p := &pass{record: done, d: c.Declare(c.Replicas())}
	found, f := p.findMain(c)
	if f == waiting {
		return p.pending
	}
	return found
}

func (p *pass) findMain(c *topology.Cluster) (MainFound, flow) {
	view, why, f := p.leaderTable(c)
	switch {
	case f == waiting:
		return MainFound{}, waiting
	case why != "":
		return MainFound{Err: errors.New(why)}, goOn
	}
	for _, row := range view.Instances {
		if row.Role != memgraph.RoleMain || row.IsCoordinator() {
			continue
		}
		ordinal, ok := topology.ParseDataInstanceName(row.Name)
		if !ok || row.Health != memgraph.HealthUp {
			return MainFound{Err: fmt.Errorf("the MAIN of cluster %s, %s, is %s", c.Name(), row.Name, row.Health)}, goOn
		}
		return MainFound{Main: c.Network().DataInstance(ordinal)}, goOn
	}
	return MainFound{Err: errors.New("cluster " + c.Name() + " has no MAIN: the leader " + view.Leader + " names none")}, goOn
}

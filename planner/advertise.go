package planner

import (
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// planAdvertisement updates in place (UPDATE CONFIG) the bolt_server of every registered
// declared member that is registered with its declared identity but advertises another
// bolt_server than the one it is to be given out at (topology.Member.AdvertisedBoltServer: its
// external address, else its in-cluster name). Memgraph changes nothing else for it: the member
// stays up and keeps its role and connections, and routing clients get the new address with
// their next routing table. A half-joined coordinator is not in the leader's application log
// (UPDATE CONFIG answers that it does not exist), and a registration carrying other addresses
// than ours is someone else's (Progress.Drift): neither is touched.
func planAdvertisement(d topology.Declared, v rowIndex, p *Progress) []Command {
	var cmds []Command
	for _, c := range d.Coordinators {
		row, ok := v.coordinators[c.Name]
		if !ok || !row.Registered() || coordinatorDrift(c, row) != nil {
			continue
		}
		if want := c.AdvertisedBoltServer(); row.BoltServer != want {
			p.AddressUpdates = append(p.AddressUpdates, AddressUpdate{Name: c.Name, From: row.BoltServer, To: want})
			cmds = append(cmds, UpdateCoordinatorConfig{ID: c.ID(), BoltServer: want})
		}
	}
	for _, di := range d.DataInstances {
		row, ok := v.data[di.Name]
		if !ok || dataDrift(di, row) != nil {
			continue
		}
		if want := di.AdvertisedBoltServer(); row.BoltServer != want {
			p.AddressUpdates = append(p.AddressUpdates, AddressUpdate{Name: di.Name, From: row.BoltServer, To: want})
			cmds = append(cmds, UpdateInstanceConfig{Name: di.Name, BoltServer: want})
		}
	}
	return cmds
}

// AddressUpdate is a member whose bolt_server the plan updates in place.
type AddressUpdate struct {
	Name     string
	From, To string
}

// advertisedAt is the bolt_server rows report for name ("", false when no row lists it).
func advertisedAt(rows []memgraph.Instance, name string) (string, bool) {
	for _, r := range rows {
		if r.Name == name && r.Registered() {
			return r.BoltServer, true
		}
	}
	return "", false
}

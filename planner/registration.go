package planner

import (
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// planCoordinatorRegistration adds every declared coordinator that is not registered, in id
// order, each with exactly its declared identity — the one we are connected to included, since
// its declared identity is by construction its own --coordinator-hostname and ports. A
// half-joined member is not added (Memgraph refuses its id) but reported.
func planCoordinatorRegistration(d topology.Declared, v rowIndex, p *Progress) []Command {
	var cmds []Command
	for _, c := range d.Coordinators {
		switch {
		case v.coordinatorRegistered(c.Name):
			p.Drift = append(p.Drift, coordinatorDrift(c, v.coordinators[c.Name])...)
		case v.halfJoined[c.Name]:
			p.HalfJoined = append(p.HalfJoined, c.Name)
		default:
			p.PendingCoordinators = append(p.PendingCoordinators, c.Name)
			cmds = append(cmds, AddCoordinator{ID: c.ID(), Config: coordinatorConfig(c)})
		}
	}
	return cmds
}

// planDataRegistration registers every declared data instance that is not registered, in
// ordinal order.
func planDataRegistration(d topology.Declared, v rowIndex, p *Progress) []Command {
	var cmds []Command
	for _, di := range d.DataInstances {
		if row, ok := v.data[di.Name]; ok {
			p.Drift = append(p.Drift, dataDrift(di, row)...)
			continue
		}
		p.PendingDataInstances = append(p.PendingDataInstances, di.Name)
		cmds = append(cmds, RegisterInstance{Name: di.Name, Config: instanceConfig(di)})
	}
	return cmds
}

func coordinatorConfig(c topology.Coordinator) memgraph.CoordinatorConfig {
	return memgraph.CoordinatorConfig{
		BoltServer:        c.BoltServer,
		CoordinatorServer: c.CoordinatorServer,
		ManagementServer:  c.ManagementServer,
	}
}

func instanceConfig(di topology.DataInstance) memgraph.InstanceConfig {
	return memgraph.InstanceConfig{
		BoltServer:        di.BoltServer,
		ManagementServer:  di.ManagementServer,
		ReplicationServer: di.ReplicationServer,
	}
}

// coordinatorDrift compares every address SHOW INSTANCES reports for a coordinator.
func coordinatorDrift(c topology.Coordinator, row memgraph.Instance) []Drift {
	return drifts(c.Name,
		[3]string{"bolt_server", row.BoltServer, c.BoltServer},
		[3]string{"coordinator_server", row.CoordinatorServer, c.CoordinatorServer},
		[3]string{"management_server", row.ManagementServer, c.ManagementServer},
	)
}

// dataDrift compares the addresses SHOW INSTANCES reports for a data instance (it does not
// report the replication_server).
func dataDrift(di topology.DataInstance, row memgraph.Instance) []Drift {
	return drifts(di.Name,
		[3]string{"bolt_server", row.BoltServer, di.BoltServer},
		[3]string{"management_server", row.ManagementServer, di.ManagementServer},
	)
}

// drifts turns (field, observed, declared) triples into Drift entries where they differ.
func drifts(name string, fields ...[3]string) []Drift {
	var out []Drift
	for _, f := range fields {
		if f[1] != f[2] {
			out = append(out, Drift{Name: name, Field: f[0], Observed: f[1], Declared: f[2]})
		}
	}
	return out
}

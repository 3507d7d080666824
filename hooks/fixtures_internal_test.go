package hooks

import (
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Fixtures of the executor's tests: a cluster "mg" in namespace "db" with the default ports,
// whose rows carry each member's identity as topology derives it.

var testNet = topology.Network{Cluster: "mg", Namespace: "db", ClusterDomain: "cluster.local",
	Ports: topology.Ports{Bolt: 7687, Management: 10000, Replication: 20000, Coordinator: 12000}}

func declared(coordinators, data, currentCoordinators, currentData int32) topology.Declared {
	return topology.Declare(testNet, replicas(coordinators, data), replicas(currentCoordinators, currentData))
}

func replicas(coordinators, data int32) topology.Replicas {
	return topology.Replicas{Coordinators: coordinators, DataInstances: data}
}

// coord is a registered coordinator row.
func coord(id int, role string) memgraph.Instance {
	c := testNet.Coordinator(id)
	return memgraph.Instance{Name: c.Name, BoltServer: c.BoltServer, CoordinatorServer: c.CoordinatorServer,
		ManagementServer: c.ManagementServer, Health: memgraph.HealthUp, Role: role}
}

// unaddedSelf lists a coordinator never ADDed (bolt_server empty) in the given role: the leader
// of itself when fresh, a follower when half-joined.
func unaddedSelf(id int, role string) memgraph.Instance {
	row := coord(id, role)
	row.BoltServer = ""
	return row
}

func freshSelf(id int) memgraph.Instance { return unaddedSelf(id, memgraph.RoleLeader) }

func data(n int, health, role string) memgraph.Instance {
	d := testNet.DataInstance(n)
	return memgraph.Instance{Name: d.Name, BoltServer: d.BoltServer, ManagementServer: d.ManagementServer,
		Health: health, Role: role}
}

func replica(n int) memgraph.Instance { return data(n, memgraph.HealthUp, memgraph.RoleReplica) }

func rows(groups ...[]memgraph.Instance) []memgraph.Instance {
	var out []memgraph.Instance
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func one(r ...memgraph.Instance) []memgraph.Instance { return r }

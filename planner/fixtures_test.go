package planner

import (
	"fmt"
	"maps"
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The fixtures describe a cluster "mg" in namespace "db" with the default ports. Expected
// queries are spelled out literally (not through the planner's own code), so a wrong address or
// a wrong argument fails the test.

var testNet = topology.Network{
	Cluster:       "mg",
	Namespace:     "db",
	ClusterDomain: "cluster.local",
	Ports:         topology.Ports{Bolt: 7687, Management: 10000, Replication: 20000, Coordinator: 12000},
}

// declared is topology.Declare for the test network: declared and current counts per role.
func declared(coordinators, data, currentCoordinators, currentData int32) topology.Declared {
	return topology.Declare(testNet,
		topology.Replicas{Coordinators: coordinators, DataInstances: data},
		topology.Replicas{Coordinators: currentCoordinators, DataInstances: currentData})
}

func replicas(coordinators, data int32) topology.Replicas {
	return topology.Replicas{Coordinators: coordinators, DataInstances: data}
}

func coordHost(id int) string {
	return fmt.Sprintf("mg-coordinator-%d.mg-coordinator.db.svc.cluster.local", id)
}
func dataHost(n int) string       { return fmt.Sprintf("mg-data-%d.mg-data.db.svc.cluster.local", n) }
func coordName(id int) string     { return fmt.Sprintf("coordinator_%d", id) }
func dataName(n int) string       { return fmt.Sprintf("instance_%d", n) }
func addr(h string, p int) string { return fmt.Sprintf("%s:%d", h, p) }

// coord is a registered coordinator row as the leader reports it.
func coord(id int, role string) memgraph.Instance {
	h := coordHost(id)
	return memgraph.Instance{
		Name: coordName(id), BoltServer: addr(h, 7687), CoordinatorServer: addr(h, 12000),
		ManagementServer: addr(h, 10000), Health: memgraph.HealthUp, Role: role,
	}
}

// freshSelf is a coordinator that was never ADDed, listing itself as leader with an empty
// bolt_server.
func freshSelf(id int) memgraph.Instance {
	row := coord(id, memgraph.RoleLeader)
	row.BoltServer = ""
	return row
}

// halfJoined is a coordinator NuRaft completed adding after ADD COORDINATOR timed out: a
// follower without a bolt_server.
func halfJoined(id int) memgraph.Instance {
	row := coord(id, memgraph.RoleFollower)
	row.BoltServer = ""
	return row
}

func data(n int, health, role string) memgraph.Instance {
	h := dataHost(n)
	return memgraph.Instance{
		Name: dataName(n), BoltServer: addr(h, 7687), ManagementServer: addr(h, 10000),
		Health: health, Role: role,
	}
}

func replica(n int) memgraph.Instance { return data(n, memgraph.HealthUp, memgraph.RoleReplica) }
func mainRow(n int) memgraph.Instance { return data(n, memgraph.HealthUp, memgraph.RoleMain) }
func downRow(n int) memgraph.Instance { return data(n, memgraph.HealthDown, memgraph.RoleUnknown) }

// coords lists registered coordinators 1..n with the given leader.
func coords(n, leader int) []memgraph.Instance {
	var rows []memgraph.Instance
	for id := 1; id <= n; id++ {
		role := memgraph.RoleFollower
		if id == leader {
			role = memgraph.RoleLeader
		}
		rows = append(rows, coord(id, role))
	}
	return rows
}

func rows(groups ...[]memgraph.Instance) []memgraph.Instance {
	var out []memgraph.Instance
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func one(r ...memgraph.Instance) []memgraph.Instance { return r }

// lag builds SHOW REPLICATION LAG rows: behind[name] is the lag on database "memgraph".
func lag(committed int64, behind map[string]int64) []memgraph.InstanceLag {
	var out []memgraph.InstanceLag
	for _, name := range slices.Sorted(maps.Keys(behind)) {
		out = append(out, memgraph.InstanceLag{Instance: name, Databases: map[string]memgraph.DatabaseLag{
			"memgraph": {CommittedTxns: committed - behind[name], TxnsBehindMain: behind[name]},
		}})
	}
	return out
}

// Literal queries.

func qAdd(id int) string {
	h := coordHost(id)
	return fmt.Sprintf("ADD COORDINATOR %d WITH CONFIG {'bolt_server': '%s:7687', 'coordinator_server': '%s:12000', 'management_server': '%s:10000'}", id, h, h, h)
}

func qRegister(n int) string {
	h := dataHost(n)
	return fmt.Sprintf("REGISTER INSTANCE instance_%d WITH CONFIG {'bolt_server': '%s:7687', 'management_server': '%s:10000', 'replication_server': '%s:20000'}", n, h, h, h)
}

func qUpdateCoordinator(id int, bolt string) string {
	return fmt.Sprintf("UPDATE CONFIG FOR COORDINATOR %d {'bolt_server': '%s'}", id, bolt)
}

func qUpdateInstance(n int, bolt string) string {
	return fmt.Sprintf("UPDATE CONFIG FOR INSTANCE instance_%d {'bolt_server': '%s'}", n, bolt)
}

func qMain(n int) string       { return fmt.Sprintf("SET INSTANCE instance_%d TO MAIN", n) }
func qUnregister(n int) string { return fmt.Sprintf("UNREGISTER INSTANCE instance_%d", n) }
func qRemove(id int) string    { return fmt.Sprintf("REMOVE COORDINATOR %d", id) }

const qYield = "YIELD LEADERSHIP"

// qHandover renders a Handover from <from> to <to>, with the restore of <from>.
func qHandover(from, to int) string {
	return fmt.Sprintf("DEMOTE INSTANCE instance_%d; %s || %s", from, qMain(to), qMain(from))
}

func names(prefix string, ns ...int) []string {
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%s_%d", prefix, n))
	}
	return out
}

// reported adds the MAIN's SHOW REPLICAS to an observation with lag rows but none, as Memgraph
// would answer it with those counts: every replica with a lag row is listed, ready on each
// database it is 0 behind on and recovering on the others (Memgraph puts a replica found behind
// into RECOVERY). Observations that carry SHOW REPLICAS already, or no lag, or no MAIN row, are
// returned as they are: a test about SHOW REPLICAS itself states it.
func reported(o Observed) Observed {
	if o.Lag == nil || o.Replicas != nil {
		return o
	}
	main := observeMain(index(o)).name
	if main == "" {
		return o
	}
	o.Replicas = &MainReplicas{Main: main, Rows: replicaRowsFor(main, o.Lag)}
	return o
}

// reportedFresh is reported for the reads before a step.
func reportedFresh(f Fresh) Fresh {
	if f.Lag == nil || f.Replicas != nil || f.InstancesErr != nil {
		return f
	}
	f.Replicas = reported(Observed{Instances: f.Instances, Lag: f.Lag}).Replicas
	return f
}

func replicaRowsFor(main string, lag []memgraph.InstanceLag) []memgraph.Replica {
	rows := []memgraph.Replica{}
	for _, l := range lag {
		if l.Instance == main {
			continue
		}
		r := memgraph.Replica{Name: l.Instance, SyncMode: "sync", Databases: map[string]memgraph.ReplicaDatabase{}}
		for db, d := range l.Databases {
			status := memgraph.ReplicaReady
			if d.TxnsBehindMain != 0 {
				status = memgraph.ReplicaRecovery
			}
			r.Databases[db] = memgraph.ReplicaDatabase{Timestamp: d.CommittedTxns, Behind: -d.TxnsBehindMain, Status: status}
		}
		rows = append(rows, r)
	}
	return rows
}

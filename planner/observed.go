package planner

import (
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Observed is what the hook saw this pass. Every field except Span is live truth from the
// leader coordinator; Span comes from Metacontroller's informer cache and may be stale. Build
// it with Observe.
type Observed struct {
	Instances []memgraph.Instance    // the leader's SHOW INSTANCES
	Leader    string                 // name of the leader coordinator row (coordinator_<id>)
	Lag       []memgraph.InstanceLag // nil unless fetched because NeedsCatchUpReads said so
	// Replicas is SHOW REPLICAS as the MAIN answered it, read with Lag; nil unless fetched.
	Replicas *MainReplicas
	Span     topology.Replicas // observed StatefulSets' spec.replicas (0 when absent)
	// Workloads, when set, makes Decide plan the rollout too (Plan.Rollout).
	Workloads *Workloads
}

// Observe is the one way the hook turns what it read into an Observed: the leader is the row
// SHOW INSTANCES reports as leader (ReadLeadership).
func Observe(rows []memgraph.Instance, lag []memgraph.InstanceLag, span topology.Replicas) Observed {
	leader, _ := ReadLeadership(rows)
	return Observed{Instances: rows, Leader: leader, Lag: lag, Span: span}
}

// MainReplicas is SHOW REPLICAS as one data instance answered it: the MAIN's own account of
// each replica's state per database (ready, recovery, ...). It is the second proof a handover
// target needs besides SHOW REPLICATION LAG, whose count is the MAIN's cache and reads 0 for a
// replica that lost its data and is still recovering (Memgraph v3.12.0
// src/storage/v2/replication/replication_client.cpp: an advance-only Max of what heartbeats
// reported, left as it was while the replica is in RECOVERY).
type MainReplicas struct {
	Main    string             // the data instance asked: the MAIN of the rows it was read with
	Rows    []memgraph.Replica // its answer; nil when it could not be read
	Problem string             // why it could not be read ("" when Rows is its answer)
}

// CatchUpSource is where the hook reads SHOW REPLICAS for an observation of rows: the data
// instance Decide takes as the MAIN, at its in-cluster address when it is a declared or retiring
// member (its registered bolt_server may be an address for clients outside the Kubernetes
// cluster), else at its bolt_server as registered. ok is false when no row reports a MAIN (then
// no handover is planned, and nothing needs reading).
func CatchUpSource(d topology.Declared, rows []memgraph.Instance) (main, boltServer string, ok bool) {
	v := index(Observed{Instances: rows})
	main = observeMain(v).name
	if main == "" {
		return "", "", false
	}
	for _, members := range [][]topology.DataInstance{d.DataInstances, d.RetiringDataInstances} {
		if di, ok := topology.Find(members, main); ok {
			return main, di.BoltServer, true
		}
	}
	return main, v.data[main].BoltServer, true
}

// rowIndex indexes one observation. Coordinator and data rows are kept apart (a coordinator row is
// the one with a coordinator_server), so a data instance that happens to be called
// coordinator_1 can never be mistaken for a Raft member, nor the reverse.
type rowIndex struct {
	coordinators map[string]memgraph.Instance
	data         map[string]memgraph.Instance
	leader       string
	// leaders are every name that may be the Raft leader: the observed leader and any row that
	// reports role leader. None of them is ever the target of REMOVE COORDINATOR.
	leaders map[string]bool
	// halfJoined are coordinator rows with an empty bolt_server other than the leader's own: Raft
	// members the leader's application log does not hold (an ADD COORDINATOR that timed out and
	// joined later). ADD is refused for them ("such id already exists") and REMOVE COORDINATOR of
	// one makes the leader process exit, so the plan never targets them.
	halfJoined map[string]bool
	lag        map[string]memgraph.InstanceLag // nil when the lag was not observed
	replicas   *MainReplicas                   // nil when SHOW REPLICAS was not read
	replicaRow map[string]memgraph.Replica     // replicas.Rows by name
	// dataPods are the data StatefulSet's pods (Workloads; none without them), whose image tags
	// tell the Memgraph version each data instance runs (versionOf). Read only on the paths that
	// make a MAIN, so that a converged pass parses no image.
	dataPods []RolloutPod
}

func index(o Observed) rowIndex {
	v := rowIndex{
		coordinators: make(map[string]memgraph.Instance, len(o.Instances)),
		data:         make(map[string]memgraph.Instance, len(o.Instances)),
		leader:       o.Leader,
		leaders:      map[string]bool{},
		halfJoined:   map[string]bool{},
	}
	if o.Leader != "" {
		v.leaders[o.Leader] = true
	}
	for _, row := range o.Instances {
		if row.IsCoordinator() {
			v.coordinators[row.Name] = row
			if row.Role == memgraph.RoleLeader {
				v.leaders[row.Name] = true
			}
			if !row.Registered() && row.Name != o.Leader {
				v.halfJoined[row.Name] = true
			}
			continue
		}
		v.data[row.Name] = row
	}
	if o.Lag != nil {
		v.lag = map[string]memgraph.InstanceLag{}
		for _, l := range o.Lag {
			v.lag[l.Instance] = l
		}
	}
	if o.Replicas != nil {
		v.replicas, v.replicaRow = o.Replicas, make(map[string]memgraph.Replica, len(o.Replicas.Rows))
		for _, r := range o.Replicas.Rows {
			v.replicaRow[r.Name] = r
		}
	}
	if o.Workloads != nil {
		v.dataPods = o.Workloads.Data.Pods
	}
	return v
}

// versionOf is the Memgraph version the named data instance's pod runs, read from its image tag;
// ok is false without such a pod or when the tag is no version (no version rule applies).
func (v rowIndex) versionOf(name string) (memgraph.Version, bool) {
	ordinal, ok := topology.ParseDataInstanceName(name)
	if !ok {
		return memgraph.Version{}, false
	}
	for _, pod := range v.dataPods {
		if pod.Index == ordinal-topology.FirstDataOrdinal {
			return memgraph.ImageVersion(pod.Image)
		}
	}
	return memgraph.Version{}, false
}

// coordinatorRegistered: ADDed to Raft (memgraph.Instance.Registered).
func (v rowIndex) coordinatorRegistered(name string) bool {
	row, ok := v.coordinators[name]
	return ok && row.Registered()
}

func (v rowIndex) dataRegistered(name string) bool {
	_, ok := v.data[name]
	return ok
}

// isUpReplica: the leader sees the instance alive and knows it is not the MAIN.
func isUpReplica(row memgraph.Instance) bool {
	return row.Health == memgraph.HealthUp && row.Role == memgraph.RoleReplica
}

// leaderNotReady: the leader named by the observation reports its own health unknown, so the
// table is its local Raft copy (see LeaderNotReady), not a basis for any command.
func leaderNotReady(o Observed) bool {
	if o.Leader == "" {
		_, state := ReadLeadership(o.Instances)
		return state == LeaderNotReady
	}
	for _, row := range o.Instances {
		if row.IsCoordinator() && row.Name == o.Leader {
			return row.Health == memgraph.HealthUnknown
		}
	}
	return false
}

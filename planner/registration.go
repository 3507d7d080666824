package planner

import (
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
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
// ordinal order — but only beside a MAIN proven alive: one that answered the leader's SHOW
// REPLICATION LAG in this pass (the leader asks the MAIN itself; a dead MAIN shows up for
// instance_down_timeout_sec, and after a leader change or FORCE RESET its connector starts
// alive), or at bootstrap, when every registered instance is an up replica and none is MAIN.
// Beside a dead MAIN for which Memgraph found no failover candidate, a new instance, empty, would
// be the only one: the coordinators promote it and the cluster follows it, losing every
// acknowledged write (Memgraph v3.12.0 coordinator_instance.cpp GetInstanceForFailover:
// max_failover_replica_lag excludes nobody by default). Progress.RegistrationHeld says why.
func planDataRegistration(d topology.Declared, v rowIndex, m mainState, p *Progress) []Command {
	if restoreHolds(d, v) {
		for _, di := range d.DataInstances {
			p.PendingDataInstances = append(p.PendingDataInstances, di.Name)
		}
		p.RegistrationHeld = d.RestoreHeld
		return nil
	}
	var held []string
	var out []Command
	for _, di := range d.DataInstances {
		if row, ok := v.data[di.Name]; ok {
			p.Drift = append(p.Drift, dataDrift(di, row)...)
			continue
		}
		if rebuildHolds(d, di.Name) {
			continue // unregistered for a rebuild: planRebuild reports it
		}
		p.PendingDataInstances = append(p.PendingDataInstances, di.Name)
		if !m.noMain() && !mainAnswered(v, m) {
			held = append(held, di.Name)
			continue
		}
		out = append(out, RegisterInstance{Name: di.Name, Config: instanceConfig(di)})
	}
	if len(held) > 0 {
		p.RegistrationHeld = fmt.Sprintf("registering %s waits for %s: a new, empty instance beside a dead MAIN would be the "+
			"coordinators' only failover candidate, losing the MAIN's data", strings.Join(held, ", "), awaitedMain(v, m))
	}
	return out
}

// restoreHolds: the cluster restores a backup into its first MAIN (topology.Declared.RestoreHeld)
// and no data instance is registered yet. Once one is, the restore is behind the cluster.
func restoreHolds(d topology.Declared, v rowIndex) bool {
	return d.RestoreHeld != "" && len(v.data) == 0
}

// mainAnswered: the observed MAIN answered the leader's SHOW REPLICATION LAG in this pass (the
// query is served by the MAIN; it has no rows while the MAIN does not answer).
func mainAnswered(v rowIndex, m mainState) bool {
	_, ok := v.lag[m.name]
	return m.name != "" && ok
}

// awaitedMain says what registration waits for.
func awaitedMain(v rowIndex, m mainState) string {
	switch {
	case m.name == "":
		return "a MAIN: none is alive (" + strings.Join(m.unproven, ", ") + " down or of unknown role)"
	case v.lag == nil:
		return "MAIN " + m.name + " to be proven alive (SHOW REPLICATION LAG not read)"
	}
	return "MAIN " + m.name + " to answer (SHOW REPLICATION LAG has no row for it)"
}

func coordinatorConfig(c topology.Coordinator) memgraph.CoordinatorConfig {
	return memgraph.CoordinatorConfig{
		BoltServer:        c.AdvertisedBoltServer(),
		CoordinatorServer: c.CoordinatorServer,
		ManagementServer:  c.ManagementServer,
	}
}

func instanceConfig(di topology.DataInstance) memgraph.InstanceConfig {
	return memgraph.InstanceConfig{
		BoltServer:        di.AdvertisedBoltServer(),
		ManagementServer:  di.ManagementServer,
		ReplicationServer: di.ReplicationServer,
		Mode:              registrationMode(di.Mode),
	}
}

// registrationMode is the AS clause of a declared mode; Sync (and "", undeclared) has none.
func registrationMode(m v1alpha1.ReplicationMode) memgraph.ReplicationMode {
	switch m {
	case v1alpha1.ReplicationAsync:
		return memgraph.ModeAsync
	case v1alpha1.ReplicationStrictSync:
		return memgraph.ModeStrictSync
	}
	return memgraph.ModeSync
}

// coordinatorDrift compares every address SHOW INSTANCES reports for a coordinator. A
// bolt_server alone that differs is no drift: the plan updates it in place
// (planAdvertisement); beside another address that differs, the registration is someone
// else's, and every difference is reported.
func coordinatorDrift(c topology.Coordinator, row memgraph.Instance) []Drift {
	return withBoltDrift(c.Member, row, drifts(c.Name,
		[3]string{"coordinator_server", row.CoordinatorServer, c.CoordinatorServer},
		[3]string{"management_server", row.ManagementServer, c.ManagementServer},
	))
}

// dataDrift compares the addresses SHOW INSTANCES reports for a data instance (it does not
// report the replication_server), as coordinatorDrift does.
func dataDrift(di topology.DataInstance, row memgraph.Instance) []Drift {
	return withBoltDrift(di.Member, row, drifts(di.Name,
		[3]string{"management_server", row.ManagementServer, di.ManagementServer},
	))
}

// withBoltDrift puts a differing bolt_server in front of the other drifts, when there are any.
func withBoltDrift(m topology.Member, row memgraph.Instance, others []Drift) []Drift {
	if len(others) == 0 {
		return nil
	}
	return append(drifts(m.Name, [3]string{"bolt_server", row.BoltServer, m.AdvertisedBoltServer()}), others...)
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

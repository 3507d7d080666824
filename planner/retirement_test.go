package planner

import (
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

func caughtUp(ns ...int) map[string]int64 {
	m := map[string]int64{}
	for _, n := range ns {
		m[dataName(n)] = 0
	}
	return m
}

func with(m map[string]int64, name string, behind int64) map[string]int64 {
	m[name] = behind
	return m
}

func TestPlanDataRetirement(t *testing.T) {
	tenantLag := lag(7, caughtUp(0, 1, 2))
	tenantLag[2].Databases["tenant"] = memgraph.DatabaseLag{CommittedTxns: 4} // instance_2, the MAIN
	tenantLag[1].Databases["tenant"] = memgraph.DatabaseLag{CommittedTxns: 4} // instance_1 has it too
	foreign := memgraph.Instance{Name: "instance_7", BoltServer: "legacy.example:7687",
		ManagementServer: "legacy.example:10000", Health: memgraph.HealthUp, Role: memgraph.RoleReplica}

	runPlanCases(t, []planCase{{
		name: "MAIN on a retiring ordinal is handed to caught-up survivors, then unregistered",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), mainRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3), Lag: lag(9, caughtUp(0, 1, 2))},
		want:     []string{qHandover(2, 0), qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			HandoverFrom: "instance_2", HandoverTo: "instance_0"},
		needsLag: true,
	}, {
		name: "MAIN on a survivor: the retiring replica is just unregistered",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1), replica(2))),
			Leader: "coordinator_1", Span: replicas(3, 3)},
		want:     []string{qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", RetiringDataInstances: names("instance", 2)},
	}, {
		name: "a down survivor is no candidate",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(downRow(0), replica(1), mainRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3), Lag: lag(9, caughtUp(1, 2))},
		want:     []string{qHandover(2, 1), qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			HandoverFrom: "instance_2", HandoverTo: "instance_1"},
		needsLag: true,
	}, {
		name: "a lagging survivor is no candidate",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), mainRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3), Lag: lag(9, with(caughtUp(1, 2), "instance_0", 3))},
		want:     []string{qHandover(2, 1), qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			HandoverFrom: "instance_2", HandoverTo: "instance_1"},
		needsLag: true,
	}, {
		name: "a survivor missing from the lag rows is not proven",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), mainRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3), Lag: lag(9, caughtUp(1, 2))},
		want:     []string{qHandover(2, 1), qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			HandoverFrom: "instance_2", HandoverTo: "instance_1"},
		needsLag: true,
	}, {
		name: "a survivor missing one of the MAIN's databases is not proven",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), mainRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3), Lag: tenantLag},
		want:     []string{qHandover(2, 1), qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			HandoverFrom: "instance_2", HandoverTo: "instance_1"},
		needsLag: true,
	}, {
		name: "no caught-up survivor: nothing is demoted and the MAIN stays, other retirees go",
		d:    declared(3, 2, 3, 4),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), downRow(1), mainRow(2), replica(3))),
			Leader: "coordinator_1", Span: replicas(3, 4), Lag: lag(9, with(caughtUp(2, 3), "instance_0", 2))},
		want:     []string{qUnregister(3)},
		replicas: replicas(3, 4),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2, 3),
			NoCaughtUpSurvivor: "no declared survivor is up and caught up: instance_0 is 2 transactions behind on database memgraph; instance_1 is down"},
		needsLag: true,
	}, {
		name: "retiring MAIN without observed lag is not handed over",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), mainRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			NoCaughtUpSurvivor: "replication lag was not observed"},
		needsLag: true,
	}, {
		name: "lag rows without the MAIN prove nothing",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), mainRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3), Lag: lag(9, caughtUp(0, 1))},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			NoCaughtUpSurvivor: "SHOW REPLICATION LAG lists no database for MAIN instance_2"},
		needsLag: true,
	}, {
		name: "several retiring at once, MAIN among them",
		d:    declared(3, 2, 3, 5),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), replica(2), mainRow(3), replica(4))),
			Leader: "coordinator_1", Span: replicas(3, 5), Lag: lag(9, caughtUp(0, 1, 2, 3, 4))},
		want:     []string{qHandover(3, 0), qUnregister(2), qUnregister(3), qUnregister(4)},
		replicas: replicas(3, 5),
		progress: Progress{Leader: "coordinator_1", Main: "instance_3", RetiringDataInstances: names("instance", 2, 3, 4),
			HandoverFrom: "instance_3", HandoverTo: "instance_0"},
		needsLag: true,
	}, {
		name: "shrink to one data instance",
		d:    declared(3, 1, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), mainRow(1), replica(2))),
			Leader: "coordinator_1", Span: replicas(3, 3), Lag: lag(9, caughtUp(0, 1, 2))},
		want:     []string{qHandover(1, 0), qUnregister(1), qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_1", RetiringDataInstances: names("instance", 1, 2),
			HandoverFrom: "instance_1", HandoverTo: "instance_0"},
		needsLag: true,
	}, {
		name:     "an already-unregistered retiring member needs nothing and the count drops",
		d:        declared(3, 2, 3, 3),
		o:        Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1))), Leader: "coordinator_1", Span: replicas(3, 3)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0"},
	}, {
		name: "partly unregistered range keeps the size that still holds the registered one",
		d:    declared(3, 2, 3, 4),
		o: Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1), replica(2))),
			Leader: "coordinator_1", Span: replicas(3, 4)},
		want:     []string{qUnregister(2)},
		replicas: replicas(3, 4),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", RetiringDataInstances: names("instance", 2)},
	}, {
		name: "an undeclared instance outside the range is never touched",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1), foreign)),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0"},
	}, {
		name: "without a MAIN row a dead retiring instance may be the MAIN and stays registered",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), downRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", RetiringDataInstances: names("instance", 2),
			MainUnproven: names("instance", 2), RetiringMaybeMain: names("instance", 2)},
	}, {
		name: "with the MAIN elsewhere a dead retiring instance is a replica and is unregistered",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1), downRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3)},
		want:     []string{qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", RetiringDataInstances: names("instance", 2)},
	}, {
		// Raft has one MAIN; a view with two is inconsistent, and UNREGISTER of an alive MAIN is
		// refused (found by FuzzPlan).
		name: "a second row reporting main is never unregistered",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1), mainRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", RetiringDataInstances: names("instance", 2),
			RetiringMaybeMain: names("instance", 2)},
	}, {
		// instance_2 may be the MAIN an interrupted handover demoted, holding every acknowledged
		// write: it stays registered until a MAIN exists again (the next pass unregisters it).
		name: "no MAIN at all while shrinking: Memgraph picks the most up-to-date, the retiring replica stays registered",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), replica(2))),
			Leader: "coordinator_1", Span: replicas(3, 3)},
		want:     []string{memgraph.ForceResetClusterStateQuery},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", ForceReset: true, RetiringDataInstances: names("instance", 2),
			RetiringMaybeMain: names("instance", 2)},
	}})
}

func TestPlanCoordinatorRetirement(t *testing.T) {
	runPlanCases(t, []planCase{{
		name:     "leader on a retiring ordinal: remove the other, yield last",
		d:        declared(3, 2, 5, 2),
		o:        Observed{Instances: rows(coords(5, 5), one(mainRow(0), replica(1))), Leader: "coordinator_5", Span: replicas(5, 2)},
		want:     []string{qRemove(4), qYield},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_5", Main: "instance_0", RetiringCoordinators: names("coordinator", 4, 5), YieldPending: true},
	}, {
		name:     "retiring leader alone: only the yield",
		d:        declared(3, 2, 5, 2),
		o:        Observed{Instances: rows(coords(3, 0), one(coord(5, memgraph.RoleLeader), mainRow(0), replica(1))), Leader: "coordinator_5", Span: replicas(5, 2)},
		want:     []string{qYield},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_5", Main: "instance_0", RetiringCoordinators: names("coordinator", 5), YieldPending: true},
	}, {
		name:     "two coordinators retiring at once under a surviving leader",
		d:        declared(3, 2, 5, 2),
		o:        Observed{Instances: rows(coords(5, 2), one(mainRow(0), replica(1))), Leader: "coordinator_2", Span: replicas(5, 2)},
		want:     []string{qRemove(4), qRemove(5)},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_2", Main: "instance_0", RetiringCoordinators: names("coordinator", 4, 5)},
	}, {
		name:     "leader outside the retiring set, one retiree already removed",
		d:        declared(3, 2, 5, 2),
		o:        Observed{Instances: rows(coords(4, 1), one(mainRow(0), replica(1))), Leader: "coordinator_1", Span: replicas(5, 2)},
		want:     []string{qRemove(4)},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", RetiringCoordinators: names("coordinator", 4)},
	}, {
		name:     "all retirees removed: the count drops",
		d:        declared(3, 2, 5, 2),
		o:        Observed{Instances: rows(coords(3, 3), one(mainRow(0), replica(1))), Leader: "coordinator_3", Span: replicas(5, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_3", Main: "instance_0"},
	}, {
		name: "data retirement and non-leader removal come before the yield",
		d:    declared(3, 2, 5, 3),
		o: Observed{Instances: rows(coords(5, 4), one(replica(0), replica(1), mainRow(2))),
			Leader: "coordinator_4", Span: replicas(5, 3), Lag: lag(3, caughtUp(0, 1, 2))},
		want:     []string{qHandover(2, 0), qUnregister(2), qRemove(5), qYield},
		replicas: replicas(5, 3),
		progress: Progress{Leader: "coordinator_4", Main: "instance_2",
			RetiringCoordinators: names("coordinator", 4, 5), RetiringDataInstances: names("instance", 2),
			HandoverFrom: "instance_2", HandoverTo: "instance_0", YieldPending: true},
		needsLag: true,
	}, {
		name: "mixed grow and shrink across roles: add before retiring",
		d:    declared(5, 2, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1), replica(2))),
			Leader: "coordinator_1", Span: replicas(3, 3)},
		want:     []string{qAdd(4), qAdd(5), qUnregister(2)},
		replicas: replicas(5, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0",
			PendingCoordinators: names("coordinator", 4, 5), RetiringDataInstances: names("instance", 2)},
	}, {
		name: "a lost survivor is re-added before retirees are removed",
		d:    declared(3, 2, 5, 2),
		o: Observed{Instances: rows(one(coord(1, memgraph.RoleLeader), coord(3, memgraph.RoleFollower),
			coord(4, memgraph.RoleFollower), coord(5, memgraph.RoleFollower)), one(mainRow(0), replica(1))),
			Leader: "coordinator_1", Span: replicas(5, 2)},
		want:     []string{qAdd(2), qRemove(4), qRemove(5)},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0",
			PendingCoordinators: names("coordinator", 2), RetiringCoordinators: names("coordinator", 4, 5)},
	}, {
		name:     "no leader known: no removal is aimed blindly",
		d:        declared(3, 2, 5, 2),
		o:        Observed{Instances: rows(coords(5, 0), one(mainRow(0), replica(1))), Span: replicas(5, 2)},
		replicas: replicas(5, 2),
		progress: Progress{Main: "instance_0", RetiringCoordinators: names("coordinator", 4, 5), LeaderUnknown: true},
	}, {
		name: "a row reporting another retiring leader mid-election is not removed",
		d:    declared(3, 2, 5, 2),
		o: Observed{Instances: rows(coords(3, 1), one(coord(4, memgraph.RoleLeader), coord(5, memgraph.RoleFollower), mainRow(0), replica(1))),
			Leader: "coordinator_1", Span: replicas(5, 2)},
		want:     []string{qRemove(5)},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", RetiringCoordinators: names("coordinator", 4, 5)},
	}})
}

package planner

import (
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

func TestPlanRegistration(t *testing.T) {
	humanMain := memgraph.Instance{Name: "analytics", BoltServer: "analytics.example:7687",
		ManagementServer: "analytics.example:10000", Health: memgraph.HealthUp, Role: memgraph.RoleMain}
	humanDown := humanMain
	humanDown.Health, humanDown.Role = memgraph.HealthDown, memgraph.RoleUnknown
	movedBolt := coord(2, memgraph.RoleFollower)
	movedBolt.BoltServer = "coordinator-2.example:7687"
	movedData := replica(1)
	movedData.ManagementServer = "10.0.0.7:10000"
	unknownMain := data(1, memgraph.HealthUnknown, memgraph.RoleMain)

	runPlanCases(t, []planCase{{
		name:     "fresh cluster 3+2 bootstraps in one plan against the fresh leader",
		d:        declared(3, 2, 3, 2),
		o:        Observed{Instances: one(freshSelf(1)), Leader: "coordinator_1", Span: replicas(3, 2)},
		want:     []string{qAdd(1), qAdd(2), qAdd(3), qRegister(0), qRegister(1), qMain(0)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1",
			PendingCoordinators: names("coordinator", 1, 2, 3), PendingDataInstances: names("instance", 0, 1),
			Promote: "instance_0"},
	}, {
		name: "fresh cluster 5+3 bootstraps in one plan",
		d:    declared(5, 3, 5, 3),
		o:    Observed{Instances: one(freshSelf(1)), Leader: "coordinator_1", Span: replicas(5, 3)},
		want: []string{qAdd(1), qAdd(2), qAdd(3), qAdd(4), qAdd(5),
			qRegister(0), qRegister(1), qRegister(2), qMain(0)},
		replicas: replicas(5, 3),
		progress: Progress{Leader: "coordinator_1",
			PendingCoordinators: names("coordinator", 1, 2, 3, 4, 5), PendingDataInstances: names("instance", 0, 1, 2),
			Promote: "instance_0"},
	}, {
		name:     "fresh leader other than coordinator_1 adds itself with its own identity",
		d:        declared(3, 2, 3, 2),
		o:        Observed{Instances: one(freshSelf(2)), Leader: "coordinator_2", Span: replicas(3, 2)},
		want:     []string{qAdd(1), qAdd(2), qAdd(3), qRegister(0), qRegister(1), qMain(0)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_2",
			PendingCoordinators: names("coordinator", 1, 2, 3), PendingDataInstances: names("instance", 0, 1),
			Promote: "instance_0"},
	}, {
		name: "partial registration finishes and promotes the lowest registered live instance",
		d:    declared(3, 3, 3, 3),
		o: Observed{Instances: rows(coords(2, 1), one(replica(1))),
			Leader: "coordinator_1", Span: replicas(3, 3)},
		want:     []string{qAdd(3), qRegister(0), qRegister(2), qMain(1)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", PendingCoordinators: names("coordinator", 3),
			PendingDataInstances: names("instance", 0, 2), Promote: "instance_1"},
	}, {
		name: "leader listing itself with an empty bolt_server is added, the others are not",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(one(freshSelf(1), coord(2, memgraph.RoleFollower), coord(3, memgraph.RoleFollower)),
			one(mainRow(0), replica(1))), Leader: "coordinator_1", Span: replicas(3, 2)},
		want:     []string{qAdd(1)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", PendingCoordinators: names("coordinator", 1)},
	}, {
		name:     "converged cluster gets nothing",
		d:        declared(3, 2, 3, 2),
		o:        Observed{Instances: rows(coords(3, 2), one(replica(0), mainRow(1))), Leader: "coordinator_2", Span: replicas(3, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_2", Main: "instance_1"},
	}, {
		name: "existing live MAIN is never overridden while a lost registration is re-issued",
		d:    declared(3, 3, 3, 3),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), mainRow(2))),
			Leader: "coordinator_1", Span: replicas(3, 3), Lag: lag(4, caughtUp(0, 2))},
		want:     []string{qRegister(1)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", PendingDataInstances: names("instance", 1)},
		needsLag: true,
	}, {
		name: "a down instance may be the Raft MAIN: nobody is promoted",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(downRow(0), replica(1))),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", MainUnproven: names("instance", 0)},
	}, {
		name: "MAIN row with unknown health still counts as the MAIN",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), unknownMain)),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_1"},
	}, {
		name: "lost registrations of a coordinator and a data instance are re-issued, MAIN untouched",
		d:    declared(3, 3, 3, 3),
		o: Observed{Instances: rows(one(coord(1, memgraph.RoleLeader), coord(3, memgraph.RoleFollower)),
			one(mainRow(0), replica(2))), Leader: "coordinator_1", Span: replicas(3, 3), Lag: lag(4, caughtUp(0, 2))},
		want:     []string{qAdd(2), qRegister(1)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0",
			PendingCoordinators: names("coordinator", 2), PendingDataInstances: names("instance", 1)},
		needsLag: true,
	}, {
		name: "an unregistered instance is not promoted over a live registered one",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(replica(1))),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		want:     []string{qRegister(0), qMain(1)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", PendingDataInstances: names("instance", 0), Promote: "instance_1"},
	}, {
		name: "a bolt_server alone that differs is updated in place; another address that differs is reported, not rewritten",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(one(coord(1, memgraph.RoleLeader), movedBolt, coord(3, memgraph.RoleFollower)),
			one(mainRow(0), movedData)), Leader: "coordinator_1", Span: replicas(3, 2)},
		want:     []string{qUpdateCoordinator(2, addr(coordHost(2), 7687))},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0",
			AddressUpdates: []AddressUpdate{{Name: "coordinator_2", From: "coordinator-2.example:7687", To: addr(coordHost(2), 7687)}},
			Drift: []Drift{
				{Name: "instance_1", Field: "management_server", Observed: "10.0.0.7:10000", Declared: addr(dataHost(1), 10000)},
			}},
	}, {
		name: "an extra instance a human registered as MAIN is left alone and not overridden",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), humanMain)),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "analytics"},
	}, {
		name: "a down instance a human registered blocks promotion but gets no command",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), humanDown)),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", MainUnproven: []string{"analytics"}},
	}})
}

// A MAIN that died with no failover candidate: a new, empty data instance registered now would
// be the only candidate, and Memgraph would promote it and lose the MAIN's data. Registration
// waits for a MAIN; the status says why.
func TestNoRegistrationBesideADeadMainWithoutCandidates(t *testing.T) {
	runPlanCases(t, []planCase{{
		name:     "the only data instance, MAIN, is down: instance_1 waits",
		d:        declared(3, 2, 3, 2),
		o:        Observed{Instances: rows(coords(3, 1), one(downRow(0))), Leader: "coordinator_1", Span: replicas(3, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", PendingDataInstances: names("instance", 1), MainUnproven: names("instance", 0),
			RegistrationHeld: "registering instance_1 waits for a MAIN: none is alive (instance_0 down or of unknown role): a " +
				"new, empty instance beside a dead MAIN would be the coordinators' only failover candidate, losing the MAIN's data"},
	}, {
		name: "the MAIN looks up but did not answer the leader (it died moments ago, or a new leader's connector starts alive)",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(mainRow(0))), Leader: "coordinator_1", Span: replicas(3, 2),
			Lag: []memgraph.InstanceLag{}},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", PendingDataInstances: names("instance", 1),
			RegistrationHeld: "registering instance_1 waits for MAIN instance_0 to answer (SHOW REPLICATION LAG has no row for " +
				"it): a new, empty instance beside a dead MAIN would be the coordinators' only failover candidate, losing the MAIN's data"},
		needsLag: true,
	}, {
		name: "the MAIN answered: the new instance is registered",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(mainRow(0))), Leader: "coordinator_1", Span: replicas(3, 2),
			Lag: lag(4, caughtUp(0))},
		want:     []string{qRegister(1)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", PendingDataInstances: names("instance", 1)},
		needsLag: true,
	}, {
		name:     "bootstrap: registered instances all up replicas, no MAIN yet: registered and elected",
		d:        declared(3, 2, 3, 2),
		o:        Observed{Instances: rows(coords(3, 1), one(replica(0))), Leader: "coordinator_1", Span: replicas(3, 2)},
		want:     []string{qRegister(1), qMain(0)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", PendingDataInstances: names("instance", 1), Promote: "instance_0"},
	}})
}

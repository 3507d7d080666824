package planner

import (
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// unknownHealth is a not-ready leader's table: the same rows with every health unknown.
func unknownHealth(in []memgraph.Instance) []memgraph.Instance {
	out := append([]memgraph.Instance{}, in...)
	for i := range out {
		out[i].Health = memgraph.HealthUnknown
	}
	return out
}

func TestPlanHalfJoinedCoordinators(t *testing.T) {
	runPlanCases(t, []planCase{{
		name: "a half-joined declared coordinator is reported, never added",
		d:    declared(5, 2, 5, 2),
		o: Observed{Instances: rows(coords(4, 1), one(halfJoined(5), mainRow(0), replica(1))),
			Leader: "coordinator_1", Span: replicas(5, 2)},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", HalfJoined: names("coordinator", 5)},
	}, {
		name: "a half-joined retiring coordinator is never removed and holds the StatefulSet",
		d:    declared(3, 2, 5, 2),
		o: Observed{Instances: rows(coords(4, 1), one(halfJoined(5), mainRow(0), replica(1))),
			Leader: "coordinator_1", Span: replicas(5, 2)},
		want:     []string{qRemove(4)},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0",
			RetiringCoordinators: names("coordinator", 4, 5), HalfJoined: names("coordinator", 5)},
	}, {
		name: "once only the half-joined member is left, the StatefulSet still holds it",
		d:    declared(3, 2, 5, 2),
		o: Observed{Instances: rows(coords(3, 2), one(halfJoined(5), mainRow(0), replica(1))),
			Leader: "coordinator_2", Span: replicas(5, 2)},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_2", Main: "instance_0",
			RetiringCoordinators: names("coordinator", 5), HalfJoined: names("coordinator", 5)},
	}, {
		name: "a half-joined member that leads adds itself before it yields, then can be removed",
		d:    declared(3, 2, 5, 2),
		o: Observed{Instances: rows(coords(3, 0), one(freshSelf(5), mainRow(0), replica(1))),
			Leader: "coordinator_5", Span: replicas(5, 2)},
		want:     []string{qAdd(5), qYield},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_5", Main: "instance_0",
			RetiringCoordinators: names("coordinator", 5), YieldPending: true},
	}, {
		name: "the leader's own empty bolt_server is not half-joined: it is ADDed",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(one(freshSelf(1)), one(coord(2, memgraph.RoleFollower), coord(3, memgraph.RoleFollower), mainRow(0), replica(1))),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		want:     []string{qAdd(1)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", PendingCoordinators: names("coordinator", 1)},
	}})
}

func TestPlanNothingOnANotReadyLeader(t *testing.T) {
	runPlanCases(t, []planCase{{
		name: "a not-ready leader's table is no evidence: nothing planned, StatefulSets held",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: unknownHealth(rows(coords(3, 2), one(mainRow(0), replica(1), replica(2)))),
			Leader: "coordinator_2", Span: replicas(3, 3)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_2", LeaderNotReady: true},
	}, {
		name: "not even registration or promotion",
		d:    declared(3, 3, 3, 3),
		o: Observed{Instances: unknownHealth(rows(coords(3, 2), one(replica(0), replica(1)))),
			Leader: "coordinator_2", Span: replicas(3, 3)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_2", LeaderNotReady: true},
	}, {
		name: "growth is still returned at once",
		d:    declared(5, 3, 3, 2),
		o: Observed{Instances: unknownHealth(rows(coords(3, 1), one(mainRow(0), replica(1)))),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		replicas: replicas(5, 3),
		progress: Progress{Leader: "coordinator_1", LeaderNotReady: true},
	}})
}

package planner

import (
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// Metacontroller's cache may show a StatefulSet size the hook already changed. These cases pin
// that neither direction of staleness re-grows a finished shrink or shrinks past a member that
// is still registered (see "Stale views" in the package doc).
func TestPlanStaleStatefulSetViews(t *testing.T) {
	lookalike := data(4, memgraph.HealthUp, memgraph.RoleReplica)
	lookalike.ManagementServer = "legacy.example:10000"

	runPlanCases(t, []planCase{{
		name: "stale-high after a finished shrink: retirees are gone, so no re-grow",
		d:    declared(3, 2, 5, 3),
		o: Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1))),
			Leader: "coordinator_1", Span: replicas(5, 3)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0"},
	}, {
		name: "stale-low after a growth the cache has not seen, spec shrunk back: members are retired and held",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(5, 1), one(mainRow(0), replica(1), replica(2))),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		want:     []string{qUnregister(2), qRemove(4), qRemove(5)},
		replicas: replicas(5, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0",
			RetiringCoordinators: names("coordinator", 4, 5), RetiringDataInstances: names("instance", 2)},
	}, {
		name: "stale-low with the MAIN beyond the cached size: handed over first",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), replica(2), mainRow(3))),
			Leader: "coordinator_1", Span: replicas(3, 2), Lag: lag(5, caughtUp(0, 1, 2, 3))},
		want:     []string{qHandover(3, 0), qUnregister(2), qUnregister(3)},
		replicas: replicas(3, 4),
		progress: Progress{Leader: "coordinator_1", Main: "instance_3", RetiringDataInstances: names("instance", 2, 3),
			HandoverFrom: "instance_3", HandoverTo: "instance_0"},
		needsLag: true,
	}, {
		// instance_2 may be the MAIN an interrupted handover demoted: the cache not showing its
		// StatefulSet size makes it no less a retiring member (found by FuzzPlan).
		name: "stale-low with no MAIN and a member beyond the cached size: Memgraph picks, not the ordinal",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(replica(0), replica(1), replica(2))),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		want:     []string{memgraph.ForceResetClusterStateQuery},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", ForceReset: true, RetiringDataInstances: names("instance", 2),
			RetiringMaybeMain: names("instance", 2)},
	}, {
		name: "a look-alike name with another address is not ours and holds nothing",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1), lookalike)),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0"},
	}, {
		name: "stale-low retiring leader beyond the cached size still yields instead of being removed",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(coords(5, 5), one(mainRow(0), replica(1))),
			Leader: "coordinator_5", Span: replicas(3, 2)},
		want:     []string{qRemove(4), qYield},
		replicas: replicas(5, 2),
		progress: Progress{Leader: "coordinator_5", Main: "instance_0",
			RetiringCoordinators: names("coordinator", 4, 5), YieldPending: true},
	}})
}

func TestHoldNeverShrinks(t *testing.T) {
	for _, tc := range []struct {
		name         string
		coords, data int32
		span, want   [2]int32
	}{
		{"growth goes out at once", 5, 3, [2]int32{3, 2}, [2]int32{5, 3}},
		{"a shrink is held", 3, 2, [2]int32{5, 4}, [2]int32{5, 4}},
		{"nothing exists yet", 3, 2, [2]int32{0, 0}, [2]int32{3, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			span := replicas(tc.span[0], tc.span[1])
			got := Hold(declared(tc.coords, tc.data, tc.span[0], tc.span[1]), span)
			if want := replicas(tc.want[0], tc.want[1]); got != want {
				t.Errorf("Hold = %+v, want %+v", got, want)
			}
		})
	}
}

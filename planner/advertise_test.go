package planner

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// external is d with member name (coordinator_<id> or instance_<n>) to be advertised at address.
func external(d topology.Declared, addresses map[string]string) topology.Declared {
	d.Coordinators = append([]topology.Coordinator(nil), d.Coordinators...)
	d.DataInstances = append([]topology.DataInstance(nil), d.DataInstances...)
	for i := range d.Coordinators {
		d.Coordinators[i].Advertised = addresses[d.Coordinators[i].Name]
	}
	for i := range d.DataInstances {
		d.DataInstances[i].Advertised = addresses[d.DataInstances[i].Name]
	}
	return d
}

// withBolt is row registered with bolt_server bolt.
func withBolt(row memgraph.Instance, bolt string) memgraph.Instance {
	row.BoltServer = bolt
	return row
}

func lbAddr(n int) string { return fmt.Sprintf("198.51.100.%d:7687", n) }

func TestPlanAdvertisement(t *testing.T) {
	outside := map[string]string{"coordinator_1": lbAddr(1), "coordinator_2": lbAddr(2), "coordinator_3": lbAddr(3),
		"instance_0": lbAddr(10), "instance_1": lbAddr(11)}
	strayMgmt := withBolt(replica(1), lbAddr(99))
	strayMgmt.ManagementServer = "10.0.0.7:10000"
	runPlanCases(t, []planCase{{
		name: "addresses assigned: every registered member's bolt_server is updated in place, nothing else is sent",
		d:    external(declared(3, 2, 3, 2), outside),
		o:    Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1))), Leader: "coordinator_1", Span: replicas(3, 2)},
		want: []string{qUpdateCoordinator(1, lbAddr(1)), qUpdateCoordinator(2, lbAddr(2)), qUpdateCoordinator(3, lbAddr(3)),
			qUpdateInstance(0, lbAddr(10)), qUpdateInstance(1, lbAddr(11))},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", AddressUpdates: []AddressUpdate{
			{Name: "coordinator_1", From: addr(coordHost(1), 7687), To: lbAddr(1)},
			{Name: "coordinator_2", From: addr(coordHost(2), 7687), To: lbAddr(2)},
			{Name: "coordinator_3", From: addr(coordHost(3), 7687), To: lbAddr(3)},
			{Name: "instance_0", From: addr(dataHost(0), 7687), To: lbAddr(10)},
			{Name: "instance_1", From: addr(dataHost(1), 7687), To: lbAddr(11)},
		}},
	}, {
		name: "advertised as assigned: converged, no command",
		d:    external(declared(3, 2, 3, 2), outside),
		o: Observed{Instances: rows(
			one(withBolt(coord(1, memgraph.RoleLeader), lbAddr(1)), withBolt(coord(2, memgraph.RoleFollower), lbAddr(2)),
				withBolt(coord(3, memgraph.RoleFollower), lbAddr(3))),
			one(withBolt(mainRow(0), lbAddr(10)), withBolt(replica(1), lbAddr(11)))), Leader: "coordinator_1", Span: replicas(3, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0"},
	}, {
		name: "external access off: the in-cluster names come back, in place",
		d:    declared(3, 2, 3, 2),
		o: Observed{Instances: rows(one(coord(1, memgraph.RoleLeader), withBolt(coord(2, memgraph.RoleFollower), lbAddr(2)),
			coord(3, memgraph.RoleFollower)), one(mainRow(0), withBolt(replica(1), lbAddr(11)))), Leader: "coordinator_1", Span: replicas(3, 2)},
		want:     []string{qUpdateCoordinator(2, addr(coordHost(2), 7687)), qUpdateInstance(1, addr(dataHost(1), 7687))},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", AddressUpdates: []AddressUpdate{
			{Name: "coordinator_2", From: lbAddr(2), To: addr(coordHost(2), 7687)},
			{Name: "instance_1", From: lbAddr(11), To: addr(dataHost(1), 7687)},
		}},
	}, {
		name: "a new member is registered at its external address at once; a fresh leader adds itself at its own",
		d:    external(declared(3, 2, 3, 2), map[string]string{"coordinator_1": lbAddr(1), "instance_0": lbAddr(10)}),
		o:    Observed{Instances: one(freshSelf(1)), Leader: "coordinator_1", Span: replicas(3, 2)},
		want: []string{
			fmt.Sprintf("ADD COORDINATOR 1 WITH CONFIG {'bolt_server': '%s', 'coordinator_server': '%s:12000', 'management_server': '%s:10000'}",
				lbAddr(1), coordHost(1), coordHost(1)),
			qAdd(2), qAdd(3),
			fmt.Sprintf("REGISTER INSTANCE instance_0 WITH CONFIG {'bolt_server': '%s', 'management_server': '%s:10000', 'replication_server': '%s:20000'}",
				lbAddr(10), dataHost(0), dataHost(0)),
			qRegister(1), qMain(0),
		},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", PendingCoordinators: names("coordinator", 1, 2, 3),
			PendingDataInstances: names("instance", 0, 1), Promote: "instance_0"},
	}, {
		name: "a half-joined coordinator and someone else's registration are never updated",
		d:    external(declared(3, 2, 3, 2), outside),
		o: Observed{Instances: rows(one(withBolt(coord(1, memgraph.RoleLeader), lbAddr(1)), halfJoined(2),
			withBolt(coord(3, memgraph.RoleFollower), lbAddr(3))), one(withBolt(mainRow(0), lbAddr(10)), strayMgmt)),
			Leader: "coordinator_1", Span: replicas(3, 2)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", HalfJoined: names("coordinator", 2), Drift: []Drift{
			{Name: "instance_1", Field: "bolt_server", Observed: lbAddr(99), Declared: lbAddr(11)},
			{Name: "instance_1", Field: "management_server", Observed: "10.0.0.7:10000", Declared: addr(dataHost(1), 10000)},
		}},
	}})
}

// The catch-up reads go to the MAIN's in-cluster address, whatever clients are given.
func TestCatchUpSourceIsTheInClusterAddress(t *testing.T) {
	d := external(declared(3, 3, 3, 4), map[string]string{"instance_1": lbAddr(11)})
	for _, tc := range []struct {
		name string
		rows []memgraph.Instance
		want string
	}{
		{"a declared MAIN advertised outside", one(replica(0), withBolt(mainRow(1), lbAddr(11))), addr(dataHost(1), 7687)},
		{"a retiring MAIN", one(replica(0), withBolt(mainRow(3), lbAddr(13))), addr(dataHost(3), 7687)},
		{"a MAIN the hook did not declare", one(replica(0), memgraph.Instance{Name: "analytics", BoltServer: "10.1.1.1:7687",
			ManagementServer: "10.1.1.1:10000", Health: memgraph.HealthUp, Role: memgraph.RoleMain}), "10.1.1.1:7687"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got, ok := CatchUpSource(d, tc.rows)
			if !ok || got != tc.want {
				t.Errorf("CatchUpSource = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}

func TestUpdateConfigStepsJudgedLikeAnyOther(t *testing.T) {
	cmd := UpdateInstanceConfig{Name: "instance_1", BoltServer: lbAddr(11)}
	for _, tc := range []struct {
		kind memgraph.Kind
		want StepVerdict
	}{
		{memgraph.KindRaftWrite, StepLeaderMoved},
		{memgraph.KindForwardFailed, StepLeaderMoved},
		{memgraph.KindNoSuchInstance, StepFailed},
		{memgraph.KindBadConfig, StepFailed},
	} {
		if got := JudgeStep(cmd, &memgraph.Error{Kind: tc.kind}); got != tc.want {
			t.Errorf("JudgeStep(UPDATE CONFIG, %v) = %v, want %v", tc.kind, got, tc.want)
		}
	}
	if preconditionReads(cmd, nil) != readNothing || preconditionReads(UpdateCoordinatorConfig{ID: 1}, nil) != readNothing {
		t.Error("UPDATE CONFIG reads something before it runs; it is idempotent and harms no member")
	}
	if got := Writes(cmd, nil); !cmp.Equal(got, []string{"UPDATE instance_1 bolt_server TO " + lbAddr(11)}) {
		t.Errorf("Writes = %q", got)
	}
}

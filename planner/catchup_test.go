package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// showing is the MAIN instance_<main>'s SHOW REPLICAS for these lag rows (as reported builds
// it), with the named replicas in another status on database memgraph.
func showing(main int, l []memgraph.InstanceLag, status map[string]string) *MainReplicas {
	rows := replicaRowsFor(dataName(main), l)
	for i := range rows {
		if s, ok := status[rows[i].Name]; ok {
			db := rows[i].Databases["memgraph"]
			db.Status = s
			rows[i].Databases["memgraph"] = db
		}
	}
	return &MainReplicas{Main: dataName(main), Rows: rows}
}

// A lag of 0 is not proof (Memgraph v3.12.0 src/storage/v2/replication/replication_client.cpp:
// SHOW REPLICATION LAG reads the MAIN's advance-only cache, which a replica that lost its data
// keeps while it recovers; interpreter.cpp ~2040–2120: SHOW REPLICAS on the MAIN reports it
// "recovery"). Every path that makes a MAIN waits for "ready" on the MAIN's own SHOW REPLICAS.
func TestALagOfZeroIsNoProofOfCatchUp(t *testing.T) {
	three := func(r ...memgraph.Instance) []memgraph.Instance { return rows(coords(3, 1), r) }
	caught := lag(9, caughtUp(0, 1, 2))
	runPlanCases(t, []planCase{{
		name: "retirement: a recovering survivor is passed over for a ready one",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: three(replica(0), replica(1), mainRow(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Replicas: showing(2, caught, map[string]string{"instance_0": memgraph.ReplicaRecovery})},
		want:     []string{qHandover(2, 1), qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			HandoverFrom: "instance_2", HandoverTo: "instance_1"},
		needsLag: true,
	}, {
		name: "retirement: every survivor recovering: MAIN stays where it is and the status says why",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: three(replica(0), replica(1), mainRow(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Replicas: showing(2, caught, map[string]string{
				"instance_0": memgraph.ReplicaRecovery, "instance_1": memgraph.ReplicaInvalid})},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			NoCaughtUpSurvivor: "no declared survivor is up and caught up: " +
				"instance_0 is recovery, not ready, on database memgraph (SHOW REPLICAS on MAIN instance_2; its lag of 0 is only the MAIN's cached count); " +
				"instance_1 is invalid, not ready, on database memgraph (SHOW REPLICAS on MAIN instance_2; its lag of 0 is only the MAIN's cached count)"},
		needsLag: true,
	}, {
		name: "switchover: the preferred instance recovers with a lag of 0: nothing is demoted",
		d:    preferring(declared(3, 3, 3, 3), "instance_1"),
		o: Observed{Instances: three(mainRow(0), replica(1), replica(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Replicas: showing(0, caught, map[string]string{"instance_1": memgraph.ReplicaRecovery})},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", SwitchoverPending: "switchover of MAIN from instance_0 to the " +
			"preferred instance_1 waits: instance_1 is recovery, not ready, on database memgraph (SHOW REPLICAS on MAIN instance_0; " +
			"its lag of 0 is only the MAIN's cached count)"},
		needsLag: true,
	}, {
		name: "switch back after a failover: the preferred instance returned with a wiped volume and recovers",
		d:    preferring(declared(3, 3, 3, 3), "instance_0"),
		o: Observed{Instances: three(replica(0), mainRow(1), replica(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Replicas: showing(1, caught, map[string]string{"instance_0": memgraph.ReplicaRecovery})},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_1", SwitchoverPending: "switchover of MAIN from instance_1 to the " +
			"preferred instance_0 waits: instance_0 is recovery, not ready, on database memgraph (SHOW REPLICAS on MAIN instance_1; " +
			"its lag of 0 is only the MAIN's cached count)"},
		needsLag: true,
	}, {
		name: "switchover once the preferred instance reports ready",
		d:    preferring(declared(3, 3, 3, 3), "instance_0"),
		o: Observed{Instances: three(replica(0), mainRow(1), replica(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Replicas: showing(1, caught, nil)},
		want:     []string{qHandover(1, 0)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_1", HandoverFrom: "instance_1", HandoverTo: "instance_0", Switchover: true},
		needsLag: true,
	}, {
		name: "SHOW REPLICAS could not be read: no handover, never the lag alone",
		d:    preferring(declared(3, 3, 3, 3), "instance_1"),
		o: Observed{Instances: three(mainRow(0), replica(1), replica(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Replicas: &MainReplicas{Main: "instance_0", Problem: "Authentication failure"}},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", SwitchoverPending: "switchover of MAIN from instance_0 to the " +
			"preferred instance_1 waits: SHOW REPLICAS on MAIN instance_0 could not be read: Authentication failure"},
		needsLag: true,
	}, {
		name: "SHOW REPLICAS of another instance proves nothing about this MAIN's replicas",
		d:    preferring(declared(3, 3, 3, 3), "instance_1"),
		o: Observed{Instances: three(mainRow(0), replica(1), replica(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Replicas: showing(2, caught, nil)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", SwitchoverPending: "switchover of MAIN from instance_0 to the " +
			"preferred instance_1 waits: SHOW REPLICAS was read on instance_2, not on MAIN instance_0"},
		needsLag: true,
	}, {
		name: "a replica SHOW REPLICAS does not list, or without a state on a database of the MAIN, is not proven",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: three(replica(0), replica(1), mainRow(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Replicas: &MainReplicas{Main: "instance_2", Rows: []memgraph.Replica{
				{Name: "instance_1", Databases: map[string]memgraph.ReplicaDatabase{"tenant": {Status: memgraph.ReplicaReady}}}}}},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			NoCaughtUpSurvivor: "no declared survivor is up and caught up: MAIN instance_2's SHOW REPLICAS does not list instance_0; " +
				"MAIN instance_2's SHOW REPLICAS reports no state for instance_1 on database memgraph"},
		needsLag: true,
	}})
}

// Without a SHOW REPLICAS read at all (the hook read only the lag), nothing is proven.
func TestNoShowReplicasNoHandover(t *testing.T) {
	d := preferring(declared(3, 3, 3, 3), "instance_1")
	o := Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1), replica(2))), Leader: "coordinator_1",
		Span: replicas(3, 3), Lag: lag(9, caughtUp(0, 1, 2))}
	got := Decide(d, o)
	want := "switchover of MAIN from instance_0 to the preferred instance_1 waits: SHOW REPLICAS was not read on MAIN instance_0"
	if len(got.Commands) != 0 || got.Progress.SwitchoverPending != want {
		t.Errorf("commands %v, pending %q; want none and %q", queries(got.Commands), got.Progress.SwitchoverPending, want)
	}
}

// The check right before a handover reads SHOW REPLICAS again: a target that started recovering
// since the plan (its volume lost meanwhile) is not promoted.
func TestHandoverPreconditionRereadsShowReplicas(t *testing.T) {
	d := preferring(declared(3, 3, 3, 3), "instance_1")
	view := rows(coords(3, 1), one(mainRow(0), replica(1), replica(2)))
	caught := lag(9, caughtUp(0, 1, 2))
	h := Handover{From: "instance_0", To: "instance_1"}
	for _, tc := range []struct {
		name     string
		replicas *MainReplicas
		want     string
	}{
		{"still ready", showing(0, caught, nil), ""},
		{"recovering now", showing(0, caught, map[string]string{"instance_1": memgraph.ReplicaRecovery}),
			"the cluster changed since the handover was planned; planning again next pass"},
		{"unreadable now", &MainReplicas{Main: "instance_0", Problem: "connection refused"},
			"the cluster changed since the handover was planned; planning again next pass"},
	} {
		got := Precondition(d, replicas(3, 3), nil, h, Fresh{Instances: view, Lag: caught, Replicas: tc.replicas})
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

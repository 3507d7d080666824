package planner

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// ReadDrain takes the MAIN, the leader and the caught-up replicas from the leader's table with
// the handover's proofs: a lag of 0 alone is no proof, and no catch-up read proves nobody.
func TestReadDrain(t *testing.T) {
	table := rows(coords(3, 1), []memgraph.Instance{mainRow(0), replica(1), replica(2)})
	caught := lag(9, caughtUp(0, 1, 2))
	for _, tc := range []struct {
		name string
		o    Observed
		want DrainInput
	}{{
		name: "both replicas proven caught up",
		o:    Observed{Instances: table, Leader: "coordinator_1", Lag: caught, Replicas: showing(0, caught, nil)},
		want: DrainInput{Main: "instance_0", Leader: "coordinator_1", CaughtUp: map[string]bool{"instance_1": true, "instance_2": true}},
	}, {
		name: "a recovering replica with a lag of 0 is not caught up",
		o: Observed{Instances: table, Leader: "coordinator_1", Lag: caught,
			Replicas: showing(0, caught, map[string]string{"instance_1": memgraph.ReplicaRecovery})},
		want: DrainInput{Main: "instance_0", Leader: "coordinator_1", CaughtUp: map[string]bool{"instance_2": true}},
	}, {
		name: "a replica behind is not caught up",
		o: Observed{Instances: table, Leader: "coordinator_1", Lag: lag(9, map[string]int64{"instance_0": 0, "instance_1": 3, "instance_2": 0}),
			Replicas: showing(0, caught, nil)},
		want: DrainInput{Main: "instance_0", Leader: "coordinator_1", CaughtUp: map[string]bool{"instance_2": true}},
	}, {
		name: "no catch-up reads: nobody is proven",
		o:    Observed{Instances: table, Leader: "coordinator_1"},
		want: DrainInput{Main: "instance_0", Leader: "coordinator_1", CaughtUp: map[string]bool{}},
	}, {
		name: "no MAIN: nobody is proven",
		o: Observed{Instances: rows(coords(3, 2), []memgraph.Instance{replica(0), replica(1), replica(2)}), Leader: "coordinator_2",
			Lag: caught},
		want: DrainInput{Leader: "coordinator_2", CaughtUp: map[string]bool{}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ReadDrain(declared(3, 3, 3, 3), DrainInput{}, tc.o)); diff != "" {
				t.Errorf("ReadDrain (-want +got):\n%s", diff)
			}
		})
	}
}

// The drain's handover runs only if PlanDrain, on the rows and catch-up reads taken right before
// it, still hands MAIN over from the same MAIN to the same target.
func TestDrainPrecondition(t *testing.T) {
	in := drainWith(cordon("a"))
	table := rows(coords(3, 1), []memgraph.Instance{mainRow(0), replica(1), replica(2)})
	caught := lag(9, caughtUp(0, 1, 2))
	for _, tc := range []struct {
		name string
		f    Fresh
		want string
	}{{
		name: "still due",
		f:    Fresh{Instances: table, Lag: caught, Replicas: showing(0, caught, nil)},
	}, {
		name: "the target fell behind: another target would be chosen",
		f: Fresh{Instances: table, Lag: lag(9, map[string]int64{"instance_0": 0, "instance_1": 2, "instance_2": 0}),
			Replicas: showing(0, caught, nil)},
		want: "the cluster changed since the drain's handover was planned; planning again next pass",
	}, {
		name: "MAIN moved meanwhile",
		f: Fresh{Instances: rows(coords(3, 1), []memgraph.Instance{replica(0), mainRow(1), replica(2)}), Lag: caught,
			Replicas: showing(1, caught, nil)},
		want: "the cluster changed since the drain's handover was planned; planning again next pass",
	}, {
		name: "the lag read failed",
		f:    Fresh{Instances: table, LagErr: errors.New("connection reset")},
		want: "SHOW REPLICATION LAG failed right before the handover: connection reset",
	}, {
		name: "SHOW INSTANCES failed: the step runs and its own error speaks",
		f:    Fresh{InstancesErr: errors.New("connection reset")},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := DrainPrecondition(declared(3, 3, 3, 3), in, Handover{From: "instance_0", To: "instance_1"}, tc.f)
			if got != tc.want {
				t.Errorf("DrainPrecondition = %q, want %q", got, tc.want)
			}
		})
	}
}

package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// preferring is the declared topology with a preferred MAIN.
func preferring(d topology.Declared, name string) topology.Declared {
	d.PreferredMain = name
	return d
}

func TestPlanSwitchover(t *testing.T) {
	three := func(r ...memgraph.Instance) []memgraph.Instance { return rows(coords(3, 1), r) }
	runPlanCases(t, []planCase{{
		name: "another instance is MAIN and the preferred one is caught up: hand MAIN over",
		d:    preferring(declared(3, 3, 3, 3), "instance_1"),
		o: Observed{Instances: three(mainRow(0), replica(1), replica(2)), Leader: "coordinator_1",
			Span: replicas(3, 3), Lag: lag(9, caughtUp(0, 1, 2))},
		want:     []string{qHandover(0, 1)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", HandoverFrom: "instance_0", HandoverTo: "instance_1", Switchover: true},
		needsLag: true,
	}, {
		name: "the preferred instance lags: nothing is demoted, the status says by how much",
		d:    preferring(declared(3, 3, 3, 3), "instance_1"),
		o: Observed{Instances: three(mainRow(0), replica(1), replica(2)), Leader: "coordinator_1",
			Span: replicas(3, 3), Lag: lag(9, with(caughtUp(0, 2), "instance_1", 4))},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0",
			SwitchoverPending: "switchover of MAIN from instance_0 to the preferred instance_1 waits: instance_1 is 4 transactions behind on database memgraph"},
		needsLag: true,
	}, {
		name: "the preferred instance is down (failed over away from): MAIN stays where the coordinators put it",
		d:    preferring(declared(3, 3, 3, 3), "instance_1"),
		o: Observed{Instances: three(mainRow(0), downRow(1), replica(2)), Leader: "coordinator_1",
			Span: replicas(3, 3), Lag: lag(9, caughtUp(0, 2))},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0",
			SwitchoverPending: "switchover of MAIN from instance_0 to the preferred instance_1 waits: instance_1 is down"},
		needsLag: true,
	}, {
		name: "the preferred instance is not registered yet: it is registered, the switchover waits",
		d:    preferring(declared(3, 3, 3, 3), "instance_2"),
		o: Observed{Instances: three(mainRow(0), replica(1)), Leader: "coordinator_1",
			Span: replicas(3, 3), Lag: lag(9, caughtUp(0, 1))},
		want:     []string{qRegister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", PendingDataInstances: names("instance", 2),
			SwitchoverPending: "switchover of MAIN from instance_0 to the preferred instance_2 waits: instance_2 is not registered"},
		needsLag: true,
	}, {
		name: "without lag rows nothing is proven",
		d:    preferring(declared(3, 3, 3, 3), "instance_1"),
		o: Observed{Instances: three(mainRow(0), replica(1), replica(2)), Leader: "coordinator_1",
			Span: replicas(3, 3)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0",
			SwitchoverPending: "switchover of MAIN from instance_0 to the preferred instance_1 waits: replication lag was not observed"},
		needsLag: true,
	}, {
		name: "the preferred instance is MAIN: nothing to do, no lag needed",
		d:    preferring(declared(3, 3, 3, 3), "instance_1"),
		o: Observed{Instances: three(replica(0), mainRow(1), replica(2)), Leader: "coordinator_1",
			Span: replicas(3, 3)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_1"},
	}, {
		name: "no MAIN at all: the preferred instance is elected when up",
		d:    preferring(declared(3, 3, 3, 3), "instance_2"),
		o:    Observed{Instances: three(replica(0), replica(1), replica(2)), Leader: "coordinator_1", Span: replicas(3, 3)},
		want: []string{qMain(2)}, replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Promote: "instance_2"},
	}, {
		name: "no MAIN and the preferred instance not up: the lowest up one is elected",
		d:    preferring(declared(3, 3, 3, 3), "instance_2"),
		o: Observed{Instances: three(replica(0), replica(1)),
			Leader: "coordinator_1", Span: replicas(3, 3)},
		want:     []string{qRegister(2), qMain(0)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", PendingDataInstances: names("instance", 2), Promote: "instance_0"},
	}, {
		name: "a new cluster with a preferred MAIN: every instance registered, the preferred one elected",
		d:    preferring(declared(3, 3, 3, 3), "instance_2"),
		o:    Observed{Instances: coords(3, 1), Leader: "coordinator_1", Span: replicas(3, 3)},
		want: []string{qRegister(0), qRegister(1), qRegister(2), qMain(2)}, replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", PendingDataInstances: names("instance", 0, 1, 2), Promote: "instance_2"},
	}, {
		name: "a retiring MAIN goes to the preferred survivor when it is caught up",
		d:    preferring(declared(3, 3, 3, 4), "instance_2"),
		o: Observed{Instances: three(replica(0), replica(1), replica(2), mainRow(3)), Leader: "coordinator_1",
			Span: replicas(3, 4), Lag: lag(9, caughtUp(0, 1, 2, 3))},
		want:     []string{qHandover(3, 2), qUnregister(3)},
		replicas: replicas(3, 4),
		progress: Progress{Leader: "coordinator_1", Main: "instance_3", RetiringDataInstances: names("instance", 3),
			HandoverFrom: "instance_3", HandoverTo: "instance_2"},
		needsLag: true,
	}, {
		name: "a retiring MAIN goes to the lowest caught-up survivor when the preferred one lags; one handover per pass",
		d:    preferring(declared(3, 3, 3, 4), "instance_2"),
		o: Observed{Instances: three(replica(0), replica(1), replica(2), mainRow(3)), Leader: "coordinator_1",
			Span: replicas(3, 4), Lag: lag(9, with(caughtUp(0, 1, 3), "instance_2", 1))},
		want:     []string{qHandover(3, 0), qUnregister(3)},
		replicas: replicas(3, 4),
		progress: Progress{Leader: "coordinator_1", Main: "instance_3", RetiringDataInstances: names("instance", 3),
			HandoverFrom: "instance_3", HandoverTo: "instance_0"},
		needsLag: true,
	}, {
		name: "a switchover goes with the unregistration of a retiring replica",
		d:    preferring(declared(3, 2, 3, 3), "instance_1"),
		o: Observed{Instances: three(mainRow(0), replica(1), replica(2)), Leader: "coordinator_1",
			Span: replicas(3, 3), Lag: lag(9, caughtUp(0, 1, 2))},
		want:     []string{qHandover(0, 1), qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", RetiringDataInstances: names("instance", 2),
			HandoverFrom: "instance_0", HandoverTo: "instance_1", Switchover: true},
		needsLag: true,
	}})
}

// A switchover is re-planned from a fresh read right before it runs, like a retirement's
// handover: a preferred MAIN that fell behind (or a MAIN the coordinators moved) skips it.
func TestSwitchoverPrecondition(t *testing.T) {
	d := preferring(declared(3, 3, 3, 3), "instance_1")
	h := Handover{From: "instance_0", To: "instance_1"}
	before := rows(coords(3, 1), one(mainRow(0), replica(1), replica(2)))
	if why := Precondition(d, replicas(3, 3), nil, h, reportedFresh(Fresh{Instances: before, Lag: lag(5, caughtUp(0, 1, 2))})); why != "" {
		t.Errorf("a still caught-up preferred MAIN was skipped: %s", why)
	}
	if why := Precondition(d, replicas(3, 3), nil, h, reportedFresh(Fresh{Instances: before, Lag: lag(5, with(caughtUp(0, 2), "instance_1", 2))})); why == "" {
		t.Error("a preferred MAIN that fell behind is handed MAIN")
	}
	failedOver := rows(coords(3, 1), one(replica(0), replica(1), mainRow(2)))
	if why := Precondition(d, replicas(3, 3), nil, h, reportedFresh(Fresh{Instances: failedOver, Lag: lag(5, caughtUp(0, 1, 2))})); why == "" {
		t.Error("a switchover from a MAIN the coordinators replaced is run")
	}
}

func TestVerdictSwitchover(t *testing.T) {
	d := preferring(declared(3, 3, 3, 3), "instance_1")
	pending := Outcome{Declared: d, Discovery: Discovery{View: View{Leader: "coordinator_1"}, Asked: 1, Reachable: true},
		Latest: View{Leader: "coordinator_1"}, AtDeclaredSize: true,
		Plan: Plan{Progress: Progress{Main: "instance_0", SwitchoverPending: "switchover of MAIN from instance_0 to the " +
			"preferred instance_1 waits: instance_1 is 4 transactions behind on database memgraph"}},
		Progress: Progress{Main: "instance_0"}}
	got := Verdict(pending)
	want := Condition{metav1.ConditionFalse, v1alpha1.ReasonSwitchoverPending, "switchover of MAIN from instance_0 to the " +
		"preferred instance_1 waits: instance_1 is 4 transactions behind on database memgraph"}
	if diff := cmp.Diff(want, got.Converged); diff != "" {
		t.Errorf("Converged (-want +got):\n%s", diff)
	}
	if got.Ready.Status != metav1.ConditionTrue || got.ResyncAfterSeconds != ResyncWaiting {
		t.Errorf("Ready %+v, resync %v: a pending switchover leaves the cluster Ready and looks again in %v s", got.Ready, got.ResyncAfterSeconds, ResyncWaiting)
	}

	reached := pending
	reached.Plan.Progress = Progress{Main: "instance_1"}
	reached.Progress = Progress{Main: "instance_1"}
	reached.MainBudgetHeld = settledBudgets(d, "instance_1")
	got = Verdict(reached)
	if got.Converged.Status != metav1.ConditionTrue ||
		got.Converged.Message != "3 coordinators and 3 data instances registered; instance_1 is MAIN, as spec.preferredMain asks" {
		t.Errorf("Converged %+v: the preferred MAIN reached is said so", got.Converged)
	}
}

package planner

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// rebuilding is d with the memgraph.com/rebuild annotation naming name.
func rebuilding(d topology.Declared, name string) topology.Declared {
	d.Rebuild = name
	return d
}

// asyncRows is rows with the named replicas registered Async.
func asyncRows(r *MainReplicas, names ...string) *MainReplicas {
	for i := range r.Rows {
		for _, n := range names {
			if r.Rows[i].Name == n {
				r.Rows[i].SyncMode = memgraph.SyncModeAsync
			}
		}
	}
	return r
}

func heldStep(name string) RebuildStep {
	s := held(name)
	s.Instance = name
	return s
}

func TestPlanRebuild(t *testing.T) {
	three := func(r ...memgraph.Instance) []memgraph.Instance { return rows(coords(3, 1), r) }
	caught := lag(9, caughtUp(0, 1, 2))
	diverged := showing(0, caught, map[string]string{"instance_2": memgraph.ReplicaDiverged})
	for _, tc := range []struct {
		name  string
		d     topology.Declared
		o     Observed
		want  []string
		phase v1alpha1.RebuildPhase
		msg   string // a substring of the step's message
		proof bool   // NeedsCatchUpReads
	}{{
		name:  "a diverged replica beside a caught-up Sync replica is unregistered",
		d:     rebuilding(declared(3, 3, 3, 3), "instance_2"),
		o:     Observed{Instances: three(mainRow(0), replica(1), replica(2)), Lag: caught, Replicas: diverged},
		want:  []string{qUnregister(2)},
		phase: v1alpha1.RebuildUnregistering, msg: "unregistering instance_2", proof: true,
	}, {
		name:  "the annotation names the MAIN: refused, nothing sent",
		d:     rebuilding(declared(3, 3, 3, 3), "instance_0"),
		o:     Observed{Instances: three(mainRow(0), replica(1), replica(2)), Lag: caught},
		phase: v1alpha1.RebuildRefused, msg: "instance_0 is MAIN: the hook never rebuilds the MAIN",
	}, {
		name:  "a dead MAIN is still the MAIN: refused",
		d:     rebuilding(declared(3, 3, 3, 3), "instance_0"),
		o:     Observed{Instances: three(data(0, memgraph.HealthDown, memgraph.RoleMain), replica(1), replica(2))},
		phase: v1alpha1.RebuildRefused, msg: "is MAIN",
	}, {
		name:  "the last caught-up Sync replica waits for another",
		d:     rebuilding(declared(3, 3, 3, 3), "instance_1"),
		o:     Observed{Instances: three(mainRow(0), replica(1), replica(2)), Lag: caught, Replicas: diverged},
		phase: v1alpha1.RebuildWaiting, msg: "instance_1 is the last Sync replica caught up with MAIN instance_0", proof: true,
	}, {
		name:  "the last caught-up Sync replica beside an Async one waits: an Async copy does not count",
		d:     rebuilding(declared(3, 3, 3, 3), "instance_1"),
		o:     Observed{Instances: three(mainRow(0), replica(1), replica(2)), Lag: caught, Replicas: asyncRows(showing(0, caught, nil), "instance_2")},
		phase: v1alpha1.RebuildWaiting, msg: "last Sync replica", proof: true,
	}, {
		name: "a caught-up Sync replica beside another caught-up Sync replica is unregistered",
		d:    rebuilding(declared(3, 3, 3, 3), "instance_1"),
		o:    Observed{Instances: three(mainRow(0), replica(1), replica(2)), Lag: caught, Replicas: showing(0, caught, nil)},
		want: []string{qUnregister(1)}, phase: v1alpha1.RebuildUnregistering, proof: true,
	}, {
		name: "an Async replica is no synchronous copy: unregistered even as the only caught-up one",
		d:    rebuilding(declared(3, 2, 3, 2), "instance_1"),
		o:    Observed{Instances: three(mainRow(0), replica(1)), Lag: lag(9, caughtUp(0, 1)), Replicas: asyncRows(showing(0, lag(9, caughtUp(0, 1)), nil), "instance_1")},
		want: []string{qUnregister(1)}, phase: v1alpha1.RebuildUnregistering, proof: true,
	}, {
		name: "a replica the MAIN reports recovering is no copy: unregistered although no other is caught up",
		d:    rebuilding(declared(3, 2, 3, 2), "instance_1"),
		o:    Observed{Instances: three(mainRow(0), replica(1)), Lag: lag(9, caughtUp(0, 1)), Replicas: showing(0, lag(9, caughtUp(0, 1)), map[string]string{"instance_1": memgraph.ReplicaRecovery})},
		want: []string{qUnregister(1)}, phase: v1alpha1.RebuildUnregistering, proof: true,
	}, {
		name:  "without the catch-up proofs nothing is unregistered: they are asked for",
		d:     rebuilding(declared(3, 3, 3, 3), "instance_2"),
		o:     Observed{Instances: three(mainRow(0), replica(1), replica(2))},
		phase: v1alpha1.RebuildWaiting, msg: "SHOW REPLICAS was not read on MAIN instance_0", proof: true,
	}, {
		name:  "SHOW REPLICAS failed on the MAIN: waits, saying why",
		d:     rebuilding(declared(3, 3, 3, 3), "instance_2"),
		o:     Observed{Instances: three(mainRow(0), replica(1), replica(2)), Lag: caught, Replicas: &MainReplicas{Main: "instance_0", Problem: "connection refused"}},
		phase: v1alpha1.RebuildWaiting, msg: "could not be read: connection refused", proof: true,
	}, {
		name:  "no MAIN: a replica may hold the latest writes",
		d:     rebuilding(declared(3, 3, 3, 3), "instance_2"),
		o:     Observed{Instances: three(downRow(0), replica(1), replica(2))},
		phase: v1alpha1.RebuildWaiting, msg: "waits for a MAIN",
	}, {
		name:  "held: unregistered, and not registered again while the annotation stands",
		d:     rebuilding(declared(3, 3, 3, 3), "instance_2"),
		o:     Observed{Instances: three(mainRow(0), replica(1)), Lag: lag(9, caughtUp(0, 1))},
		phase: v1alpha1.RebuildHeld, msg: "instance_2 is unregistered and stays so",
	}, {
		name:  "a name that is not a declared data instance: refused",
		d:     rebuilding(declared(3, 3, 3, 3), "instance_7"),
		o:     Observed{Instances: three(mainRow(0), replica(1), replica(2))},
		phase: v1alpha1.RebuildRefused, msg: `memgraph.com/rebuild="instance_7" names no declared data instance (instance_0 to instance_2)`,
	}, {
		name:  "a retiring instance: refused, the scale-down unregisters it",
		d:     rebuilding(declared(3, 2, 3, 3), "instance_2"),
		o:     Observed{Instances: three(mainRow(0), replica(1), replica(2)), Lag: caught},
		want:  []string{qUnregister(2)}, // the scale-down's own UNREGISTER
		phase: v1alpha1.RebuildRefused, msg: "being retired", proof: false,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Leader, tc.o.Span = "coordinator_1", replicas(3, int32(len(tc.d.DataInstances)+len(tc.d.RetiringDataInstances)))
			plan := Decide(tc.d, reported(tc.o))
			if diff := cmp.Diff(tc.want, queries(plan.Commands)); diff != "" {
				t.Errorf("queries (-want +got):\n%s", diff)
			}
			r := plan.Progress.Rebuild
			if r.Instance != tc.d.Rebuild || r.Phase != tc.phase || !strings.Contains(r.Message, tc.msg) {
				t.Errorf("rebuild = %+v, want %s %s containing %q", r, tc.d.Rebuild, tc.phase, tc.msg)
			}
			if plan.NeedsCatchUpReads != tc.proof {
				t.Errorf("NeedsCatchUpReads = %v, want %v", plan.NeedsCatchUpReads, tc.proof)
			}
			for _, cmd := range plan.Commands {
				if u, ok := cmd.(UnregisterInstance); ok && u.Name == tc.d.Rebuild && u.Name == observeMain(index(tc.o)).name {
					t.Errorf("the plan unregisters the MAIN %s", u.Name)
				}
			}
		})
	}
}

// A held instance counts neither as pending nor as a registration that needs the MAIN proven
// alive: a converged cluster with a rebuild held settles with one query.
func TestRebuildHeldInstanceIsNotRegistered(t *testing.T) {
	d := rebuilding(declared(3, 3, 3, 3), "instance_2")
	o := Observed{Instances: rows(coords(3, 1), one(mainRow(0), replica(1))), Leader: "coordinator_1", Span: replicas(3, 3)}
	plan := Decide(d, o)
	if len(plan.Commands) != 0 || plan.NeedsCatchUpReads || len(plan.Progress.PendingDataInstances) != 0 {
		t.Fatalf("held instance: commands %v, needs reads %v, pending %v", queries(plan.Commands), plan.NeedsCatchUpReads,
			plan.Progress.PendingDataInstances)
	}
	if diff := cmp.Diff(heldStep("instance_2"), plan.Progress.Rebuild); diff != "" {
		t.Errorf("rebuild (-want +got):\n%s", diff)
	}
	// Without the annotation the instance is registered again, once the MAIN is proven alive.
	d.Rebuild = ""
	again := Decide(d, Observed{Instances: o.Instances, Leader: o.Leader, Span: o.Span, Lag: lag(9, caughtUp(0, 1))})
	if diff := cmp.Diff([]string{qRegister(2)}, queries(again.Commands)); diff != "" {
		t.Errorf("annotation removed: queries (-want +got):\n%s", diff)
	}
}

// The rebuild's UNREGISTER is re-checked on a fresh read, like a handover: a step planned while
// another Sync replica was caught up is skipped once that one fell behind, and never aimed at an
// instance that became MAIN.
func TestRebuildPrecondition(t *testing.T) {
	d := rebuilding(declared(3, 3, 3, 3), "instance_1")
	cmd := UnregisterInstance{Name: "instance_1", Rebuild: true}
	if preconditionReads(cmd, nil) != readTableAndCatchUp {
		t.Fatalf("preconditionReads = %v, want readTableAndCatchUp", preconditionReads(cmd, nil))
	}
	three := rows(coords(3, 1), one(mainRow(0), replica(1), replica(2)))
	for _, tc := range []struct {
		name string
		f    Fresh
		skip string // a substring; "" runs the step
	}{
		{"still safe", Fresh{Instances: three, Lag: lag(9, caughtUp(0, 1, 2))}, ""},
		{"the other Sync replica fell behind", Fresh{Instances: three, Lag: lag(9, with(caughtUp(0, 1), "instance_2", 3))},
			"last Sync replica caught up"},
		{"it became MAIN", Fresh{Instances: rows(coords(3, 1), one(replica(0), mainRow(1), replica(2))), Lag: lag(9, caughtUp(0, 1, 2))},
			"instance_1 is MAIN"},
		{"the lag could not be read", Fresh{Instances: three, LagErr: errors.New("timeout")}, "SHOW REPLICATION LAG could not be read"},
		{"already unregistered", Fresh{Instances: rows(coords(3, 1), one(mainRow(0), replica(2))), Lag: lag(9, caughtUp(0, 2))},
			"unregistered and stays so"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Precondition(d, replicas(3, 3), nil, cmd, reportedFresh(tc.f))
			if tc.skip == "" && got != "" || tc.skip != "" && !strings.Contains(got, tc.skip) {
				t.Errorf("Precondition = %q, want %q", got, tc.skip)
			}
		})
	}
	// Another writer unregistered it first: the goal holds.
	if v := JudgeStep(cmd, &memgraph.Error{Kind: memgraph.KindNoSuchInstance, Message: "No instance with such name!"}); v != StepDone {
		t.Errorf("JudgeStep(no such instance) = %v, want StepDone", v)
	}
	if v := JudgeStep(UnregisterInstance{Name: "instance_1"}, &memgraph.Error{Kind: memgraph.KindNoSuchInstance}); v != StepFailed {
		t.Errorf("a retirement's UNREGISTER refused as no such instance = %v, want StepFailed (unchanged)", v)
	}
}

// RebuildReport judges a pass that planned nothing on the latest table alone.
func TestRebuildReport(t *testing.T) {
	d := rebuilding(declared(3, 3, 3, 3), "instance_2")
	listed := NewView(testNet.Coordinator(1), rows(coords(3, 1), one(mainRow(0), replica(1), replica(2))))
	gone := NewView(testNet.Coordinator(1), rows(coords(3, 1), one(mainRow(0), replica(1))))
	unregistering := RebuildStep{Instance: "instance_2", Phase: v1alpha1.RebuildUnregistering, Message: "unregistering"}
	for _, tc := range []struct {
		name    string
		d       topology.Declared
		planned RebuildStep
		latest  View
		phase   v1alpha1.RebuildPhase
	}{
		{"no annotation", declared(3, 3, 3, 3), RebuildStep{}, gone, ""},
		{"the step ran: the table read after it no longer lists it", d, unregistering, gone, v1alpha1.RebuildHeld},
		{"no plan, the table lists it", d, RebuildStep{}, listed, v1alpha1.RebuildWaiting},
		{"no plan, the table does not list it", d, RebuildStep{}, gone, v1alpha1.RebuildHeld},
		{"no table read", d, RebuildStep{}, View{}, v1alpha1.RebuildWaiting},
		{"a refusal stands", d, RebuildStep{Instance: "instance_2", Phase: v1alpha1.RebuildRefused}, listed, v1alpha1.RebuildRefused},
		{"undeclared, no plan", rebuilding(declared(3, 3, 3, 3), "instance_9"), RebuildStep{}, gone, v1alpha1.RebuildRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RebuildReport(tc.d, tc.planned, tc.latest)
			if got.Phase != tc.phase || tc.phase != "" && got.Instance != tc.d.Rebuild {
				t.Errorf("RebuildReport = %+v, want phase %q", got, tc.phase)
			}
		})
	}
}

// A replica Memgraph reports diverged (or recovering, or invalid) is never a handover or
// switchover target, whatever its lag says.
func TestDivergedReplicaIsNoHandoverTarget(t *testing.T) {
	three := func(r ...memgraph.Instance) []memgraph.Instance { return rows(coords(3, 1), r) }
	caught := lag(9, caughtUp(0, 1, 2))
	for _, state := range []string{memgraph.ReplicaDiverged, memgraph.ReplicaRecovery, memgraph.ReplicaInvalid} {
		runPlanCases(t, []planCase{{
			name: "switchover to a " + state + " preferred instance waits",
			d:    preferring(declared(3, 3, 3, 3), "instance_1"),
			o: Observed{Instances: three(mainRow(0), replica(1), replica(2)), Leader: "coordinator_1", Span: replicas(3, 3),
				Lag: caught, Replicas: showing(0, caught, map[string]string{"instance_1": state})},
			replicas: replicas(3, 3),
			progress: Progress{Leader: "coordinator_1", Main: "instance_0", SwitchoverPending: "switchover of MAIN from instance_0 to the " +
				"preferred instance_1 waits: instance_1 is " + state + ", not ready, on database memgraph (SHOW REPLICAS on MAIN instance_0; " +
				"its lag of 0 is only the MAIN's cached count)"},
			needsLag: true,
		}, {
			name: "a retiring MAIN is handed to the ready survivor, not the " + state + " one",
			d:    declared(3, 2, 3, 3),
			o: Observed{Instances: three(replica(0), replica(1), mainRow(2)), Leader: "coordinator_1", Span: replicas(3, 3),
				Lag: caught, Replicas: showing(2, caught, map[string]string{"instance_0": state})},
			want:     []string{qHandover(2, 1), qUnregister(2)},
			replicas: replicas(3, 3),
			progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
				HandoverFrom: "instance_2", HandoverTo: "instance_1"},
			needsLag: true,
		}})
	}
}

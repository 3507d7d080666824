package planner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

var hibernationNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// pods lists running, Ready pods by ordinal, created an hour ago.
func pods(ordinals ...int) map[int]PodState {
	out := map[int]PodState{}
	for _, o := range ordinals {
		out[o] = PodState{Ready: true, Created: metav1.NewTime(hibernationNow.Add(-time.Hour))}
	}
	return out
}

func window(w int32) *int32 { return &w }

// leaderView is a ready leader's SHOW INSTANCES of three coordinators and the given data rows.
func leaderView(data ...memgraph.Instance) *View {
	return &View{Instances: rows(coords(3, 1), data), Leader: "coordinator_1"}
}

type hibernationCase struct {
	name string
	in   HibernationInput
	want HibernationStep
}

func runHibernationCases(t *testing.T, cases []hibernationCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Now, tc.in.StartupBudget = metav1.NewTime(hibernationNow), metav1.Duration{Duration: 2 * time.Hour}
			got := PlanHibernation(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("step (-want +got):\n%s", diff)
			}
		})
	}
}

func hibernatingStep(w *int32, coordinators, data int32, msg string) HibernationStep {
	return HibernationStep{InCharge: true, Window: w, Replicas: replicas(coordinators, data), Phase: v1alpha1.PhaseHibernating,
		Hibernated: Condition{metav1.ConditionFalse, v1alpha1.ReasonHibernating, msg}}
}

func TestHibernationAsleepOrWaking(t *testing.T) {
	one := int32(1)
	for _, tc := range []struct {
		name      string
		hibernate bool
		window    *int32
		want      bool
	}{
		{"running: neither asked nor waking", false, nil, false},
		{"asked to hibernate", true, nil, true},
		{"hibernating with the MAIN's window", true, &one, true},
		{"waking: the window is still there", false, &one, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HibernationAsleepOrWaking(tc.hibernate, tc.window); got != tc.want {
				t.Errorf("HibernationAsleepOrWaking = %v, want %v", got, tc.want)
			}
			// Whatever else the input says, a running cluster's step is the running one.
			if !tc.want {
				in := HibernationInput{Hibernate: tc.hibernate, Window: tc.window, DataPods: map[int]PodState{0: {Ready: true}}}
				if diff := cmp.Diff(running(), PlanHibernation(in)); diff != "" {
					t.Errorf("PlanHibernation of a running cluster (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestPlanHibernation(t *testing.T) {
	d := declared(3, 3, 3, 3)
	in := func(data, coordinators map[int]PodState, w *int32, view *View) HibernationInput {
		return HibernationInput{Declared: d, Hibernate: true, DataPods: data, CoordinatorPods: coordinators, Window: w,
			Span: replicas(3, 3), View: view}
	}
	main2 := leaderView(replica(0), replica(1), mainRow(2))
	runHibernationCases(t, []hibernationCase{{
		name: "awake: the ordinary pass runs",
		in:   HibernationInput{Declared: d, DataPods: pods(0, 1, 2), CoordinatorPods: pods(1, 2, 3), Span: replicas(3, 3)},
		want: running(),
	}, {
		name: "which instance is MAIN decides the order: read it first",
		in:   in(pods(0, 1, 2), pods(1, 2, 3), nil, nil),
		want: HibernationStep{InCharge: true, NeedsView: true},
	}, {
		name: "MAIN on the highest ordinal: the window keeps its pod alone, the replicas go",
		in:   in(pods(0, 1, 2), pods(1, 2, 3), nil, main2),
		want: hibernatingStep(window(2), 3, 1, "stopping the data replicas first (instance_0, instance_1); MAIN instance_2 stays up until they are gone"),
	}, {
		name: "MAIN on instance_0: the window starts at 0",
		in:   in(pods(0, 1, 2), pods(1, 2, 3), nil, leaderView(mainRow(0), replica(1), replica(2))),
		want: hibernatingStep(window(0), 3, 1, "stopping the data replicas first (instance_1, instance_2); MAIN instance_0 stays up until they are gone"),
	}, {
		name: "a replica still terminating holds the MAIN",
		in:   in(pods(1, 2), pods(1, 2, 3), window(2), main2),
		want: hibernatingStep(window(2), 3, 1, "stopping the data replicas first (instance_1); MAIN instance_2 stays up until they are gone"),
	}, {
		name: "the replicas are gone: the MAIN goes, the window stays as the record",
		in:   in(pods(2), pods(1, 2, 3), window(2), leaderView(downRow(0), downRow(1), mainRow(2))),
		want: hibernatingStep(window(2), 3, 0, "the replicas are stopped; stopping MAIN instance_2, which the coordinators keep as MAIN"),
	}, {
		name: "the MAIN's pod terminating no longer shows as MAIN: the window goes on",
		in:   in(map[int]PodState{2: {}}, pods(1, 2, 3), window(2), leaderView(downRow(0), downRow(1), downRow(2))),
		want: hibernatingStep(window(2), 3, 0, "the replicas are stopped; stopping MAIN instance_2, which the coordinators keep as MAIN"),
	}, {
		name: "the leader cannot be read once the window is set: the window goes on",
		in: func() HibernationInput {
			i := in(pods(0, 2), pods(1, 2, 3), window(2), nil)
			i.ViewProblem = "no coordinator answered"
			return i
		}(),
		want: hibernatingStep(window(2), 3, 1, "stopping the data replicas first (instance_0); MAIN instance_2 stays up until they are gone"),
	}, {
		name: "no MAIN is up: every data instance stops at once, no window",
		in:   in(pods(0, 1, 2), pods(1, 2, 3), nil, leaderView(replica(0), replica(1), downRow(2))),
		want: hibernatingStep(nil, 3, 0, "no MAIN is up: stopping every data instance at once (instance_0, instance_1, instance_2); Memgraph's failover picks the MAIN when the cluster wakes"),
	}, {
		name: "the MAIN cannot be read yet: the data instances wait as they are",
		in: func() HibernationInput {
			i := in(pods(0, 1, 2), pods(1, 2, 3), nil, nil)
			i.ViewProblem = "coordinators answer but none names a leader"
			return i
		}(),
		want: hibernatingStep(nil, 3, 3, "waiting to read which instance is MAIN before stopping the data instances: coordinators answer but none names a leader"),
	}, {
		name: "no coordinator pod at all: nobody can fail over, the data instances stop at once",
		in:   in(pods(0, 1), nil, nil, nil),
		want: hibernatingStep(nil, 3, 0, "no coordinator is left to tell the MAIN (or to fail over): stopping every data instance at once (instance_0, instance_1)"),
	}, {
		name: "the data instances are gone: the coordinators go, without a Bolt read",
		in:   in(nil, pods(1, 2, 3), window(2), nil),
		want: hibernatingStep(window(2), 0, 0, "the data instances are stopped; stopping the coordinators, which keep every registration and the MAIN in their Raft logs"),
	}, {
		name: "no pod left: hibernated",
		in:   in(nil, nil, window(2), nil),
		want: HibernationStep{InCharge: true, Window: window(2), Phase: v1alpha1.PhaseHibernated,
			Hibernated: Condition{metav1.ConditionTrue, v1alpha1.ReasonHibernated, "no pod runs; every volume, registration and the MAIN (instance_2) are kept; set spec.hibernate to false to wake the cluster"}},
	}, {
		name: "a new cluster created hibernated: nothing to stop",
		in:   HibernationInput{Declared: declared(3, 2, 0, 0), Hibernate: true},
		want: HibernationStep{InCharge: true, Phase: v1alpha1.PhaseHibernated,
			Hibernated: Condition{metav1.ConditionTrue, v1alpha1.ReasonHibernated, "no pod runs; every volume, registration and the MAIN are kept; set spec.hibernate to false to wake the cluster"}},
	}, {
		name: "a coordinator scale-down still retiring members is finished first",
		in: HibernationInput{Declared: declared(3, 3, 7, 3), Hibernate: true, DataPods: pods(0, 1, 2), CoordinatorPods: pods(1, 2, 3, 4, 5, 6, 7),
			Span: replicas(7, 3)},
		want: HibernationStep{Phase: v1alpha1.PhaseHibernating, Hibernated: Condition{metav1.ConditionFalse, v1alpha1.ReasonHibernationPending,
			"waiting for the coordinator scale-down to retire coordinator_4, coordinator_5, coordinator_6, coordinator_7 before hibernating: " +
				"stopping retiring members with the others could bring fewer than a Raft majority back on waking"}},
	}})
}

func TestPlanWaking(t *testing.T) {
	d := declared(3, 3, 3, 3)
	waking := func(data, coordinators map[int]PodState, view *View) HibernationInput {
		return HibernationInput{Declared: d, DataPods: data, CoordinatorPods: coordinators, Window: window(2),
			Span: replicas(0, 3), View: view}
	}
	held := func(why string) HibernationStep {
		return HibernationStep{InCharge: true, Window: window(2), Replicas: replicas(3, 1), Phase: v1alpha1.PhaseWaking,
			Hibernated: Condition{metav1.ConditionFalse, v1alpha1.ReasonWaking, "waking: the coordinators and instance_2, the MAIN when " +
				"the cluster hibernated, start before the replicas, so that the coordinators cannot fail over to a replica that lacks " +
				"its last writes; " + why}}
	}
	old := map[int]PodState{2: {Ready: false, Created: metav1.NewTime(hibernationNow.Add(-3 * time.Hour))}}
	runHibernationCases(t, []hibernationCase{{
		name: "hibernated and woken: the coordinators and the MAIN's pod first",
		in:   waking(nil, nil, nil),
		want: held("its pod is not Ready yet"),
	}, {
		name: "the MAIN's pod is Ready: read whether the leader sees it",
		in:   waking(pods(2), pods(1, 2, 3), nil),
		want: HibernationStep{InCharge: true, NeedsView: true},
	}, {
		name: "the leader does not see it up yet",
		in:   waking(pods(2), pods(1, 2, 3), leaderView(downRow(0), downRow(1), downRow(2))),
		want: held("the leader does not see it up yet"),
	}, {
		name: "the leader sees it up as MAIN: the replicas start",
		in:   waking(pods(2), pods(1, 2, 3), leaderView(downRow(0), downRow(1), mainRow(2))),
		want: awake("instance_2 is up; the replicas are starting"),
	}, {
		name: "it came back as a replica (Raft's MAIN was another): the replicas start",
		in:   waking(pods(2), pods(1, 2, 3), leaderView(downRow(0), downRow(1), replica(2))),
		want: awake("instance_2 is up; the replicas are starting"),
	}, {
		name: "another instance serves as MAIN already: nothing to protect",
		in:   waking(pods(2), pods(1, 2, 3), leaderView(mainRow(0), downRow(1), downRow(2))),
		want: awake("instance_0 is up; the replicas are starting"),
	}, {
		name: "its pod had its whole startup budget: the replicas start, Memgraph picks the MAIN",
		in:   waking(old, pods(1, 2, 3), nil),
		want: awake("instance_2 did not come back within its startup budget of 2h0m0s: the replicas are starting and Memgraph's failover picks the MAIN"),
	}, {
		name: "woken while the replicas were still stopping: the MAIN never stopped, so they come back at once",
		in:   waking(pods(1, 2), pods(1, 2, 3), leaderView(downRow(0), replica(1), mainRow(2))),
		want: awake("instance_2 is up; the replicas are starting"),
	}})
}

func TestVerdictHibernation(t *testing.T) {
	hibernated := PlanHibernation(HibernationInput{Declared: declared(3, 3, 0, 0), Hibernate: true, Window: window(2)})
	upToDate := RolloutStep{Reason: v1alpha1.ReasonUpToDate, Message: "every pod runs docker.io/memgraph/memgraph:3.12.0"}
	v := Verdict(Outcome{Declared: declared(3, 3, 0, 0), Hibernation: hibernated, Rollout: upToDate})
	want := Verdicts{
		Updated:    Condition{metav1.ConditionTrue, v1alpha1.ReasonUpToDate, "every pod runs docker.io/memgraph/memgraph:3.12.0"},
		Ready:      Condition{metav1.ConditionFalse, v1alpha1.ReasonHibernated, "hibernated: no pod runs; set spec.hibernate to false to wake the cluster"},
		Converged:  Condition{metav1.ConditionTrue, v1alpha1.ReasonHibernated, "hibernated as declared: both StatefulSets at 0 replicas, every volume kept"},
		Paused:     Condition{metav1.ConditionFalse, v1alpha1.ReasonReconciling, "the hook reconciles the cluster; annotate it memgraph.com/paused=true to pause"},
		Hibernated: hibernated.Hibernated,
		Phase:      v1alpha1.PhaseHibernated, ResyncAfterSeconds: ResyncConverged,
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("hibernated (-want +got):\n%s", diff)
	}

	step := hibernatingStep(window(2), 3, 1, "stopping the data replicas first (instance_0, instance_1); MAIN instance_2 stays up until they are gone")
	v = Verdict(Outcome{Declared: declared(3, 3, 3, 3), Hibernation: step, Latest: View{Leader: "coordinator_1"}, Progress: Progress{Main: "instance_2"}})
	if v.Converged.Reason != v1alpha1.ReasonHibernating || v.Converged.Message != step.Hibernated.Message ||
		v.Ready.Status != metav1.ConditionTrue || v.Phase != v1alpha1.PhaseHibernating || v.ResyncAfterSeconds != ResyncWaiting {
		t.Errorf("hibernating: %+v", v)
	}
}

func TestVerdictPaused(t *testing.T) {
	d := declared(3, 3, 3, 3)
	base := Outcome{Declared: d, Discovery: Discovery{View: View{Leader: "coordinator_1"}, Asked: 1, Reachable: true},
		Latest: View{Leader: "coordinator_1"}, Paused: true, Hibernation: running(),
		Rollout: RolloutStep{Reason: v1alpha1.ReasonUpToDate, Message: "every pod runs docker.io/memgraph/memgraph:3.12.0"}}
	pending := base
	pending.Plan = Plan{Commands: []Command{RegisterInstance{Name: "instance_2"}}, Progress: Progress{Main: "instance_0", PendingDataInstances: names("instance", 2)}}
	pending.Progress = pending.Plan.Progress
	v := Verdict(pending)
	want := Verdicts{
		Ready:     Condition{metav1.ConditionTrue, v1alpha1.ReasonMainElected, "instance_0 is MAIN; coordinator_1 leads the coordinators"},
		Converged: Condition{metav1.ConditionFalse, v1alpha1.ReasonPaused, "paused (memgraph.com/paused), so nothing converges: registering instance_2"},
		Updated:   Condition{metav1.ConditionTrue, v1alpha1.ReasonUpToDate, "every pod runs docker.io/memgraph/memgraph:3.12.0"},
		Paused: Condition{metav1.ConditionTrue, v1alpha1.ReasonPaused, "annotation memgraph.com/paused: the hook returns every child as " +
			"observed and sends no Bolt write; remove the annotation to resume"},
		Hibernated: running().Hibernated, Phase: v1alpha1.PhasePaused, ResyncAfterSeconds: ResyncWaiting,
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("paused with work pending (-want +got):\n%s", diff)
	}

	converged := base
	converged.AtDeclaredSize = true
	converged.Plan.Progress, converged.Progress = Progress{Main: "instance_0"}, Progress{Main: "instance_0"}
	converged.MainBudgetHeld = settledBudgets(d, "instance_0")
	if v := Verdict(converged); v.Converged.Status != metav1.ConditionTrue || v.Paused.Status != metav1.ConditionTrue || v.Phase != v1alpha1.PhasePaused {
		t.Errorf("paused on a converged cluster: %+v", v)
	}
}

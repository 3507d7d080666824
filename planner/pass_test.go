package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A pass with a plan on a view reports the plan's rollout step; a pass that ended before one
// reports a stage's, or the one planned on the StatefulSets alone at the replicas it returns.
func TestPassRollout(t *testing.T) {
	d := declared(3, 2, 3, 2)
	unviewed := RolloutInput{Declared: d, Workloads: Workloads{}}
	stage := RolloutStep{Reason: v1alpha1.ReasonRolloutInProgress, Message: "a stage's"}
	plans := RolloutStep{Reason: v1alpha1.ReasonUpToDate, Message: "the plan's"}
	for _, tc := range []struct {
		name string
		out  Outcome
		want RolloutStep
	}{
		{"a stage planned one", Outcome{Rollout: stage, Plan: Plan{Rollout: plans}}, stage},
		{"the plan's", Outcome{Plan: Plan{Rollout: plans}}, plans},
		{"no plan: the StatefulSets alone, at the returned counts", Outcome{Replicas: replicas(3, 2)},
			PlanRollout(RolloutInput{Declared: d, Replicas: replicas(3, 2)})},
	} {
		if diff := cmp.Diff(tc.want, PassRollout(tc.out, unviewed)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestMainBudgetPod(t *testing.T) {
	d := declared(3, 2, 3, 3) // instance_2 retiring
	for _, tc := range []struct {
		name     string
		out      Outcome
		observed string
		want     string
	}{
		{"the MAIN the pass read", Outcome{Declared: d, Latest: View{Leader: "coordinator_1"}, Progress: Progress{Main: dataName(1)}}, "mg-data-0", "mg-data-1"},
		{"no view: the observed budget's declared pod", Outcome{Declared: d}, "mg-data-1", "mg-data-1"},
		{"a retiring MAIN's pod", Outcome{Declared: d, Latest: View{Leader: "coordinator_1"}, Progress: Progress{Main: dataName(2)}}, "", "mg-data-2"},
		{"no view, the observed budget's pod retires", Outcome{Declared: d}, "mg-data-2", ""},
		{"nothing known", Outcome{Declared: d}, "", ""},
	} {
		if got := MainBudgetPod(tc.out, tc.observed); got != tc.want {
			t.Errorf("%s: MainBudgetPod = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDrainMembersAndPreferredOffCordon(t *testing.T) {
	d := declared(1, 2, 1, 2)
	d.PreferredMain = dataName(1)
	nodes := map[string]string{"mg-coordinator-1": "n1", "mg-data-0": "n1", "mg-data-1": "n2"}
	ready := map[string]bool{"mg-coordinator-1": true, "mg-data-1": true}
	cordoned := map[string]bool{"n2": true}
	want := DrainInput{Cordoned: cordoned, Members: []DrainMember{
		{Name: coordName(1), Role: topology.RoleCoordinator, Pod: "mg-coordinator-1", Node: "n1", Ready: true},
		{Name: dataName(0), Role: topology.RoleData, Pod: "mg-data-0", Node: "n1"},
		{Name: dataName(1), Role: topology.RoleData, Pod: "mg-data-1", Node: "n2", Ready: true},
	}}
	if diff := cmp.Diff(want, DrainMembers(d, nodes, ready, cordoned)); diff != "" {
		t.Errorf("DrainMembers (-want +got):\n%s", diff)
	}
	if got := PreferredOffCordon(d, nodes, cordoned); got != "" {
		t.Errorf("preferred MAIN on a cordoned node: PreferredOffCordon = %q, want none", got)
	}
	if got := PreferredOffCordon(d, nodes, map[string]bool{"n1": true}); got != dataName(1) {
		t.Errorf("preferred MAIN on a schedulable node: PreferredOffCordon = %q, want %s", got, dataName(1))
	}
}

func TestRotationOrderIsDataThenCoordinators(t *testing.T) {
	var got []string
	for _, m := range RotationOrder(declared(2, 2, 2, 2)) {
		got = append(got, m.Name)
	}
	if diff := cmp.Diff([]string{dataName(0), dataName(1), coordName(1), coordName(2)}, got); diff != "" {
		t.Errorf("RotationOrder (-want +got):\n%s", diff)
	}
}

func TestRegisteredCounts(t *testing.T) {
	table := rows(coords(3, 1), one(halfJoined(4), mainRow(0), replica(1)))
	c, d := RegisteredCounts(table)
	if c != 3 || d != 2 {
		t.Errorf("RegisteredCounts = %d coordinators, %d data instances; want 3, 2 (a half-joined coordinator is not registered)", c, d)
	}
}

func TestSummarizeCountsTheRolloutStep(t *testing.T) {
	d := declared(3, 2, 3, 2)
	w := &Workloads{Data: set("no")}
	out := Outcome{Declared: d, Rollout: RolloutStep{Reason: v1alpha1.ReasonRolloutInProgress}}
	got := Summarize(out, MemberHealth{Up: 4, Declared: 5}, w)
	want := ClusterSummary{MembersUp: 4, MembersDeclared: 5, RolloutStep: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
}

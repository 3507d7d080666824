package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// withWorkloads is the observation of in's view with in's workloads, as the hook builds it.
func withWorkloads(in RolloutInput) Observed {
	o := *in.Cluster
	o.Span = in.Replicas
	o.Workloads = &in.Workloads
	return o
}

// Decide plans the rollout on the same view: its step is Plan.Rollout, and its handover or yield
// ends the commands.
func TestPlanIncludesTheRollout(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         RolloutInput
		commands   []string
		partitions topology.Partitions
	}{
		{"a release plans no command", rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)), nil, partitions(3, 2)},
		{"a handover before the MAIN's pod", rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 1)),
			[]string{qHandover(1, 2)}, partitions(3, 2)},
		{"a yield before the leader's pod", rolloutIn(set("ooo"), set("nnn", settled), clusterView(3, 3, 3, 0)),
			[]string{qYield}, partitions(3, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.in.Declared, withWorkloads(tc.in))
			if diff := cmp.Diff(tc.commands, queries(got.Commands), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.partitions, got.Rollout.Partitions); diff != "" {
				t.Errorf("partitions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(PlanRollout(tc.in), got.Rollout); diff != "" {
				t.Errorf("Plan's rollout differs from PlanRollout's (-PlanRollout +Plan):\n%s", diff)
			}
		})
	}
}

// A registration still due keeps the rollout from releasing anything: it asks for a cluster
// whose every member is registered and up.
func TestRolloutWaitsForRegistration(t *testing.T) {
	in := rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0, func(o *Observed) {
		o.Instances = o.Instances[:len(o.Instances)-1] // instance_2 not registered
	}))
	got := Decide(in.Declared, withWorkloads(in))
	if diff := cmp.Diff([]string{qRegister(2)}, queries(got.Commands)); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if got.Rollout.Partitions != partitions(3, 3) {
		t.Errorf("partitions %+v while instance_2 is not registered, want every pod held", got.Rollout.Partitions)
	}
}

func TestRolloutNeedsLagAndTheLeadersTable(t *testing.T) {
	dataRolling := rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0))
	coordinatorsRolling := rolloutIn(set("oon"), set("nnn", settled), clusterView(3, 1, 3, 0))
	done := rolloutIn(set("nnn", settled), set("nnn", settled), clusterView(3, 1, 3, 0))
	leader := NewView(testNet.Coordinator(1), dataRolling.Cluster.Instances)
	follower := NewView(testNet.Coordinator(2), dataRolling.Cluster.Instances)
	for _, tc := range []struct {
		name              string
		in                RolloutInput
		view              View
		needsLag, settled bool
	}{
		{"data rolling: lag to prove the replaced replica caught up", dataRolling, leader, true, false},
		{"coordinators rolling, on the leader's table: settled", coordinatorsRolling, leader, false, true},
		{"coordinators rolling, on a follower's table: read the leader", coordinatorsRolling, follower, false, false},
		{"done, on a follower's table: settled", done, follower, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := withWorkloads(tc.in)
			if got := NeedsCatchUpReads(tc.in.Declared, o); got != tc.needsLag {
				t.Errorf("NeedsCatchUpReads = %v, want %v", got, tc.needsLag)
			}
			plan := Decide(tc.in.Declared, o)
			if plan.NeedsCatchUpReads != tc.needsLag {
				t.Errorf("Plan.NeedsCatchUpReads = %v, want %v", plan.NeedsCatchUpReads, tc.needsLag)
			}
			if got := SettlesPass(plan, tc.view, tc.in.Replicas); got != tc.settled {
				t.Errorf("Settled = %v, want %v", got, tc.settled)
			}
		})
	}
}

// A rollout's handover is re-planned right before it runs, like a retirement's: it runs only if
// the same handover is still due on the fresh table and lag.
func TestPreconditionReplansTheRolloutsHandover(t *testing.T) {
	in := rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 1))
	handover := Handover{From: "instance_1", To: "instance_2"}
	w := &in.Workloads
	for _, tc := range []struct {
		name string
		f    Fresh
		want string
	}{
		{"still due", Fresh{Instances: in.Cluster.Instances, Lag: in.Cluster.Lag, Replicas: in.Cluster.Replicas}, ""},
		{"the replaced replica fell behind", Fresh{Instances: in.Cluster.Instances,
			Lag: clusterView(3, 1, 3, 1, behindBy(2, 4)).Lag}, "the cluster changed since the handover was planned; planning again next pass"},
		{"a human moved MAIN meanwhile", Fresh{Instances: clusterView(3, 1, 3, 0).Instances, Lag: in.Cluster.Lag},
			"the cluster changed since the handover was planned; planning again next pass"},
		{"instance_2 is down now", Fresh{Instances: clusterView(3, 1, 3, 1, rowHealth("instance_2", memgraph.HealthDown)).Instances,
			Lag: in.Cluster.Lag}, "the cluster changed since the handover was planned; planning again next pass"},
	} {
		if got := Precondition(in.Declared, in.Replicas, w, handover, reportedFresh(tc.f)); got != tc.want {
			t.Errorf("%s: Precondition = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Precondition(in.Declared, in.Replicas, nil, handover, Fresh{Instances: in.Cluster.Instances, Lag: in.Cluster.Lag, Replicas: in.Cluster.Replicas}); got == "" {
		t.Error("without the workloads the rollout's handover is not re-planned, so it must not run")
	}
}

package planner

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// drainCluster is 3 coordinators and 3 data instances spread over nodes a, b and c, every pod
// Ready, instance_0 MAIN and coordinator_1 leader (both on node a), both replicas proven caught
// up. Each fixture edits a copy.
func drainCluster() DrainInput {
	coordinator := func(id int, node string) DrainMember {
		return DrainMember{Name: topology.CoordinatorName(id), Role: topology.RoleCoordinator,
			Pod: fmt.Sprintf("%s-%d", topology.CoordinatorSetName("mg"), id), Node: node, Ready: true}
	}
	data := func(ordinal int, node string) DrainMember {
		return DrainMember{Name: topology.DataInstanceName(ordinal), Role: topology.RoleData,
			Pod: fmt.Sprintf("%s-%d", topology.DataSetName("mg"), ordinal), Node: node, Ready: true}
	}
	return DrainInput{
		Members: []DrainMember{
			coordinator(1, "a"), coordinator(2, "b"), coordinator(3, "c"),
			data(0, "a"), data(1, "b"), data(2, "c"),
		},
		Main:     "instance_0",
		Leader:   "coordinator_1",
		Cordoned: map[string]bool{},
		CaughtUp: map[string]bool{"instance_1": true, "instance_2": true},
	}
}

func drainWith(edit func(in *DrainInput)) DrainInput {
	in := drainCluster()
	edit(&in)
	return in
}

func cordon(nodes ...string) func(in *DrainInput) {
	return func(in *DrainInput) {
		for _, n := range nodes {
			in.Cordoned[n] = true
		}
	}
}

func member(in *DrainInput, name string) *DrainMember {
	for i := range in.Members {
		if in.Members[i].Name == name {
			return &in.Members[i]
		}
	}
	panic("no member " + name)
}

// The steps several fixtures expect, node a cordoned.
var (
	handoverOnA = DrainStep{
		Verdict: DrainAct, Command: Handover{From: "instance_0", To: "instance_1"}, Node: "a",
		Message: "node a is cordoned and runs the MAIN instance_0 (pod mg-data-0): handing MAIN over to instance_1 on b, " +
			"proven caught up; the drain proceeds once the MAIN's PodDisruptionBudget follows",
	}
	yieldOnA = DrainStep{
		Verdict: DrainAct, Command: YieldLeadership{}, Node: "a",
		Message: "node a is cordoned and runs the Raft leader coordinator_1 (pod mg-coordinator-1): YIELD LEADERSHIP, " +
			"so that a coordinator on a schedulable node leads",
	}
	waitForLeaderOnA = DrainStep{
		Verdict: DrainWait, Node: "a",
		Message: "node a is cordoned and runs the MAIN instance_0 (pod mg-data-0): waiting for a Raft leader that is Ready " +
			"to hand MAIN over to instance_1",
	}
)

func TestPlanDrain(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   DrainInput
		want DrainStep
	}{
		{"nothing cordoned: no action", drainCluster(), DrainStep{}},
		{"only a replica's node cordoned: the data budget paces the drain alone", drainWith(cordon("c")), DrainStep{}},
		{"a follower's node cordoned: the coordinators' budget paces the drain alone", drainWith(func(in *DrainInput) {
			in.Main, in.Leader = "instance_1", "coordinator_2"
			cordon("c")(in)
		}), DrainStep{}},
		{"MAIN's node cordoned, caught-up replica elsewhere: hand over to it", drainWith(func(in *DrainInput) {
			in.Leader = "coordinator_2"
			cordon("a")(in)
		}), handoverOnA},
		{"MAIN's node cordoned, the first replica not caught up: hand over to the next", drainWith(func(in *DrainInput) {
			in.Leader = "coordinator_2"
			in.CaughtUp = map[string]bool{"instance_2": true}
			cordon("a")(in)
		}), DrainStep{
			Verdict: DrainAct, Command: Handover{From: "instance_0", To: "instance_2"}, Node: "a",
			Message: "node a is cordoned and runs the MAIN instance_0 (pod mg-data-0): handing MAIN over to instance_2 on c, " +
				"proven caught up; the drain proceeds once the MAIN's PodDisruptionBudget follows",
		}},
		{"MAIN's node cordoned, no replica caught up: wait", drainWith(func(in *DrainInput) {
			in.CaughtUp = map[string]bool{}
			member(in, "instance_2").Ready = false
			cordon("a")(in)
		}), DrainStep{
			Verdict: DrainWait, Node: "a",
			Message: "node a is cordoned and runs the MAIN instance_0 (pod mg-data-0): waiting for a replica on a schedulable node " +
				"to be Ready and proven caught up before the handover (instance_1 on b is not proven caught up; instance_2 on c is not Ready)",
		}},
		{"MAIN's node cordoned, the caught-up replica also cordoned, the other unscheduled: wait", drainWith(func(in *DrainInput) {
			member(in, "instance_2").Node = ""
			cordon("a", "b")(in)
		}), DrainStep{
			Verdict: DrainWait, Node: "a",
			Message: "node a is cordoned and runs the MAIN instance_0 (pod mg-data-0): waiting for a replica on a schedulable node " +
				"to be Ready and proven caught up before the handover (instance_2 is not scheduled)",
		}},
		{"MAIN and leader on the cordoned node: MAIN first", drainWith(cordon("a")), handoverOnA},
		{"MAIN and leader on the cordoned node, MAIN handed over: the leader yields", drainWith(func(in *DrainInput) {
			in.Main = "instance_1"
			cordon("a")(in)
		}), yieldOnA},
		{"MAIN's node cordoned, the leader not Ready: wait for a leader", drainWith(func(in *DrainInput) {
			member(in, "coordinator_1").Ready = false
			cordon("a")(in)
		}), waitForLeaderOnA},
		{"MAIN's node cordoned, no leader: wait for a leader", drainWith(func(in *DrainInput) {
			in.Leader = ""
			cordon("a")(in)
		}), waitForLeaderOnA},
		{"every replica on cordoned nodes: blocked", drainWith(cordon("a", "b", "c")), DrainStep{
			Verdict: DrainBlocked, Node: "a",
			Message: "node a is cordoned and runs the MAIN instance_0 (pod mg-data-0), and every replica (instance_1, instance_2) " +
				"runs on a cordoned node: the MAIN's PodDisruptionBudget holds the drain; uncordon a node a replica runs on, " +
				"or drain one node at a time",
		}},
		{"the only data instance on the cordoned node: blocked", drainWith(func(in *DrainInput) {
			in.Members = in.Members[:4]
			cordon("a")(in)
		}), DrainStep{
			Verdict: DrainBlocked, Node: "a",
			Message: "node a is cordoned and runs the MAIN instance_0 (pod mg-data-0), the only data instance: the MAIN's " +
				"PodDisruptionBudget holds the drain; raise spec.dataInstances so that the hook can hand MAIN over to the new " +
				"replica, or uncordon the node",
		}},
		{"leader's node cordoned, the other coordinators not Ready: wait", drainWith(func(in *DrainInput) {
			in.Main = "instance_1"
			member(in, "coordinator_2").Ready = false
			member(in, "coordinator_3").Ready = false
			cordon("a")(in)
		}), DrainStep{
			Verdict: DrainWait, Node: "a",
			Message: "node a is cordoned and runs the Raft leader coordinator_1 (pod mg-coordinator-1): waiting for a coordinator " +
				"on a schedulable node to be Ready before it yields leadership (coordinator_2 on b is not Ready; coordinator_3 on c is not Ready)",
		}},
		{"every coordinator on cordoned nodes: no yield, the drain evicts the leader", drainWith(func(in *DrainInput) {
			in.Main = "instance_1"
			member(in, "coordinator_2").Node = "a"
			cordon("a", "c")(in)
		}), DrainStep{}},
		{"the leader's pod already not Ready: no yield", drainWith(func(in *DrainInput) {
			in.Main = "instance_1"
			member(in, "coordinator_1").Ready = false
			cordon("a")(in)
		}), DrainStep{}},
		{"no MAIN: nothing to hand over, the leader yields", drainWith(func(in *DrainInput) {
			in.Main = ""
			cordon("a")(in)
		}), yieldOnA},
		{"a MAIN that is no declared member: nothing to hand over", drainWith(func(in *DrainInput) {
			in.Main, in.Leader = "instance_7", "coordinator_2"
			cordon("a")(in)
		}), DrainStep{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PlanDrain(tc.in)); diff != "" {
				t.Errorf("PlanDrain (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeCordoned(t *testing.T) {
	for _, tc := range []struct {
		name string
		node Node
		want bool
	}{
		{"schedulable", Node{Name: "a"}, false},
		{"spec.unschedulable", Node{Name: "a", Unschedulable: true}, true},
		{"the unschedulable taint alone", Node{Name: "a", TaintKeys: []string{"dedicated", TaintUnschedulable}}, true},
		{"other taints", Node{Name: "a", TaintKeys: []string{"node.kubernetes.io/not-ready", "dedicated"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NodeCordoned(tc.node); got != tc.want {
				t.Errorf("NodeCordoned(%+v) = %v, want %v", tc.node, got, tc.want)
			}
		})
	}
	got := CordonedNodes([]Node{{Name: "a"}, {Name: "b", Unschedulable: true}, {Name: "c", TaintKeys: []string{TaintUnschedulable}}})
	if diff := cmp.Diff(map[string]bool{"b": true, "c": true}, got); diff != "" {
		t.Errorf("CordonedNodes (-want +got):\n%s", diff)
	}
}

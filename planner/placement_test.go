package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// placed is a cluster of coordinators and data instances whose pods run on the given nodes,
// coordinators by id from 1 and data instances by ordinal from 0 ("" for a pod not scheduled);
// modes, when given, are the data instances' replication modes by ordinal.
func placed(coordinatorNodes, dataNodes []string, modes ...v1alpha1.ReplicationMode) PlacementInput {
	d := declared(int32(len(coordinatorNodes)), int32(len(dataNodes)), int32(len(coordinatorNodes)), int32(len(dataNodes)))
	nodes := map[string]string{}
	for i, node := range coordinatorNodes {
		if node != "" {
			nodes[fmt.Sprintf("mg-coordinator-%d", i+1)] = node
		}
	}
	for i, node := range dataNodes {
		if node != "" {
			nodes[fmt.Sprintf("mg-data-%d", i)] = node
		}
		d.DataInstances[i].Mode = v1alpha1.ReplicationSync
		if i < len(modes) {
			d.DataInstances[i].Mode = modes[i]
		}
	}
	return PlacementInput{Declared: d, PodNodes: nodes}
}

func withMain(in PlacementInput, main string) PlacementInput {
	in.Main = main
	return in
}

const (
	async  = v1alpha1.ReplicationAsync
	sync   = v1alpha1.ReplicationSync
	strict = v1alpha1.ReplicationStrictSync
)

// One node's loss takes the cluster down when it holds at least half the coordinators, or the
// MAIN with every Sync and StrictSync replica; an Async replica elsewhere saves nothing.
func TestSingleNodeRisks(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   PlacementInput
		want []NodeRisk
	}{
		{"3 coordinators and 2 data instances, one per node",
			withMain(placed([]string{"a", "b", "c"}, []string{"a", "b"}), "instance_0"), nil},
		{"3 coordinators, two on one node",
			withMain(placed([]string{"a", "a", "b"}, []string{"a", "b"}), "instance_0"),
			[]NodeRisk{{Node: "a", Coordinators: []string{"coordinator_1", "coordinator_2"}, Of: 3}}},
		{"5 coordinators, two on one node keep the majority",
			withMain(placed([]string{"a", "a", "b", "c", "d"}, []string{"a", "b"}), "instance_1"), nil},
		{"5 coordinators, three on one node",
			withMain(placed([]string{"a", "b", "a", "c", "a"}, []string{"b", "c"}), "instance_1"),
			[]NodeRisk{{Node: "a", Coordinators: []string{"coordinator_1", "coordinator_3", "coordinator_5"}, Of: 5}}},
		{"every coordinator on one node",
			withMain(placed([]string{"a", "a", "a"}, []string{"b", "c"}), "instance_0"),
			[]NodeRisk{{Node: "a", Coordinators: []string{"coordinator_1", "coordinator_2", "coordinator_3"}, Of: 3}}},
		{"the MAIN with its only Sync replica",
			withMain(placed([]string{"a", "b", "c"}, []string{"b", "b"}), "instance_1"),
			[]NodeRisk{{Node: "b", Main: "instance_1", MainKnown: true, SyncReplicas: []string{"instance_0"}}}},
		{"the MAIN with every StrictSync replica, an Async one elsewhere",
			withMain(placed([]string{"a", "b", "c"}, []string{"c", "c", "a"}, strict, strict, async), "instance_0"),
			[]NodeRisk{{Node: "c", Main: "instance_0", MainKnown: true, SyncReplicas: []string{"instance_1"}}}},
		{"a Sync replica on another node saves the data",
			withMain(placed([]string{"a", "b", "c"}, []string{"c", "c", "a"}), "instance_0"), nil},
		{"every replica Async: the MAIN's node alone holds the data surely up to date",
			withMain(placed([]string{"a", "b", "c"}, []string{"a", "b", "c"}, sync, async, async), "instance_0"),
			[]NodeRisk{{Node: "a", Main: "instance_0", MainKnown: true}}},
		{"one data instance",
			withMain(placed([]string{"a", "b", "c"}, []string{"b"}), "instance_0"),
			[]NodeRisk{{Node: "b", Main: "instance_0", MainKnown: true, OnlyDataInstance: true}}},
		{"a Sync replica not scheduled is on no node",
			withMain(placed([]string{"a", "b", "c"}, []string{"a", ""}), "instance_0"), nil},
		{"the MAIN not scheduled",
			withMain(placed([]string{"a", "b", "c"}, []string{"", "a"}), "instance_0"), nil},
		{"a coordinator not scheduled does not count on any node",
			withMain(placed([]string{"a", "", "b"}, []string{"a", "b"}), "instance_0"), nil},
		{"both kinds on one node",
			withMain(placed([]string{"a", "a", "b", "a", "c"}, []string{"a", "a"}), "instance_0"),
			[]NodeRisk{{Node: "a", Coordinators: []string{"coordinator_1", "coordinator_2", "coordinator_4"}, Of: 5,
				Main: "instance_0", MainKnown: true, SyncReplicas: []string{"instance_1"}}}},
		{"quorum on one node, the data on another",
			withMain(placed([]string{"a", "b", "a"}, []string{"c", "c", "c"}, strict, strict, strict), "instance_1"),
			[]NodeRisk{
				{Node: "a", Coordinators: []string{"coordinator_1", "coordinator_3"}, Of: 3},
				{Node: "c", Main: "instance_1", MainKnown: true, SyncReplicas: []string{"instance_0", "instance_2"}},
			}},
		{"no MAIN read: the data instances together are at risk whichever is MAIN",
			placed([]string{"a", "b", "c"}, []string{"b", "b"}),
			[]NodeRisk{{Node: "b", Main: "instance_0", SyncReplicas: []string{"instance_1"}}}},
		{"no MAIN read: Sync instances apart are safe whichever is MAIN",
			placed([]string{"a", "b", "c"}, []string{"a", "b", "b"}, sync, sync, async), nil},
		{"no MAIN read: an Async instance as MAIN would be at risk",
			placed([]string{"a", "b", "c"}, []string{"a", "b", "c"}, async, async, async),
			[]NodeRisk{{Node: "a", Main: "instance_0", OnlyDataInstance: false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SingleNodeRisks(tc.in)
			if len(got) == 0 {
				got = nil
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("risks (-want +got):\n%s", diff)
			}
		})
	}
}

// The condition names each node at risk and what it holds, says True with how many nodes the
// pods use otherwise, and Unknown while no pod is scheduled.
func TestHighlyAvailableCondition(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     PlacementInput
		status metav1.ConditionStatus
		reason v1alpha1.ConditionReason
		says   []string
	}{
		{"spread", withMain(placed([]string{"a", "b", "c"}, []string{"a", "b"}), "instance_0"),
			metav1.ConditionTrue, v1alpha1.ReasonSpreadAcrossNodes, []string{"the pods run on 3 nodes"}},
		{"crowded", withMain(placed([]string{"n1", "n1", "n2"}, []string{"n2", "n2"}), "instance_1"),
			metav1.ConditionFalse, v1alpha1.ReasonSingleNodeRisk, []string{
				"node n1 holds 2 of 3 coordinators (coordinator_1, coordinator_2), so its loss takes the Raft majority",
				"node n2 holds the MAIN instance_1 with every Sync and StrictSync replica (instance_0), so its loss takes every copy of the data that is surely up to date",
				"spec.placement",
			}},
		{"one node", withMain(placed([]string{"n1", "n1", "n1"}, []string{"n1"}), "instance_0"),
			metav1.ConditionFalse, v1alpha1.ReasonSingleNodeRisk, []string{
				"node n1 holds 3 of 3 coordinators (coordinator_1, coordinator_2, coordinator_3), so its loss takes the Raft majority, and the MAIN instance_0, the only data instance",
			}},
		{"all Async", withMain(placed([]string{"a", "b", "c"}, []string{"a", "b"}, async, async), "instance_1"),
			metav1.ConditionFalse, v1alpha1.ReasonSingleNodeRisk, []string{"node b holds the MAIN instance_1, whose replicas are all Async"}},
		{"no MAIN read", placed([]string{"a", "b", "c"}, []string{"c", "c"}),
			metav1.ConditionFalse, v1alpha1.ReasonSingleNodeRisk, []string{"node c holds instance_0 (were it MAIN: no MAIN was read) with every Sync and StrictSync replica (instance_1)"}},
		{"nothing scheduled", placed([]string{"", "", ""}, []string{"", ""}),
			metav1.ConditionUnknown, v1alpha1.ReasonPodsNotScheduled, []string{"no pod of the cluster is scheduled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := HighlyAvailable(tc.in)
			if got.Status != tc.status || got.Reason != tc.reason {
				t.Errorf("%s %s, want %s %s: %s", got.Status, got.Reason, tc.status, tc.reason, got.Message)
			}
			for _, s := range tc.says {
				if !strings.Contains(got.Message, s) {
					t.Errorf("message %q lacks %q", got.Message, s)
				}
			}
			if len(got.Message) > MaxMessage {
				t.Errorf("message of %d bytes", len(got.Message))
			}
		})
	}
}

// The same input gives the same condition, whatever the order the pods were read in: the
// message lists nodes and members in order, so a steady cluster's status never changes.
func TestHighlyAvailableIsDeterministic(t *testing.T) {
	in := withMain(placed([]string{"z", "z", "y", "y", "x"}, []string{"y", "y", "z"}, sync, sync, async), "instance_0")
	first := HighlyAvailable(in)
	for range 20 {
		if got := HighlyAvailable(in); got != first {
			t.Fatalf("%+v, then %+v", first, got)
		}
	}
	if strings.Contains(first.Message, "2 of 5 coordinators") {
		t.Errorf("2 of 5 coordinators keep the majority: %s", first.Message)
	}
	if !strings.HasPrefix(first.Message, "one node's loss would take the cluster down: node y holds the MAIN instance_0") {
		t.Errorf("message %q", first.Message)
	}
}

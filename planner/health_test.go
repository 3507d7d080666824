package planner

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Named observations of a 3+2 cluster "mg": coordinator_1 leads, instance_0 is MAIN.

// convergedRows is the leader's table of the converged 3+2 cluster.
func convergedRows() []memgraph.Instance { return rows(coords(3, 1), one(mainRow(0), replica(1))) }

// allPodsReady holds the five pods of the 3+2 cluster, every one Ready.
func allPodsReady() map[string]bool {
	return map[string]bool{
		"mg-coordinator-1": true, "mg-coordinator-2": true, "mg-coordinator-3": true,
		"mg-data-0": true, "mg-data-1": true,
	}
}

// podsWith is allPodsReady with the given pods' readiness changed (false: not Ready).
func podsWith(ready map[string]bool) map[string]bool {
	pods := allPodsReady()
	maps.Copy(pods, ready)
	return pods
}

// withoutPod is allPodsReady without the pod.
func withoutPod(pod string) map[string]bool {
	pods := allPodsReady()
	delete(pods, pod)
	return pods
}

// withRow is convergedRows with the row of the same name replaced.
func withRow(row memgraph.Instance) []memgraph.Instance {
	out := convergedRows()
	for i := range out {
		if out[i].Name == row.Name {
			out[i] = row
		}
	}
	return out
}

func crashLoop(pod string) topology.PodProblem {
	return topology.PodProblem{Pod: pod, Container: "memgraph", Reason: "CrashLoopBackOff", Message: "restarted 3 times: back-off 40s"}
}

func TestReadMemberHealth(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       HealthInput
		want     MemberHealth
		members  string
		degraded Condition
	}{
		{name: "converged: every member up",
			in:       HealthInput{Declared: declared(3, 2, 3, 2), Instances: convergedRows(), PodReady: allPodsReady()},
			want:     MemberHealth{Up: 5, Declared: 5},
			members:  "5/5",
			degraded: Condition{metav1.ConditionFalse, v1alpha1.ReasonAllMembersUp, "all 5 declared members are up"}},
		{name: "a replica's pod not Ready",
			in:      HealthInput{Declared: declared(3, 2, 3, 2), Instances: convergedRows(), PodReady: podsWith(map[string]bool{"mg-data-1": false})},
			want:    MemberHealth{Up: 4, Declared: 5, Down: []DownMember{{"instance_1", "pod mg-data-1 is not Ready"}}},
			members: "4/5",
			degraded: Condition{metav1.ConditionTrue, v1alpha1.ReasonMembersDown,
				"1 of 5 declared members are down: instance_1 (pod mg-data-1 is not Ready)"}},
		{name: "a crash-looping follower and a replica the leader reports down",
			in: HealthInput{Declared: declared(3, 2, 3, 2), Instances: withRow(downRow(1)),
				PodReady: podsWith(map[string]bool{"mg-coordinator-3": false}), Problems: []topology.PodProblem{crashLoop("mg-coordinator-3")}},
			want: MemberHealth{Up: 3, Declared: 5, Down: []DownMember{
				{"coordinator_3", "pod mg-coordinator-3 container memgraph: CrashLoopBackOff: restarted 3 times: back-off 40s"},
				{"instance_1", "health down in the leader's SHOW INSTANCES"},
			}},
			members: "3/5",
			degraded: Condition{metav1.ConditionTrue, v1alpha1.ReasonMembersDown,
				"2 of 5 declared members are down: coordinator_3 (pod mg-coordinator-3 container memgraph: CrashLoopBackOff: restarted 3 times: back-off 40s), " +
					"instance_1 (health down in the leader's SHOW INSTANCES)"}},
		{name: "a pod being added: no pod yet, then Ready but not registered",
			in: HealthInput{Declared: declared(3, 4, 3, 4), Instances: convergedRows(),
				PodReady: podsWith(map[string]bool{"mg-data-2": true})},
			want: MemberHealth{Up: 5, Declared: 7, Down: []DownMember{
				{"instance_2", "not registered with the coordinators"},
				{"instance_3", "pod mg-data-3 does not exist"},
			}},
			members: "5/7",
			degraded: Condition{metav1.ConditionTrue, v1alpha1.ReasonMembersDown,
				"2 of 7 declared members are down: instance_2 (not registered with the coordinators), instance_3 (pod mg-data-3 does not exist)"}},
		{name: "a half-joined coordinator is not registered",
			in:      HealthInput{Declared: declared(3, 2, 3, 2), Instances: withRow(halfJoined(2)), PodReady: allPodsReady()},
			want:    MemberHealth{Up: 4, Declared: 5, Down: []DownMember{{"coordinator_2", "not registered with the coordinators"}}},
			members: "4/5",
			degraded: Condition{metav1.ConditionTrue, v1alpha1.ReasonMembersDown,
				"1 of 5 declared members are down: coordinator_2 (not registered with the coordinators)"}},
		{name: "without a leader's table, a Ready pod counts as up",
			in:      HealthInput{Declared: declared(3, 2, 3, 2), PodReady: withoutPod("mg-coordinator-2")},
			want:    MemberHealth{Up: 4, Declared: 5, Down: []DownMember{{"coordinator_2", "pod mg-coordinator-2 does not exist"}}},
			members: "4/5",
			degraded: Condition{metav1.ConditionTrue, v1alpha1.ReasonMembersDown,
				"1 of 5 declared members are down: coordinator_2 (pod mg-coordinator-2 does not exist)"}},
		{name: "a retiring member is not declared",
			in:       HealthInput{Declared: declared(3, 1, 3, 2), Instances: convergedRows(), PodReady: podsWith(map[string]bool{"mg-data-1": false})},
			want:     MemberHealth{Up: 4, Declared: 4},
			members:  "4/4",
			degraded: Condition{metav1.ConditionFalse, v1alpha1.ReasonAllMembersUp, "all 4 declared members are up"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ReadMemberHealth(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadMemberHealth (-want +got):\n%s", diff)
			}
			if m := got.Members(); m != tc.members {
				t.Errorf("Members() = %q, want %q", m, tc.members)
			}
			if diff := cmp.Diff(tc.degraded, got.Degraded()); diff != "" {
				t.Errorf("Degraded (-want +got):\n%s", diff)
			}
		})
	}
}

// Many members down: the message lists the first ones and counts the rest, within MaxMessage.
func TestDegradedMessageIsBounded(t *testing.T) {
	in := HealthInput{Declared: declared(9, 128, 9, 128), PodReady: map[string]bool{}}
	got := ReadMemberHealth(in).Degraded()
	if got.Status != metav1.ConditionTrue || len(got.Message) > MaxMessage {
		t.Errorf("Degraded = %+v (%d bytes), want True within %d bytes", got, len(got.Message), MaxMessage)
	}
	want := "137 of 137 declared members are down: coordinator_1 (pod mg-coordinator-1 does not exist), " +
		"coordinator_2 (pod mg-coordinator-2 does not exist), coordinator_3 (pod mg-coordinator-3 does not exist), " +
		"coordinator_4 (pod mg-coordinator-4 does not exist), coordinator_5 (pod mg-coordinator-5 does not exist) and 132 more"
	if got.Message != want {
		t.Errorf("message\n got %q\nwant %q", got.Message, want)
	}
}

func TestServesWrites(t *testing.T) {
	for _, tc := range []struct {
		name      string
		declared  topology.Declared
		instances []memgraph.Instance
		pods      map[string]bool
		want      Condition
	}{
		{"converged", declared(3, 2, 3, 2), convergedRows(), allPodsReady(),
			Condition{metav1.ConditionTrue, v1alpha1.ReasonMainElected, "instance_0 is MAIN and up; coordinator_1 leads"}},
		{"a replica's pod not Ready keeps the cluster Ready", declared(3, 2, 3, 2), withRow(downRow(1)),
			podsWith(map[string]bool{"mg-data-1": false}),
			Condition{metav1.ConditionTrue, v1alpha1.ReasonMainElected, "instance_0 is MAIN and up; coordinator_1 leads"}},
		{"a follower down keeps the cluster Ready", declared(3, 2, 3, 2), convergedRows(), withoutPod("mg-coordinator-3"),
			Condition{metav1.ConditionTrue, v1alpha1.ReasonMainElected, "instance_0 is MAIN and up; coordinator_1 leads"}},
		{"the MAIN's pod not Ready", declared(3, 2, 3, 2), convergedRows(), podsWith(map[string]bool{"mg-data-0": false}),
			Condition{metav1.ConditionFalse, v1alpha1.ReasonMainDown,
				"instance_0 is MAIN but its pod mg-data-0 is not Ready: writes fail until it is back or a failover elects another MAIN"}},
		{"the MAIN reported down", declared(3, 2, 3, 2), withRow(data(0, memgraph.HealthDown, memgraph.RoleMain)), allPodsReady(),
			Condition{metav1.ConditionFalse, v1alpha1.ReasonMainDown,
				"instance_0 is MAIN but coordinator_1 reports its health down: writes fail until it is back or a failover elects another MAIN"}},
		{"a retiring MAIN whose pod is gone", declared(3, 1, 3, 2), rows(coords(3, 1), one(replica(0), mainRow(1))), withoutPod("mg-data-1"),
			Condition{metav1.ConditionFalse, v1alpha1.ReasonMainDown,
				"instance_1 is MAIN but its pod mg-data-1 is not Ready: writes fail until it is back or a failover elects another MAIN"}},
		{"no MAIN", declared(3, 2, 3, 2), rows(coords(3, 1), one(replica(0), replica(1))), allPodsReady(),
			Condition{metav1.ConditionFalse, v1alpha1.ReasonNoMainElected, "coordinator_1 leads, but no data instance is MAIN"}},
		{"a leader not ready yet", declared(3, 2, 3, 2), rows(one(data(0, memgraph.HealthUnknown, memgraph.RoleMain)),
			[]memgraph.Instance{func() memgraph.Instance {
				r := coord(2, memgraph.RoleLeader)
				r.Health = memgraph.HealthUnknown
				return r
			}()}),
			allPodsReady(),
			Condition{metav1.ConditionFalse, v1alpha1.ReasonNoCoordinatorLeader, "coordinator_2 leads but has not finished reconciling the cluster"}},
		{"no table", declared(3, 2, 3, 2), nil, allPodsReady(),
			Condition{metav1.ConditionFalse, v1alpha1.ReasonNoCoordinatorLeader, "no coordinator that answered names a leader"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ServesWrites(tc.declared, tc.instances, tc.pods)); diff != "" {
				t.Errorf("ServesWrites (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretMissing(t *testing.T) {
	if c, ok := SecretMissing(nil); ok {
		t.Errorf("SecretMissing(nil) = %+v, true; want no condition", c)
	}
	license := topology.MissingSecret{Namespace: "db", NamedSecret: topology.NamedSecret{Name: "memgraph-secrets", Field: "spec.secrets.name", Holds: "the license"}}
	got, ok := SecretMissing([]topology.MissingSecret{license})
	want := Condition{metav1.ConditionFalse, v1alpha1.ReasonSecretMissing,
		"Secret db/memgraph-secrets (spec.secrets.name: the license) does not exist; pods that need it cannot start: " +
			"create it in namespace db, or set the field to a Secret that exists"}
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("SecretMissing = %v (-want +got):\n%s", ok, diff)
	}
}

// A hibernating or hibernated cluster has no member down: none is meant to run.
func TestDegradedWhileHibernating(t *testing.T) {
	h := MemberHealth{Up: 0, Declared: 5, Down: []DownMember{{Name: "coordinator_1", Why: "pod mg-coordinator-1 does not exist"}}}
	for phase, want := range map[v1alpha1.Phase]v1alpha1.ConditionReason{
		v1alpha1.PhaseHibernating: v1alpha1.ReasonHibernated, v1alpha1.PhaseHibernated: v1alpha1.ReasonHibernated,
		v1alpha1.PhaseWaking: v1alpha1.ReasonMembersDown, v1alpha1.PhaseRunning: v1alpha1.ReasonMembersDown,
	} {
		if got := h.DegradedIn(phase); got.Reason != want {
			t.Errorf("%s: Degraded %s %s, want %s", phase, got.Status, got.Reason, want)
		}
	}
}

package planner

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// rolloutCase is one named fixture and everything PlanRollout must return for it.
type rolloutCase struct {
	name       string
	in         RolloutInput
	partitions topology.Partitions
	commands   []string
	reason     v1alpha1.ConditionReason
	message    string
	needsLag   bool
}

func runRolloutCases(t *testing.T, cases []rolloutCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanRollout(tc.in)
			if diff := cmp.Diff(tc.partitions, got.Partitions); diff != "" {
				t.Errorf("partitions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.commands, queries(got.Commands()), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if got.Reason != tc.reason || got.Message != tc.message {
				t.Errorf("Updated = %s %q,\n want %s %q", got.Reason, got.Message, tc.reason, tc.message)
			}
			if got := RolloutNeedsCatchUpReads(tc.in); got != tc.needsLag {
				t.Errorf("RolloutNeedsCatchUpReads = %v, want %v", got, tc.needsLag)
			}
		})
	}
}

func TestRolloutHoldsWhatIsNotRolling(t *testing.T) {
	runRolloutCases(t, []rolloutCase{{
		name:       "converged: every pod at the update revision, every pod held",
		in:         rolloutIn(set("nnn", settled), set("nnn", settled), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonUpToDate,
		message:    "all 6 pods run their StatefulSet's current pod template",
	}, {
		name:       "a new cluster: no StatefulSet yet, the returned counts",
		in:         rolloutIn(RolloutSet{Span: 0}, RolloutSet{Span: 0}, nil),
		partitions: partitions(0, 0),
		reason:     v1alpha1.ReasonUpToDate,
		message:    "no pod to update yet",
	}, {
		name: "StatefulSets without pods yet: nothing to roll",
		in: declaring(rolloutIn(RolloutSet{Exists: true, Span: 3}, RolloutSet{Exists: true, Span: 2}, nil),
			3, 2, replicas(3, 2)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonUpToDate,
		message:    "all 5 pods run their StatefulSet's current pod template",
	}, {
		name:       "the template changes in this very sync: every pod held",
		in:         rolloutIn(set("nnn", settled, changing), set("nnn", settled, changing), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "holding every data pod until the StatefulSet controller has the new pod template's revision; 0 of 6 pods updated",
	}, {
		name:       "the StatefulSet controller has not observed the new template: every pod held",
		in:         rolloutIn(set("ooo", settled), set("ooo", unobserved), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "holding every data pod until the StatefulSet controller has the new pod template's revision; 0 of 6 pods updated",
	}, {
		name:       "a new template in the middle of a rollout: every pod held again, the replaced one too",
		in:         rolloutIn(set("ooo", changing), set("oon", changing), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "holding every data pod until the StatefulSet controller has the new pod template's revision; 0 of 6 pods updated",
	}, {
		name:       "only the coordinators' template changes: their pods are held, the data instances are done",
		in:         rolloutIn(set("nnn", settled, changing), set("nnn", settled), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "holding every coordinator pod until the StatefulSet controller has the new pod template's revision; 3 of 6 pods updated",
	}, {
		name:       "a partition just moved, not yet observed: the revision still stands, the rollout goes on",
		in:         rolloutIn(set("ooo"), set("ooo", partitionMoved), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2); next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name: "growth and a new template in one edit: the new members start at the new revision",
		in: declaring(rolloutIn(set("nnn", settled, changing), set("nnn", settled, changing), clusterView(3, 1, 3, 0)),
			3, 5, replicas(3, 5)),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "holding every data pod until the StatefulSet controller has the new pod template's revision; 0 of 8 pods updated",
	}, {
		name: "growth during a rollout: the new member is created at the new revision before the next release",
		in: declaring(rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0)),
			3, 4, replicas(3, 4)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-3 (instance_3) to be created; next: replace mg-data-1 (instance_1); 1 of 7 pods updated",
		needsLag:   true,
	}})
}

func TestRolloutReleasesDataPodsHighestFirst(t *testing.T) {
	runRolloutCases(t, []rolloutCase{{
		name:       "first step: the highest data pod is released, the coordinators wait",
		in:         rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2); next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "the only data pod released and gone: it stays released",
		in:         rolloutIn(set("ooo"), set("-"), nil),
		partitions: partitions(3, 0),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-0 (instance_0) to be created; 0 of 4 pods updated",
		needsLag:   true,
	}, {
		name:       "the released pod is terminating: it stays released",
		in:         rolloutIn(set("ooo"), set("oot"), nil),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-2 (instance_2) to be replaced; next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "the released pod is gone: it stays released, so it is created at the new revision",
		in:         rolloutIn(set("ooo"), set("oo-"), nil),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-2 (instance_2) to be created; next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "the replaced pod is not Ready yet",
		in:         rolloutIn(set("ooo"), set("ooy"), nil),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-2 (instance_2) to be Ready; next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "the replaced pod is Ready but its instance is still down for the leader",
		in:         rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0, rowHealth("instance_2", memgraph.HealthDown))),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-2 (instance_2) to be up in the leader's view (it is down); next: replace mg-data-1 (instance_1); 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "a lagging replaced replica blocks the next release",
		in:         rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0, behindBy(2, 3))),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-2 (instance_2) to catch up with MAIN instance_0 (instance_2 is 3 transactions behind on database memgraph); next: replace mg-data-1 (instance_1); 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "replication lag not read: no release",
		in:         rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0, func(o *Observed) { o.Lag = nil })),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-2 (instance_2) to catch up with MAIN instance_0 (replication lag was not observed); next: replace mg-data-1 (instance_1); 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "the replaced replica caught up: the next one is released",
		in:         rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 1),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-1 (instance_1); next: switchover instance_0 → instance_1, then replace mg-data-0; 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "every data pod back, the update not recorded complete yet: the coordinators wait, every data pod stays released",
		in:         rolloutIn(set("ooo"), set("nnn"), clusterView(3, 1, 3, 2)),
		partitions: partitions(3, 0),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for the StatefulSet controller to record the data update as complete; 3 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "the data update complete: the coordinators' first follower is next",
		in:         rolloutIn(set("ooo"), set("nnn", settled), clusterView(3, 1, 3, 2)),
		partitions: partitions(2, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-coordinator-3 (coordinator_3); next: replace mg-coordinator-2 (coordinator_2); 3 of 6 pods updated",
	}, {
		name:       "no view of the cluster: nothing new is released, the released pod stays released",
		in:         rolloutIn(set("ooo"), set("oon"), nil),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for the coordinators' view of the cluster (no ready leader answered); next: replace mg-data-1 (instance_1); 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name: "a leader that is not ready is no view",
		in: rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0, func(o *Observed) {
			o.Instances[0].Health = memgraph.HealthUnknown
		})),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for the coordinators' view of the cluster (no ready leader answered); next: replace mg-data-1 (instance_1); 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "another pod not Ready: never two pods down",
		in:         rolloutIn(set("oxo"), set("oon"), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-coordinator-2 (coordinator_2) to be Ready; next: replace mg-data-1 (instance_1); 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "another member down: never two members down",
		in:         rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0, rowHealth("coordinator_2", memgraph.HealthDown))),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-coordinator-2 (coordinator_2) to be up in the leader's view (it is down); next: replace mg-data-1 (instance_1); 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "no MAIN: the coordinators fail over first",
		in:         rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, -1)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for a MAIN (the coordinators have none right now); next: replace mg-data-1 (instance_1); 1 of 6 pods updated",
		needsLag:   true,
	}})
}

func TestRolloutHandsMainOverBeforeItsPod(t *testing.T) {
	runRolloutCases(t, []rolloutCase{{
		name:       "MAIN at the highest ordinal: handed to the lowest caught-up replica before the first release",
		in:         rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 2)),
		partitions: partitions(3, 3),
		commands:   []string{qHandover(2, 0)},
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "switchover instance_2 → instance_0, then replace mg-data-2; 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "MAIN at a middle ordinal: handed to the replica already replaced",
		in:         rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 1)),
		partitions: partitions(3, 2),
		commands:   []string{qHandover(1, 2)},
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "switchover instance_1 → instance_2, then replace mg-data-1; 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "after the switchover the old MAIN's pod is released",
		in:         rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 2)),
		partitions: partitions(3, 1),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-1 (instance_1); next: replace mg-data-0 (instance_0); 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "MAIN at the lowest ordinal is handed over last, to the lowest replaced replica",
		in:         rolloutIn(set("ooo"), set("onn"), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 1),
		commands:   []string{qHandover(0, 1)},
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "switchover instance_0 → instance_1, then replace mg-data-0; 2 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "the lowest caught-up replica is on a cordoned node: handed to the next, which a drain will not evict",
		in:         onCordonedNode(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 2)), 0),
		partitions: partitions(3, 3),
		commands:   []string{qHandover(2, 1)},
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "switchover instance_2 → instance_1, then replace mg-data-2; 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "every caught-up replica on a cordoned node: handed over all the same, the rollout goes on",
		in:         onCordonedNode(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 2)), 0, 1),
		partitions: partitions(3, 3),
		commands:   []string{qHandover(2, 0)},
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "switchover instance_2 → instance_0, then replace mg-data-2; 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "no caught-up survivor: RolloutBlocked, nothing demoted",
		in:         rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 2, behindBy(0, 5), behindBy(1, 2))),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutBlocked,
		message:    "cannot replace mg-data-2 (instance_2): it is MAIN and no declared survivor is up and caught up: instance_0 is 5 transactions behind on database memgraph; instance_1 is 2 transactions behind on database memgraph; 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "a single data instance is replaced in place",
		in:         rolloutIn(set("ooo"), set("o"), clusterView(3, 1, 1, 0)),
		partitions: partitions(3, 0),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-0 (instance_0) in place: instance_0 is the only data instance, so writes pause until it is back (there is no replica to hand MAIN to); next: replace mg-coordinator-3 (coordinator_3); 0 of 4 pods updated",
		needsLag:   true,
	}, {
		name:       "a human moved MAIN onto a replaced pod: no handover needed, the rollout goes on",
		in:         rolloutIn(set("ooo"), set("onn"), clusterView(3, 1, 3, 2)),
		partitions: partitions(3, 0),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-0 (instance_0); next: replace mg-coordinator-3 (coordinator_3); 2 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "a human moved MAIN onto the next pod: handed over from there, never back",
		in:         rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 1)),
		partitions: partitions(3, 2),
		commands:   []string{qHandover(1, 2)},
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "switchover instance_1 → instance_2, then replace mg-data-1; 1 of 6 pods updated",
		needsLag:   true,
	}})
}

func TestRolloutYieldsLeadershipBeforeTheLeadersPod(t *testing.T) {
	runRolloutCases(t, []rolloutCase{{
		name:       "leader at the highest id yields first",
		in:         rolloutIn(set("ooo"), set("nnn", settled), clusterView(3, 3, 3, 0)),
		partitions: partitions(3, 3),
		commands:   []string{qYield},
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "yielding leadership of coordinator_3 (Raft picks the successor), then replace mg-coordinator-3; 3 of 6 pods updated",
	}, {
		name:       "after the yield the old leader's pod is released",
		in:         rolloutIn(set("ooo"), set("nnn", settled), clusterView(3, 2, 3, 0)),
		partitions: partitions(2, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-coordinator-3 (coordinator_3); next: yield leadership of coordinator_2, then replace mg-coordinator-2; 3 of 6 pods updated",
	}, {
		name:       "a replaced coordinator must be back in the Raft membership before the next",
		in:         rolloutIn(set("oon"), set("nnn", settled), clusterView(3, 1, 3, 0, rowHealth("coordinator_3", memgraph.HealthDown))),
		partitions: partitions(2, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-coordinator-3 (coordinator_3) to be up in the leader's view (it is down); next: replace mg-coordinator-2 (coordinator_2); 4 of 6 pods updated",
	}, {
		name: "a coordinator that names itself leader beside the one that answered: wait for a settled view",
		in: rolloutIn(set("oon"), set("nnn", settled), clusterView(3, 1, 3, 0, func(o *Observed) {
			o.Instances[1].Role = memgraph.RoleLeader
		})),
		partitions: partitions(2, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for a settled leader (coordinator_2 reports itself leader but coordinator_1 answered as leader); next: replace mg-coordinator-2 (coordinator_2); 4 of 6 pods updated",
	}, {
		name:       "the coordinators wait while the data instances roll: their partition keeps every pod",
		in:         rolloutIn(set("ooo"), set("onn"), clusterView(3, 3, 3, 2)),
		partitions: partitions(3, 0),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-0 (instance_0); next: yield leadership of coordinator_3, then replace mg-coordinator-3; 2 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "all done but the last coordinator's return: it stays released",
		in:         rolloutIn(set("ynn"), set("nnn", settled), clusterView(3, 2, 3, 0)),
		partitions: partitions(0, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-coordinator-1 (coordinator_1) to be Ready; 5 of 6 pods updated",
	}, {
		name:       "all back: in progress, every pod released, until the controller records the update complete",
		in:         rolloutIn(set("nnn"), set("nnn", settled), clusterView(3, 2, 3, 0)),
		partitions: partitions(0, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for the StatefulSet controller to record the coordinator update as complete; 6 of 6 pods updated",
	}, {
		name:       "recorded complete: up to date, every pod held",
		in:         rolloutIn(set("nnn", settled), set("nnn", settled), clusterView(3, 2, 3, 0)),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonUpToDate,
		message:    "all 6 pods run their StatefulSet's current pod template",
	}})
}

func TestRolloutStuck(t *testing.T) {
	late := rolloutStart.Add(stepTimeout + time.Second)
	runRolloutCases(t, []rolloutCase{{
		name:       "a replaced pod not Ready after stepTimeout stops the rollout and says so",
		in:         at(rolloutIn(set("ooo"), set("ooy"), nil), late),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutStuck,
		message:    "stuck: mg-data-2 was created at the new revision at 2026-03-04T05:00:00Z and is still waiting to be Ready after spec.rollout.stepTimeout (10m0s); nothing further is replaced until it recovers or the spec changes; 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "exactly at stepTimeout it is not stuck yet",
		in:         at(rolloutIn(set("ooo"), set("ooy"), nil), rolloutStart.Add(stepTimeout)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-2 (instance_2) to be Ready; next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "judged from the pod's own creationTimestamp, not from when the rollout began",
		in:         at(rolloutIn(set("ooo"), set("ooy", createdAt(2, late.Add(-time.Minute))), nil), late),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-2 (instance_2) to be Ready; next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "a replaced replica that never catches up is stuck too",
		in:         at(rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0, behindBy(2, 9))), late),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutStuck,
		message:    "stuck: mg-data-2 was created at the new revision at 2026-03-04T05:00:00Z and is still waiting to catch up with MAIN instance_0 (instance_2 is 9 transactions behind on database memgraph) after spec.rollout.stepTimeout (10m0s); nothing further is replaced until it recovers or the spec changes; 1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "an old pod that is not Ready is the cluster's problem, not a stuck step",
		in:         at(rolloutIn(set("xoo"), set("oon"), clusterView(3, 1, 3, 0)), late),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-coordinator-1 (coordinator_1) to be Ready; next: replace mg-data-1 (instance_1); 1 of 6 pods updated",
		needsLag:   true,
	}})
}

func TestRolloutRollsBackTheSameWay(t *testing.T) {
	runRolloutCases(t, []rolloutCase{{
		name:       "spec reverted mid-rollout: the pod already replaced is replaced back",
		in:         rolloutIn(set("ooo", reverted), set("oon", reverted), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2); 5 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "reverted from a broken revision: the stuck pod is released though it is not Ready",
		in:         rolloutIn(set("ooo", reverted), set("ooy", reverted), clusterView(3, 1, 3, 0, rowHealth("instance_2", memgraph.HealthDown))),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2) (it is not Ready); 5 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "a pod that is not Ready and still MAIN is left to the coordinators' failover",
		in:         rolloutIn(set("ooo"), set("oox"), clusterView(3, 1, 3, 2)),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for the coordinators to fail over from instance_2, whose pod mg-data-2 is not Ready; next: switchover instance_2 → instance_0, then replace mg-data-2; 0 of 6 pods updated",
		needsLag:   true,
	}, {
		// Found by FuzzPlan: the view names another leader, yet coordinator_3's row reports it.
		name:       "a pod that is not Ready and whose row reports itself leader is left to the election",
		in:         rolloutIn(set("oox"), set("nnn", settled), clusterView(3, 1, 3, 0, rowRole("coordinator_3", memgraph.RoleLeader))),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for the coordinators to fail over from coordinator_3, whose pod mg-coordinator-3 is not Ready; next: replace mg-coordinator-3 (coordinator_3); 3 of 6 pods updated",
	}, {
		// Found by FuzzPlan: the leader yielded in the very pass that elected a MAIN.
		name:       "no coordinator step while the cluster has no MAIN",
		in:         rolloutIn(set("noo"), set("nn", settled), clusterView(3, 3, 2, -1)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for a MAIN (the coordinators have none right now); next: yield leadership of coordinator_3, then replace mg-coordinator-3; 3 of 5 pods updated",
	}, {
		name: "a pod that is not Ready and whose row reports a second MAIN is left to the failover",
		in: rolloutIn(set("ooo", settled, podRevision(0, revNew), podRevision(1, revNew), podRevision(2, revNew)),
			set("oox"), clusterView(3, 1, 3, 0, rowRole("instance_2", memgraph.RoleMain))),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for the coordinators to fail over from instance_2, whose pod mg-data-2 is not Ready; next: replace mg-data-2 (instance_2); 3 of 6 pods updated",
		needsLag:   true,
	}, {
		name: "reverted with a lower pod down at the superseded revision: blocked, with the way out",
		in: rolloutIn(set("ooo", reverted),
			set("oxo", reverted, podRevision(2, revNew), podRevision(1, revNew)), clusterView(3, 1, 3, 0, rowHealth("instance_1", memgraph.HealthDown))),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutBlocked,
		message:    "cannot go on: mg-data-1 (instance_1) is not Ready at a revision the spec no longer asks for, below mg-data-2, which the partition must release first while no other pod may be down: delete pod mg-data-1 and it comes back at the current revision; 4 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "a down pod is not released while the one above it is not back",
		in:         rolloutIn(set("ooo"), set("oxy"), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for mg-data-2 (instance_2) to be Ready; next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}})
}

func TestRolloutComposesWithScaling(t *testing.T) {
	runRolloutCases(t, []rolloutCase{{
		name: "new template and a scale-down in one edit: the retiring pod is never released",
		in: declaring(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)),
			3, 2, replicas(3, 3)),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for the scale-down to finish before replacing pods; 0 of 5 pods updated",
	}, {
		name: "the retiring member unregistered: the set shrinks, still nothing released",
		in: declaring(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 2, 0)),
			3, 2, replicas(3, 2)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for the scale-down to finish before replacing pods; 0 of 5 pods updated",
	}, {
		name: "the scale-down done: the rollout goes on from the new highest pod",
		in: declaring(rolloutIn(set("ooo"), set("oo"), clusterView(3, 1, 2, 0)),
			3, 2, replicas(3, 2)),
		partitions: partitions(3, 1),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-1 (instance_1); next: switchover instance_0 → instance_1, then replace mg-data-0; 0 of 5 pods updated",
		needsLag:   true,
	}, {
		name: "coordinators retiring mid data rollout: the data partition keeps what is released",
		in: declaring(rolloutIn(set("ooooo"), set("oon"), clusterView(5, 1, 3, 0)),
			3, 3, replicas(5, 3)),
		partitions: partitions(5, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "waiting for the scale-down to finish before replacing pods; 1 of 6 pods updated",
	}})
}

// Every partition PlanRollout returns keeps every pod the StatefulSet controller must not touch:
// for each fixture above, no pod below the partition is released, and the pods at or above it
// are exactly the ones at the new revision plus at most the one released in this step.
func TestRolloutReleasesAtMostOnePodPerStep(t *testing.T) {
	for _, in := range []RolloutInput{
		rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)),
		rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0)),
		rolloutIn(set("ooo"), set("onn"), clusterView(3, 1, 3, 2)),
		rolloutIn(set("ooo"), set("nnn", settled), clusterView(3, 2, 3, 0)),
		rolloutIn(set("oon"), set("nnn", settled), clusterView(3, 1, 3, 0)),
		rolloutIn(set("ooo", reverted), set("ooy", reverted), clusterView(3, 1, 3, 0)),
	} {
		step := PlanRollout(in)
		released := 0
		for _, r := range []struct {
			set       RolloutSet
			partition int32
		}{{in.Data, step.Partitions.DataInstances}, {in.Coordinators, step.Partitions.Coordinators}} {
			for _, pod := range r.set.Pods {
				if int32(pod.Index) >= r.partition && pod.Revision != r.set.UpdateRevision && !pod.Terminating {
					released++
				}
			}
		}
		if released > 1 {
			t.Errorf("%s: %d pods not at the new revision are released at once (partitions %+v)", step.Message, released, step.Partitions)
		}
	}
}

func TestRolloutVersions(t *testing.T) {
	for _, tc := range []struct {
		name            string
		in              RolloutInput
		version, target string
	}{
		{"before the first replacement: the old image, the new one targeted",
			rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)), imageOld, imageNew},
		{"mid-rollout the pods differ: no version",
			rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 0)), "", imageNew},
		{"a terminating old pod does not count",
			rolloutIn(set("nnn", settled), set("tnn"), clusterView(3, 1, 3, 1)), imageNew, imageNew},
		{"done: the new image, nothing targeted",
			rolloutIn(set("nnn", settled), set("nnn", settled), clusterView(3, 1, 3, 0)), imageNew, ""},
	} {
		got := PlanRollout(tc.in)
		if got.Version != tc.version || got.TargetVersion != tc.target {
			t.Errorf("%s: version %q, target %q; want %q, %q", tc.name, got.Version, got.TargetVersion, tc.version, tc.target)
		}
	}
}

// The generation each set's template arrived with is carried over, or predicted for a template
// this sync changes or a set it creates.
func TestRolloutTemplateGenerations(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  RolloutSet
		want int64
	}{
		{"a set this sync creates", RolloutSet{}, 1},
		{"a template this sync changes arrives with the next generation", set("ooo", changing), 5},
		{"the annotation stands", set("ooo", partitionMoved), 4},
		{"no annotation: the current generation", set("ooo"), 4},
	} {
		got := PlanRollout(rolloutIn(set("nnn", settled), tc.set, nil)).TemplateGenerations.DataInstances
		if got != tc.want {
			t.Errorf("%s: template generation %d, want %d", tc.name, got, tc.want)
		}
	}
}

// onCordonedNode puts the data pods at the given indexes on a cordoned node, the others on
// schedulable ones.
func onCordonedNode(in RolloutInput, data ...int) RolloutInput {
	in.CordonedNodes = map[string]bool{"drained": true}
	pods := slices.Clone(in.Data.Pods)
	for i := range pods {
		pods[i].Node = "node-" + strconv.Itoa(pods[i].Index)
		if slices.Contains(data, pods[i].Index) {
			pods[i].Node = "drained"
		}
	}
	in.Data.Pods = pods
	return in
}

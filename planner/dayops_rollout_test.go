package planner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Day-2 operations meet rollouts: at most one MAIN handover per pass, the rollout's handover
// prefers spec.preferredMain once it is updated, a switchover never undoes a rollout's, and
// hibernation neither begins in the middle of a rollout nor lets one release a pod.

func preferringIn(in RolloutInput, name string) RolloutInput {
	in.Declared = preferring(in.Declared, name)
	return in
}

func TestPlanDayTwoWithARollout(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         RolloutInput
		commands   []string
		partitions topology.Partitions
		switchover bool   // the plan's handover is the switchover's
		pending    string // a substring of Progress.SwitchoverPending
	}{{
		name: "a switchover and the rollout's handover in one pass: the switchover alone",
		// MAIN on instance_2, whose pod is next; instance_1 is preferred, caught up, updated.
		in:       preferringIn(rolloutIn(set("ooo"), set("onn", podRevision(2, revOld)), clusterView(3, 1, 3, 2)), "instance_1"),
		commands: []string{qHandover(2, 1)}, partitions: partitions(3, 3), switchover: true,
	}, {
		name: "the rollout hands MAIN to the preferred instance when it is caught up and updated",
		// MAIN on instance_1 (next); instance_2 and instance_3 are updated; lowest updated would be instance_2.
		in:       preferringIn(rolloutIn(set("ooo"), set("oonn"), clusterView(3, 1, 4, 1)), "instance_3"),
		commands: []string{qHandover(1, 3)}, partitions: partitions(3, 2),
		// instance_1 is MAIN, not the preferred instance_3: the switchover is due but the
		// rollout's handover does the same move.
		switchover: true,
	}, {
		name: "without a preference the rollout's handover goes to the lowest updated survivor",
		in:   rolloutIn(set("ooo"), set("oonn"), clusterView(3, 1, 4, 1)),
		// instance_1's pod is next: MAIN goes to instance_2, the lowest caught-up updated one.
		commands: []string{qHandover(1, 2)}, partitions: partitions(3, 2),
	}, {
		name: "the rollout does not give MAIN to a preferred instance that is not updated yet",
		in:   preferringIn(rolloutIn(set("ooo"), set("oon"), clusterView(3, 1, 3, 1)), "instance_0"),
		// instance_1's pod is next; instance_0 (preferred) still runs the old template.
		commands: []string{qHandover(1, 2)}, partitions: partitions(3, 2),
		pending: "instance_0",
	}, {
		name: "the switchover waits while the rollout still has to replace the preferred instance's pod",
		// The rollout moved MAIN to instance_1 and replaces instance_0's pod next: handing MAIN
		// to instance_0 now would only make the rollout move it off again.
		in:       preferringIn(rolloutIn(set("ooo"), set("onn"), clusterView(3, 1, 3, 1)), "instance_0"),
		commands: nil, partitions: partitions(3, 0),
		pending: "does not run the new pod template yet",
	}, {
		name:       "once the preferred instance is updated and caught up, MAIN goes back to it",
		in:         preferringIn(rolloutIn(set("nnn", settled), set("nnn", settled), clusterView(3, 1, 3, 2)), "instance_0"),
		commands:   []string{qHandover(2, 0)},
		partitions: partitions(3, 3), switchover: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.in.Declared, withWorkloads(tc.in))
			if diff := cmp.Diff(tc.commands, queries(got.Commands), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			handovers := 0
			for _, c := range got.Commands {
				if _, ok := c.(Handover); ok {
					handovers++
				}
			}
			if handovers > 1 {
				t.Errorf("%d MAIN handovers in one pass", handovers)
			}
			if diff := cmp.Diff(tc.partitions, got.Rollout.Partitions); diff != "" {
				t.Errorf("partitions (-want +got):\n%s", diff)
			}
			if got.Progress.Switchover != tc.switchover {
				t.Errorf("Progress.Switchover = %v, want %v", got.Progress.Switchover, tc.switchover)
			}
			if !strings.Contains(got.Progress.SwitchoverPending, tc.pending) || tc.pending == "" && got.Progress.SwitchoverPending != "" {
				t.Errorf("SwitchoverPending %q, want it to mention %q", got.Progress.SwitchoverPending, tc.pending)
			}
		})
	}
}

func TestHibernationWaitsForARollout(t *testing.T) {
	d := declared(3, 3, 3, 3)
	in := HibernationInput{Declared: d, Hibernate: true, DataPods: pods(0, 1, 2), CoordinatorPods: pods(1, 2, 3),
		Span: replicas(3, 3), Returned: replicas(3, 3), RolloutPending: "replacing mg-data-1 (instance_1); 1 of 6 pods updated"}
	runHibernationCases(t, []hibernationCase{{
		name: "a rollout in progress is finished first",
		in:   in,
		want: HibernationStep{Phase: v1alpha1.PhaseHibernating, Hibernated: isFalse(v1alpha1.ReasonHibernationPending,
			"waiting for the rollout to finish before hibernating, so that every pod stops and wakes at one revision: "+
				"replacing mg-data-1 (instance_1); 1 of 6 pods updated")},
	}, {
		name: "hibernation that began goes on whatever the rollout says (a template changed while hibernating)",
		in: func() HibernationInput {
			began := in
			began.Returned, began.Window = replicas(3, 1), window(2)
			began.View = leaderView(replica(0), replica(1), mainRow(2))
			return began
		}(),
		want: hibernatingStep(window(2), 3, 1, "stopping the data replicas first (instance_0, instance_1); MAIN instance_2 stays up until they are gone"),
	}})
}

// While hibernation is in charge the rollout releases no running pod, and once nothing runs the
// pods start at the declared template: partition 0.
func TestHibernationRollout(t *testing.T) {
	in := rolloutIn(set("ooo"), set("onn"), nil)
	stopping := hibernatingStep(window(2), 3, 1, "stopping the data replicas first")
	for _, tc := range []struct {
		name string
		step HibernationStep
		want topology.Partitions
	}{
		{"pods stopping: none replaced", stopping, partitions(3, 1)},
		{"hibernated: pods start at the declared template", HibernationStep{InCharge: true, Phase: v1alpha1.PhaseHibernated}, partitions(0, 0)},
		{"waking: likewise", HibernationStep{InCharge: true, Phase: v1alpha1.PhaseWaking, Replicas: replicas(3, 1)}, partitions(0, 0)},
	} {
		got := HibernationRollout(tc.step, in)
		if got.Partitions != tc.want || got.Handover != nil || got.Yield {
			t.Errorf("%s: %+v, want partitions %+v and no step", tc.name, got, tc.want)
		}
		if got.Reason != PlanRollout(in).Reason {
			t.Errorf("%s: Updated reason %q, want the rollout's own %q", tc.name, got.Reason, PlanRollout(in).Reason)
		}
	}
}

func TestHibernationRolloutPending(t *testing.T) {
	rolling := rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0))
	done := rolloutIn(set("nnn"), set("nnn"), clusterView(3, 1, 3, 0))
	done.Coordinators.CurrentRevision, done.Data.CurrentRevision = revNew, revNew
	for _, tc := range []struct {
		name      string
		in        RolloutInput
		hibernate bool
		want      string
	}{
		{"awake: no rollout is asked about", rolling, false, ""},
		{"hibernating mid-rollout: the rollout's own message", rolling, true,
			"waiting for the coordinators' view of the cluster (no ready leader answered); next: replace mg-data-2 (instance_2); 0 of 6 pods updated"},
		{"hibernating with every pod updated: nothing pending", done, true, ""},
		{"hibernating for an allowed downgrade: hibernation carries it out, nothing pending",
			allowingDowngrade(versioned(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)), mg313, mg312)), true, ""},
		{"hibernating with a downgrade not allowed: the refusal is pending",
			versioned(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)), mg313, mg312), true,
			"not rolled: the spec asks for Memgraph 3.12.0 but pods run 3.13.0 (" + mg313 + "), a downgrade: an older Memgraph " +
				"may not load the snapshots and WAL a newer one wrote, and a newer MAIN cannot replicate to an older replica; set " +
				"spec.image back to " + mg313 + ", or annotate the MemgraphCluster memgraph.com/allow-downgrade=true to roll back " +
				"anyway (take a backup first); 0 of 6 pods updated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := HibernationRolloutPending(tc.in.Declared, tc.hibernate, tc.in.Replicas, tc.in.Workloads)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

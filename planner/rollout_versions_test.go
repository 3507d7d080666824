package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

const (
	mg38  = "docker.io/memgraph/memgraph:3.8.0"
	mg312 = "docker.io/memgraph/memgraph:3.12.0"
	mg313 = "docker.io/memgraph/memgraph:3.13.0"
	mgTip = "docker.io/memgraph/memgraph:latest"
)

// versioned rolls in's pods from image from (the old revision's) to image to (the new one's,
// and the spec's).
func versioned(in RolloutInput, from, to string) RolloutInput {
	for _, s := range []*RolloutSet{&in.Coordinators, &in.Data} {
		pods := append([]RolloutPod(nil), s.Pods...)
		for i := range pods {
			pods[i].Image = from
			if pods[i].Revision == revNew {
				pods[i].Image = to
			}
		}
		s.Pods = pods
	}
	in.Image = to
	return in
}

// rolledBack: the spec asks for image again (the pods at the old revision run it).
func rolledBack(in RolloutInput, image string) RolloutInput {
	in.Image = image
	return in
}

func allowingDowngrade(in RolloutInput) RolloutInput {
	in.AllowDowngrade = true
	return in
}

// Upgrades roll the MAIN's pod last, as Memgraph's own upgrade does (tests/issu/test_upgrade.sh
// ~860–884): an older MAIN replicates to newer replicas, a newer MAIN cannot replicate to older
// ones (src/rpc/utils.hpp 29–87).
func TestAnUpgradeRollsTheMainsPodLast(t *testing.T) {
	up := func(coordinators, data RolloutSet, o *Observed) RolloutInput {
		return versioned(rolloutIn(coordinators, data, o), mg312, mg313)
	}
	const (
		step1 = "upgrade to Memgraph 3.13.0, MAIN's pod last: step 1 of 3 (move MAIN to the pod replaced last); "
		step2 = "upgrade to Memgraph 3.13.0, MAIN's pod last: step 2 of 3 (replace the replicas' pods); "
		step3 = "upgrade to Memgraph 3.13.0, MAIN's pod last: step 3 of 3 (hand MAIN to an updated replica, replace the old MAIN's pod); "
	)
	runRolloutCases(t, []rolloutCase{{
		name:       "MAIN on the middle ordinal: before any pod, MAIN moves to the pod replaced last (old to old)",
		in:         up(set("ooo"), set("ooo"), clusterView(3, 1, 3, 1)),
		partitions: partitions(3, 3),
		commands:   []string{qHandover(1, 0)},
		reason:     v1alpha1.ReasonRolloutInProgress,
		message: step1 + "switchover instance_1 → instance_0, whose pod mg-data-0 is replaced last, so that no newer MAIN ever " +
			"replicates to an older replica; then the replicas' pods; 0 of 6 pods updated",
		needsLag: true,
	}, {
		name:       "MAIN on the highest ordinal: the same move, not a handover to the first updated pod",
		in:         up(set("ooo"), set("ooo"), clusterView(3, 1, 3, 2)),
		partitions: partitions(3, 3),
		commands:   []string{qHandover(2, 0)},
		reason:     v1alpha1.ReasonRolloutInProgress,
		message: step1 + "switchover instance_2 → instance_0, whose pod mg-data-0 is replaced last, so that no newer MAIN ever " +
			"replicates to an older replica; then the replicas' pods; 0 of 6 pods updated",
		needsLag: true,
	}, {
		name:       "MAIN on the pod replaced last: the replicas roll, highest first",
		in:         up(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    step2 + "replacing mg-data-2 (instance_2); next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "a replica MAIN left on an updated pod (a failover) is not moved back: the older replicas roll at once",
		in:         up(set("ooo"), set("oon"), clusterView(3, 1, 3, 2)),
		partitions: partitions(3, 0),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    releasingOlder("mg-data-1, mg-data-0", "instance_2") + "1 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "MAIN handed to an updated replica: the old MAIN's pod, the last old one, is replaced (still step 3)",
		in:         up(set("ooo"), set("onn"), clusterView(3, 1, 3, 1)),
		partitions: partitions(3, 0),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    step3 + "replacing mg-data-0 (instance_0); next: replace mg-coordinator-3 (coordinator_3); 2 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "every replica updated: MAIN goes to an updated replica (the old MAIN, whose pod is next, is the one exception)",
		in:         up(set("ooo"), set("onn"), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 1),
		commands:   []string{qHandover(0, 1)},
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    step3 + "switchover instance_0 → instance_1, then replace mg-data-0; 2 of 6 pods updated",
		needsLag:   true,
	}, {
		name: "the pod replaced last is recovering (lag 0, SHOW REPLICAS recovery): MAIN stays, nothing is replaced",
		in: up(set("ooo"), set("ooo"), clusterView(3, 1, 3, 1, func(o *Observed) {
			o.Replicas = showing(1, o.Lag, map[string]string{"instance_0": memgraph.ReplicaRecovery})
		})),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message: step1 + "waiting for instance_0 to take MAIN over from instance_1 before any data pod is replaced " +
			"(instance_0 is recovery, not ready, on database memgraph (SHOW REPLICAS on MAIN instance_1; its lag of 0 is only " +
			"the MAIN's cached count)); next: switchover instance_1 → instance_0, whose pod mg-data-0 is replaced last; 0 of 6 pods updated",
		needsLag: true,
	}, {
		name:       "a change that keeps the version (a mirror of the same release): no move, MAIN handed over when its pod is next",
		in:         versioned(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 1)), mg312, "registry.example/memgraph:3.12.0"),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2); next: switchover instance_1 → instance_2, then replace mg-data-1; 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "a version that cannot be read (latest): no version rule applies",
		in:         versioned(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 1)), mg312, mgTip),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2); next: switchover instance_1 → instance_2, then replace mg-data-1; 0 of 6 pods updated",
		needsLag:   true,
	}})
}

// Downgrades and the 3.9 boundary are planner decisions (admission cannot see what the pods
// run): a refused change holds every pod, and pods a growth adds start at the current revision.
func TestVersionChangesThatAreNotRolled(t *testing.T) {
	downgrade := func(in RolloutInput) RolloutInput { return versioned(in, mg313, mg312) }
	runRolloutCases(t, []rolloutCase{{
		name:       "a downgrade without the annotation is refused: every pod held",
		in:         downgrade(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0))),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonDowngradeRefused,
		message: "not rolled: the spec asks for Memgraph 3.12.0 but pods run 3.13.0 (" + mg313 + "), a downgrade: an older Memgraph " +
			"may not load the snapshots and WAL a newer one wrote, and a newer MAIN cannot replicate to an older replica; set " +
			"spec.image back to " + mg313 + ", or annotate the MemgraphCluster memgraph.com/allow-downgrade=true to roll back " +
			"anyway (take a backup first); 0 of 6 pods updated",
	}, {
		name: "a refused downgrade while the cluster grows: the new pods start at the current revision too",
		in: declaring(downgrade(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0))), 3, 5,
			replicas(3, 5)),
		partitions: partitions(3, 5),
		reason:     v1alpha1.ReasonDowngradeRefused,
		message: "not rolled: the spec asks for Memgraph 3.12.0 but pods run 3.13.0 (" + mg313 + "), a downgrade: an older Memgraph " +
			"may not load the snapshots and WAL a newer one wrote, and a newer MAIN cannot replicate to an older replica; set " +
			"spec.image back to " + mg313 + ", or annotate the MemgraphCluster memgraph.com/allow-downgrade=true to roll back " +
			"anyway (take a backup first); 0 of 8 pods updated",
	}, {
		name:       "an upgrade rolled back halfway is a downgrade of the pods already upgraded",
		in:         rolledBack(versioned(rolloutIn(set("ooo"), set("oon", reverted), clusterView(3, 1, 3, 0)), mg312, mg313), mg312),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonDowngradeRefused,
		message: "not rolled: the spec asks for Memgraph 3.12.0 but pods run 3.13.0 (" + mg313 + "), a downgrade: an older Memgraph " +
			"may not load the snapshots and WAL a newer one wrote, and a newer MAIN cannot replicate to an older replica; set " +
			"spec.image back to " + mg313 + ", or annotate the MemgraphCluster memgraph.com/allow-downgrade=true to roll back " +
			"anyway (take a backup first); 2 of 6 pods updated",
	}, {
		name:       "annotated, MAIN newer than the spec: not rolled while the cluster runs, every pod held until hibernation",
		in:         allowingDowngrade(downgrade(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)))),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonDowngradeNeedsHibernation,
		message: "not rolled while the cluster runs: the MAIN instance_0 runs Memgraph 3.13.0 (" + mg313 + ") and the spec asks " +
			"for 3.12.0; a newer MAIN cannot replicate to the older replicas a rolling downgrade would make, so every pod must " +
			"stop and start again at 3.12.0 together: set spec.hibernate to true, then to false once the cluster is Hibernated, " +
			"or set spec.image back to " + mg313 + "; 0 of 6 pods updated",
	}, {
		name: "annotated, an upgrade rolled back halfway with MAIN still at the older version: the upgraded replicas roll back",
		in: allowingDowngrade(rolledBack(versioned(rolloutIn(set("ooo"), set("oon", reverted), clusterView(3, 1, 3, 0)),
			mg312, mg313), mg312)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2); next: replace mg-coordinator-3 (coordinator_3); 2 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "across 3.9 the change is never rolled, annotated or not",
		in:         allowingDowngrade(versioned(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)), mg38, mg312)),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonUpgradeNeedsMigration,
		message: "not rolled: " + mg38 + " runs Memgraph 3.8.0 and the spec asks for 3.12.0, across Memgraph 3.9, where every " +
			"coordinator's data must be wiped (Memgraph's procedure \"Migrating to v3.9 HA\"); follow it, or set spec.image " +
			"back to " + mg38 + "; 0 of 6 pods updated",
	}})
}

// A pod that is not Ready has not shown that it runs: rolling back a rollout stuck on an image
// that never starts is no downgrade.
func TestRollingBackAStuckUpgradeIsNoDowngrade(t *testing.T) {
	in := rolledBack(versioned(rolloutIn(set("ooo", reverted), set("ooy", reverted), clusterView(3, 1, 3, 0)), mg312, mg313), mg312)
	got := PlanRollout(in)
	if got.Reason != v1alpha1.ReasonRolloutInProgress || got.Partitions.DataInstances != 2 {
		t.Errorf("Updated %s %q, data partition %d; want the stuck pod mg-data-2 released at once", got.Reason, got.Message,
			got.Partitions.DataInstances)
	}
}

// A failover mid-upgrade put MAIN on an upgraded pod, then a scale-down retires it: the
// survivor, older, cannot replicate from it and so cannot be proven caught up until its own pod
// is upgraded. The partition can release the survivor alone (every pod above it is updated), so
// the rollout goes on through the scale-down instead of both waiting for each other.
func TestAnUpgradeGoesOnThroughAScaleDownThatWaitsForIt(t *testing.T) {
	view := clusterView(3, 1, 2, 1, func(o *Observed) {
		o.Replicas = showing(1, o.Lag, map[string]string{"instance_0": memgraph.ReplicaInvalid})
	})
	in := declaring(versioned(rolloutIn(set("nnn", settled), set("on"), view), mg312, mg313), 3, 1, replicas(3, 2))
	got := PlanRollout(in)
	if got.Partitions.DataInstances != 0 || got.Reason != v1alpha1.ReasonRolloutInProgress || got.Handover != nil {
		t.Errorf("partition %d, Updated %s %q, handover %v; want mg-data-0 released", got.Partitions.DataInstances, got.Reason,
			got.Message, got.Handover)
	}
	plan := Decide(in.Declared, withWorkloads(in))
	if len(plan.Commands) != 0 || plan.Progress.NoCaughtUpSurvivor == "" {
		t.Errorf("plan %v, NoCaughtUpSurvivor %q; want no handover while the survivor is older", queries(plan.Commands),
			plan.Progress.NoCaughtUpSurvivor)
	}
	// A retiring member unregistered already may sit between them at any revision: its pod is
	// the shrink's, and releasing it with mg-data-0 touches nobody.
	unregistered := clusterView(3, 1, 3, 2, func(o *Observed) {
		o.Instances = slices.DeleteFunc(o.Instances, func(r memgraph.Instance) bool { return r.Name == "instance_1" })
		o.Lag = slices.DeleteFunc(o.Lag, func(l memgraph.InstanceLag) bool { return l.Instance == "instance_1" })
		o.Replicas = showing(2, o.Lag, map[string]string{"instance_0": memgraph.ReplicaInvalid})
	})
	in = declaring(versioned(rolloutIn(set("nnn", settled), set("oon"), unregistered), mg312, mg313), 3, 1, replicas(3, 3))
	if got := PlanRollout(in); got.Partitions.DataInstances != 0 || got.Reason != v1alpha1.ReasonRolloutInProgress {
		t.Errorf("with an unregistered retiring pod between: partition %d, Updated %s %q; want mg-data-0 released",
			got.Partitions.DataInstances, got.Reason, got.Message)
	}
	// The same scale-down whose retiring pod is not updated yet holds everything: releasing
	// mg-data-0 would release the retiring pod above it too.
	in = declaring(versioned(rolloutIn(set("nnn", settled), set("oo"), view), mg312, mg313), 3, 1, replicas(3, 2))
	if got := PlanRollout(in); got.Partitions.DataInstances != 2 {
		t.Errorf("partition %d with an old retiring pod above, want 2 (held)", got.Partitions.DataInstances)
	}
}

// The rollout through such a scale-down releases one survivor at a time, and the released one
// stays released while it is gone or not Ready yet: a partition back at the returned count would
// have the StatefulSet controller recreate it at the old revision, to be released again, forever.
func TestASurvivorReleasedThroughAScaleDownStaysReleased(t *testing.T) {
	view := clusterView(3, 1, 3, 2, func(o *Observed) {
		o.Replicas = showing(2, o.Lag, map[string]string{"instance_0": memgraph.ReplicaInvalid, "instance_1": memgraph.ReplicaInvalid})
	})
	for _, tc := range []struct {
		name, pods, waiting string
	}{
		{"the released pod is gone", "o-n", "mg-data-1 (instance_1) to be created"},
		{"the released pod is back, not Ready yet", "oyn", "mg-data-1 (instance_1) to be Ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := declaring(versioned(rolloutIn(set("nnn", settled), set(tc.pods), view), mg312, mg313), 3, 2, replicas(3, 3))
			got := PlanRollout(in)
			if got.Partitions.DataInstances != 1 || got.Reason != v1alpha1.ReasonRolloutInProgress || !strings.Contains(got.Message, tc.waiting) {
				t.Errorf("partition %d, Updated %s %q; want mg-data-1 kept released (partition 1), waiting for %s",
					got.Partitions.DataInstances, got.Reason, got.Message, tc.waiting)
			}
		})
	}
}

// A pod-template change that supersedes an upgrade after its last handover (the old MAIN's pod
// was still to be replaced) leaves MAIN on a newer pod above an older replica, which cannot
// replicate from it: the partition cannot reach the replica before the MAIN's pod, and no
// survivor can be proven caught up. The rollout stops for a human and says why; reverting the
// last change lets the rollout upgrade the replica.
func TestAChangeSupersedingAnUpgradeHalfwayBlocksForAHuman(t *testing.T) {
	view := clusterView(3, 1, 2, 1, behindBy(0, 4))
	in := rolloutIn(set("nnn", settled), set("oo"), view)
	in.Data.Pods[0].Image, in.Data.Pods[1].Image, in.Image = mg312, mg313, mg313
	got := PlanRollout(in)
	want := "cannot replace mg-data-1 (instance_1): it is MAIN and no declared survivor is up and caught up: instance_0 is 4 " +
		"transactions behind on database memgraph; it runs Memgraph 3.12.0, older than MAIN instance_1's 3.13.0, and cannot " +
		"replicate from it until its pod is upgraded; 3 of 5 pods updated"
	if got.Reason != v1alpha1.ReasonRolloutBlocked || got.Message != want || got.Handover != nil || got.Partitions.DataInstances != 2 {
		t.Errorf("Updated %s %q, handover %v, partition %d;\nwant RolloutBlocked %q, nothing moved or released", got.Reason,
			got.Message, got.Handover, got.Partitions.DataInstances, want)
	}
}

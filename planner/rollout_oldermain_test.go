package planner

import (
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

func releasingOlder(pods, main string) string {
	return "upgrade to Memgraph 3.13.0, MAIN's pod last: step 3 of 3 (hand MAIN to an updated replica, replace the old MAIN's pod); " +
		"replacing " + pods + " at once: MAIN " + main + " runs Memgraph 3.13.0, which cannot replicate to their older version; "
}

// TestChaosSeed7OlderPodsOfAFailedOverMainRollAtOnce: mid-upgrade, the old MAIN's pod died and
// the coordinators failed over to an updated replica; the StatefulSet controller recreated the old
// MAIN's pod at the old revision. Every data pod older than the new MAIN is released at once,
// Ready or not and whatever the gates say: none can replicate from it, and one left at the old
// revision comes back older again whenever it dies.
func TestChaosSeed7OlderPodsOfAFailedOverMainRollAtOnce(t *testing.T) {
	up := func(coordinators, data RolloutSet, o *Observed) RolloutInput {
		return versioned(rolloutIn(coordinators, data, o), mg312, mg313)
	}
	runRolloutCases(t, []rolloutCase{{
		name:       "MAIN failed over to the updated mg-data-3: the three older pods go together",
		in:         up(set("ooo"), set("ooon"), clusterView(3, 1, 4, 3)),
		partitions: partitions(3, 0),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    releasingOlder("mg-data-2, mg-data-1, mg-data-0", "instance_3") + "1 of 7 pods updated",
		needsLag:   true,
	}, {
		name:       "the old MAIN's recreated pod is not Ready yet and a replica is down: released all the same",
		in:         up(set("ooo"), set("xonn"), clusterView(3, 1, 4, 2, rowHealth("instance_1", memgraph.HealthDown))),
		partitions: partitions(3, 0),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    releasingOlder("mg-data-1, mg-data-0", "instance_2") + "2 of 7 pods updated",
		needsLag:   true,
	}, {
		name:       "MAIN on the pod replaced last, at the old version: the replicas roll one at a time",
		in:         up(set("ooo"), set("oon"), clusterView(3, 1, 3, 0)),
		partitions: partitions(3, 1),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message: "upgrade to Memgraph 3.13.0, MAIN's pod last: step 2 of 3 (replace the replicas' pods); " +
			"replacing mg-data-1 (instance_1); next: switchover instance_0 → instance_1, then replace mg-data-0; 1 of 6 pods updated",
		needsLag: true,
	}})
}

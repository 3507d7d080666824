package planner

import (
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// clusterTLS makes in's spec ask for intra-cluster TLS (or not) while its pods at the old
// revision run with it as running says and those at the new revision as the spec asks.
func clusterTLS(in RolloutInput, running, asked bool) RolloutInput {
	for _, s := range []*RolloutSet{&in.Coordinators, &in.Data} {
		pods := append([]RolloutPod(nil), s.Pods...)
		for i := range pods {
			pods[i].ClusterTLS = running
			if pods[i].Revision == revNew {
				pods[i].ClusterTLS = asked
			}
		}
		s.Pods = pods
	}
	in.ClusterTLS = asked
	return in
}

// Intra-cluster TLS is mutual on replication, management and Raft: an instance with it and one
// without cannot talk, so turning it on or off never rolls one pod at a time; it waits for
// hibernation, every pod held.
func TestIntraClusterTLSChangesAreNotRolled(t *testing.T) {
	const (
		on  = "not rolled: pods run without intra-cluster TLS and the spec turns it on (spec.tls.intraCluster); an instance with it and one without cannot talk, so it takes effect only through hibernation: set spec.hibernate: true, wait for phase Hibernated, then set it to false; or set spec.tls back to what the pods run"
		off = "not rolled: pods run with intra-cluster TLS and the spec turns it off (spec.tls.intraCluster); an instance with it and one without cannot talk, so it takes effect only through hibernation: set spec.hibernate: true, wait for phase Hibernated, then set it to false; or set spec.tls back to what the pods run"
	)
	runRolloutCases(t, []rolloutCase{{
		name:       "turned on while every pod runs without: every pod held",
		in:         clusterTLS(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)), false, true),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonIntraClusterTLSNeedsHibernation,
		message:    on + "; 0 of 6 pods updated",
	}, {
		name:       "turned off while every pod runs with it: every pod held",
		in:         clusterTLS(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)), true, false),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonIntraClusterTLSNeedsHibernation,
		message:    off + "; 0 of 6 pods updated",
	}, {
		name: "turned on while the cluster grows: the new pods start at the current revision, without it like their peers",
		in: declaring(clusterTLS(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)), false, true), 3, 5,
			replicas(3, 5)),
		partitions: partitions(3, 5),
		reason:     v1alpha1.ReasonIntraClusterTLSNeedsHibernation,
		message:    on + "; 0 of 8 pods updated",
	}, {
		name:       "another change with intra-cluster TLS on both sides rolls as usual",
		in:         clusterTLS(rolloutIn(set("ooo"), set("ooo"), clusterView(3, 1, 3, 0)), true, true),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2); next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}})
}

// A pod that is not Ready has not shown how it runs: a rollout stuck on a pod that never starts
// is not held by it.
func TestAPodNotReadyHoldsNoIntraClusterTLSChange(t *testing.T) {
	in := clusterTLS(rolloutIn(set("ooo", reverted), set("ooy", reverted), clusterView(3, 1, 3, 0)), true, true)
	in.Data.Pods[2].ClusterTLS = false
	got := PlanRollout(in)
	if got.Reason == v1alpha1.ReasonIntraClusterTLSNeedsHibernation {
		t.Errorf("Updated %s %q: a pod that is not Ready held the rollout", got.Reason, got.Message)
	}
}

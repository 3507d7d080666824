package planner

import (
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// clusterTLSRefused refuses to roll a pod template that turns intra-cluster TLS on or off while a
// Ready pod runs the other way. Memgraph 3.12's intra-cluster TLS is mutual on replication,
// management and Raft (src/communication/cluster_tls.cpp: the server requires a client
// certificate, the client verifies the server's), so an instance with it and one without cannot
// talk: one pod at a time would cut each replaced pod off the cluster. The change waits for
// hibernation, when no pod runs and all start together; meanwhile every pod is held, and one lost
// comes back at the current revision, the way its peers run.
func (p *rolloutPlan) clusterTLSRefused() *refusal {
	for _, pod := range p.servingPods() {
		if pod.ClusterTLS == p.in.ClusterTLS {
			continue
		}
		running, asked := "without", "turns it on"
		if pod.ClusterTLS {
			running, asked = "with", "turns it off"
		}
		return &refusal{v1alpha1.ReasonIntraClusterTLSNeedsHibernation, fmt.Sprintf(
			"not rolled: pods run %s intra-cluster TLS and the spec %s (spec.tls.intraCluster); an instance with it and one "+
				"without cannot talk, so it takes effect only through hibernation: set spec.hibernate: true, wait for phase "+
				"Hibernated, then set it to false; or set spec.tls back to what the pods run", running, asked)}
	}
	return nil
}

// WaitsForHibernation: the step holds every pod for a change that only hibernation can make
// (clusterTLSRefused). Hibernation does not wait for such a rollout, unlike any other: every pod
// is held at one revision, and on waking all start at the new one.
func (s RolloutStep) WaitsForHibernation() bool {
	return s.Reason == v1alpha1.ReasonIntraClusterTLSNeedsHibernation
}

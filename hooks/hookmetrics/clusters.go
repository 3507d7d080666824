package hookmetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// ClusterState is what a sync pass observed of one cluster, as the per-cluster gauges show it.
type ClusterState struct {
	planner.ClusterSummary
	// MaxReplicaLag is MaxReplicaLag of the pass's SHOW REPLICATION LAG; LagObserved is false
	// when the pass did not read it. The series then keeps the last value read, for at most
	// LagStale; after that it is left out rather than shown as a stale number or as 0.
	MaxReplicaLag int64
	LagObserved   bool
	// MemoryLimitBytes is the --memory-limit each role's Memgraph runs with, by role
	// (topology.Cluster.MemoryLimitBytes); a role without one known has no series.
	MemoryLimitBytes map[string]int64
}

const (
	// LagRefresh is how often a cluster's replication lag is read for its gauge (LagDue).
	LagRefresh = 30 * time.Second
	// LagStale is how long a lag value read stays in the series without a newer read.
	LagStale = 3 * LagRefresh
)

// seriesKey names a cluster's series.
type seriesKey struct{ namespace, name string }

// ClusterGauges are the per-cluster gauges, labelled {namespace, name} (and role, for the memory
// limit). The hook hears of no deletion (no finalize hook) and runs replicated, so a replica may
// never see the last sync of a cluster that is gone: a cluster's series expire ttl after the last
// sync this process served for it, checked whenever the gauges are collected or set. Forget
// removes them at once (clusterSeries).
type ClusterGauges struct {
	clusterSeries
	lastLag map[seriesKey]time.Time // when each cluster's lag was last read

	mainPresent, leaderPresent, membersUp, membersDeclared, maxReplicaLag, rolloutStep, singleNodeRisk *prometheus.GaugeVec
	// memoryLimit is labelled {namespace, name, role}.
	memoryLimit *prometheus.GaugeVec
}

func newClusterGauges(now func() time.Time, ttl time.Duration) *ClusterGauges {
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"namespace", "name"})
	}
	g := &ClusterGauges{
		clusterSeries: clusterSeries{now: now, ttl: ttl, lastSync: map[seriesKey]time.Time{}},
		lastLag:       map[seriesKey]time.Time{},
		mainPresent: gauge("memgraph_hooks_cluster_main_present",
			"1 when the leader's SHOW INSTANCES names a MAIN that is up, else 0; as of the last sync this hook served for the cluster."),
		leaderPresent: gauge("memgraph_hooks_cluster_leader_present",
			"1 when a ready Raft leader answered SHOW INSTANCES, else 0; as of the last sync this hook served for the cluster."),
		membersUp: gauge("memgraph_hooks_cluster_members_up",
			"Declared coordinators and data instances that are up (pod Ready, health up in SHOW INSTANCES)."),
		membersDeclared: gauge("memgraph_hooks_cluster_members_declared",
			"Coordinators and data instances the MemgraphCluster declares."),
		maxReplicaLag: gauge("memgraph_hooks_cluster_max_replica_lag",
			"Transactions the replica furthest behind the MAIN lacks, on any database (SHOW REPLICATION LAG on the leader, read at most every 30 s); absent when no read succeeded for 90 s."),
		rolloutStep: gauge("memgraph_hooks_cluster_rollout_step",
			"The pod a rollout in progress replaces, counted from 1 (pods updated + 1); 0 when no rollout is in progress."),
		singleNodeRisk: gauge("memgraph_hooks_cluster_single_node_risk",
			"1 when one node's loss would take the cluster down (it holds at least half the coordinators, or the MAIN with every Sync and StrictSync replica: HighlyAvailable False, SingleNodeRisk), else 0."),
		memoryLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "memgraph_hooks_cluster_memory_limit_bytes",
			Help: "The --memory-limit, in bytes, the role's Memgraph runs with once its pods run the current template: the hook's share of the container's memory limit, or the one extraArgs pass; absent when there is none."},
			[]string{"namespace", "name", "role"}),
	}
	g.gauges = g.vecs()
	g.forget = func(key seriesKey) { delete(g.lastLag, key) }
	return g
}

func (g *ClusterGauges) vecs() []*prometheus.GaugeVec {
	return []*prometheus.GaugeVec{g.mainPresent, g.leaderPresent, g.membersUp, g.membersDeclared, g.maxReplicaLag, g.rolloutStep,
		g.singleNodeRisk, g.memoryLimit}
}

// Set records a sync's observation of the cluster and expires the clusters not synced for ttl.
func (g *ClusterGauges) Set(namespace, name string, s ClusterState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.expire(now)
	g.lastSync[seriesKey{namespace, name}] = now
	g.mainPresent.WithLabelValues(namespace, name).Set(boolGauge(s.MainPresent))
	g.leaderPresent.WithLabelValues(namespace, name).Set(boolGauge(s.LeaderPresent))
	g.membersUp.WithLabelValues(namespace, name).Set(float64(s.MembersUp))
	g.membersDeclared.WithLabelValues(namespace, name).Set(float64(s.MembersDeclared))
	g.rolloutStep.WithLabelValues(namespace, name).Set(float64(s.RolloutStep))
	g.singleNodeRisk.WithLabelValues(namespace, name).Set(boolGauge(s.SingleNodeRisk))
	for _, role := range []string{topology.RoleCoordinator, topology.RoleData} {
		if bytes, ok := s.MemoryLimitBytes[role]; ok {
			g.memoryLimit.WithLabelValues(namespace, name, role).Set(float64(bytes))
		} else {
			g.memoryLimit.DeleteLabelValues(namespace, name, role)
		}
	}
	key := seriesKey{namespace, name}
	switch read, ok := g.lastLag[key]; {
	case s.LagObserved:
		g.lastLag[key] = now
		g.maxReplicaLag.WithLabelValues(namespace, name).Set(float64(s.MaxReplicaLag))
	case ok && now.Sub(read) > LagStale:
		delete(g.lastLag, key)
		g.maxReplicaLag.DeleteLabelValues(namespace, name)
	}
}

// LagDue reports whether the cluster's lag was not read for LagRefresh: the next pass reads it.
func (g *ClusterGauges) LagDue(namespace, name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	read, ok := g.lastLag[seriesKey{namespace, name}]
	return !ok || g.now().Sub(read) >= LagRefresh
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// MaxReplicaLag is the most transactions any replica lacks on any database; 0 without rows.
func MaxReplicaLag(lag []memgraph.InstanceLag) int64 {
	var most int64
	for _, l := range lag {
		for _, db := range l.Databases {
			most = max(most, db.TxnsBehindMain)
		}
	}
	return most
}

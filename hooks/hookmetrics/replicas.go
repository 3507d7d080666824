package hookmetrics

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// ReplicaRefresh is how often a cluster's MAIN is asked SHOW REPLICAS for the replicas' health
// (ReplicaReadDue): the same period as the lag gauge's read (LagRefresh).
const ReplicaRefresh = LagRefresh

// ReplicaStates are the data_info statuses Memgraph 3.12 reports, one series each per replica.
var ReplicaStates = []string{memgraph.ReplicaReady, memgraph.ReplicaReplicating, memgraph.ReplicaRecovery,
	memgraph.ReplicaInvalid, memgraph.ReplicaDiverged}

// ReplicaGauges are the per-replica gauges, labelled {namespace, name, instance} (and state, or
// reason), set on every sync from the records its status reports (status.replicas, carried
// forward between reads), and when this process last asked each cluster's MAIN for SHOW
// REPLICAS. Like ClusterGauges, a cluster's series expire ttl after the last sync this process
// served for it.
type ReplicaGauges struct {
	clusterSeries
	lastRead map[seriesKey]time.Time
	listed   map[seriesKey][]string // the instances each cluster has series for

	state, degraded *prometheus.GaugeVec
}

func newReplicaGauges(now func() time.Time, ttl time.Duration) *ReplicaGauges {
	g := &ReplicaGauges{
		clusterSeries: clusterSeries{now: now, ttl: ttl, lastSync: map[seriesKey]time.Time{}},
		lastRead:      map[seriesKey]time.Time{}, listed: map[seriesKey][]string{},
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "memgraph_hooks_replica_state",
			Help: "1 for the state the MAIN's SHOW REPLICAS reports for the replica (its worst database's data_info status: ready, replicating, recovery, invalid or diverged), 0 for the others; read at most every 30 s. Present for the replicas the MAIN lists."},
			[]string{"namespace", "name", "instance", "state"}),
		degraded: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "memgraph_hooks_replica_degraded",
			Help: "1 while the Degraded condition reports the replica: reason ReplicaDiverged (diverged), or ReplicaStuck (recovery or invalid for spec.replicaHealth.stuckAfter or longer while up); absent otherwise."},
			[]string{"namespace", "name", "instance", "reason"}),
	}
	g.gauges = g.vecs()
	g.forget = func(key seriesKey) {
		delete(g.lastRead, key)
		delete(g.listed, key)
	}
	return g
}

func (g *ReplicaGauges) vecs() []*prometheus.GaugeVec {
	return []*prometheus.GaugeVec{g.state, g.degraded}
}

// Set records a sync's replica records and the problems Degraded reports among them, and
// expires the clusters not synced for ttl.
func (g *ReplicaGauges) Set(namespace, name string, records []v1alpha1.ReplicaStatus, problems []planner.ReplicaProblem) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.expire(now)
	key := seriesKey{namespace, name}
	g.lastSync[key] = now
	listed := make([]string, 0, len(records))
	for _, r := range records {
		listed = append(listed, r.Name)
		for _, s := range ReplicaStates {
			g.state.WithLabelValues(namespace, name, r.Name, s).Set(boolGauge(r.State == s))
		}
	}
	reported := map[[2]string]bool{}
	for _, p := range problems {
		reported[[2]string{p.Record.Name, string(p.Reason)}] = true
		g.degraded.WithLabelValues(namespace, name, p.Record.Name, string(p.Reason)).Set(1)
	}
	// Series that no longer hold are deleted; the others were overwritten in place, so a scrape
	// meanwhile never misses one (an alert's for: would start over).
	for _, instance := range g.listed[key] {
		if !slices.Contains(listed, instance) {
			g.state.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "name": name, "instance": instance})
		}
		for _, reason := range []v1alpha1.ConditionReason{v1alpha1.ReasonReplicaDiverged, v1alpha1.ReasonReplicaStuck} {
			if !reported[[2]string{instance, string(reason)}] {
				g.degraded.DeleteLabelValues(namespace, name, instance, string(reason))
			}
		}
	}
	g.listed[key] = listed
}

// ReplicaReadDue reports whether this process has not asked the cluster's MAIN for SHOW REPLICAS
// for ReplicaRefresh: the pass reads it.
func (g *ReplicaGauges) ReplicaReadDue(namespace, name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	read, ok := g.lastRead[seriesKey{namespace, name}]
	return !ok || g.now().Sub(read) >= ReplicaRefresh
}

// ReplicasRead records that a pass read the cluster's SHOW REPLICAS now.
func (g *ReplicaGauges) ReplicasRead(namespace, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lastRead[seriesKey{namespace, name}] = g.now()
}

// Package hookmetrics is the hook's Prometheus metrics: their names, help and labels, and the
// per-cluster gauges whose series expire when no sync of their cluster was served for a while.
package hookmetrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// Metrics are the hook's metrics, registered once per registry (the hooks and the metrics
// listener count into the same series).
type Metrics struct {
	Requests     *prometheus.CounterVec   // by hook and HTTP status
	SyncDuration *prometheus.HistogramVec // by the Converged reason
	Commands     *prometheus.CounterVec   // by command kind and result
	AuthFailures *prometheus.CounterVec   // by refusal reason
	Clusters     *ClusterGauges
	Backups      *BackupMetrics
	Replicas     *ReplicaGauges
}

// clusterSeriesTTL is how long a cluster's gauges outlive the last sync this process served for
// it: three of the longest resync a live cluster asks for (planner.ResyncConverged). Metacontroller
// syncs every cluster at least that often, to one replica of the hook or another, so the
// replica that served the latest sync always holds fresh series.
const clusterSeriesTTL = 3 * planner.ResyncConverged * time.Second

// New registers the metrics with reg; inFlight counts the clusters with a sync running or
// waiting, now is the clock the cluster series expire by.
func New(reg prometheus.Registerer, inFlight func() int, now func() time.Time) *Metrics {
	m := &Metrics{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memgraph_hooks_requests_total",
			Help: "Hook requests by hook and HTTP status.",
		}, []string{"hook", "status"}),
		SyncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "memgraph_hooks_sync_duration_seconds",
			Help:    "Duration of sync passes by the resulting Converged reason.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"reason"}),
		Commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memgraph_hooks_commands_total",
			Help: "Coordinator commands executed by query kind and result.",
		}, []string{"command", "result"}),
		AuthFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memgraph_hooks_auth_failures_total",
			Help: "Requests refused with 401 by reason: no_client_certificate, missing_token, malformed_authorization, invalid_token.",
		}, []string{"reason"}),
	}
	m.Requests = register(reg, m.Requests)
	m.SyncDuration = register(reg, m.SyncDuration)
	m.Commands = register(reg, m.Commands)
	m.AuthFailures = register(reg, m.AuthFailures)
	m.Clusters = register(reg, newClusterGauges(now, clusterSeriesTTL))
	m.Backups = register(reg, newBackupMetrics(now, backupSeriesTTL))
	m.Replicas = register(reg, newReplicaGauges(now, clusterSeriesTTL))
	register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "memgraph_hooks_clusters_in_flight",
		Help: "Clusters with a sync pass running or waiting in this process; the per-cluster lock map holds exactly these, so it is 0 when idle.",
	}, func() float64 { return float64(inFlight()) }))
	return m
}

// register registers c, or returns the collector of the same description already registered:
// the hooks and the metrics listener (MetricsHandler) count into the same series.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
		return c
	case errors.As(err, &already):
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(err)
}

package hooks

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

type metrics struct {
	requests     *prometheus.CounterVec
	syncDuration *prometheus.HistogramVec
	commands     *prometheus.CounterVec
	authFailures *prometheus.CounterVec
	clusters     *clusterGauges
}

// clusterSeriesTTL is how long a cluster's gauges outlive the last sync this process served for
// it: three of the longest resync a live cluster asks for (planner.ResyncConverged). Metacontroller
// syncs every cluster at least that often, to one replica of the hook or another, so the
// replica that served the latest sync always holds fresh series.
const clusterSeriesTTL = 3 * planner.ResyncConverged * time.Second

func newMetrics(reg prometheus.Registerer, locks *clusterLocks, now func() time.Time) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memgraph_hooks_requests_total",
			Help: "Hook requests by hook and HTTP status.",
		}, []string{"hook", "status"}),
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "memgraph_hooks_sync_duration_seconds",
			Help:    "Duration of sync passes by the resulting Converged reason.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"reason"}),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memgraph_hooks_commands_total",
			Help: "Coordinator commands executed by query kind and result.",
		}, []string{"command", "result"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memgraph_hooks_auth_failures_total",
			Help: "Requests refused with 401 by reason: no_client_certificate, missing_token, malformed_authorization, invalid_token.",
		}, []string{"reason"}),
	}
	m.requests = register(reg, m.requests)
	m.syncDuration = register(reg, m.syncDuration)
	m.commands = register(reg, m.commands)
	m.authFailures = register(reg, m.authFailures)
	m.clusters = register(reg, newClusterGauges(now, clusterSeriesTTL))
	register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "memgraph_hooks_clusters_in_flight",
		Help: "Clusters with a sync pass running or waiting in this process; the per-cluster lock map holds exactly these, so it is 0 when idle.",
	}, func() float64 { return float64(locks.size()) }))
	return m
}

// countCommand counts one command's result by its kind.
func (h *handler) countCommand(kind planner.CommandKind, result string) {
	h.metrics.commands.WithLabelValues(string(kind), result).Inc()
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

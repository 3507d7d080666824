package hookmetrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// clusterSeries is what ClusterGauges and ReplicaGauges share: when this process last synced
// each cluster, and the deletion of a cluster's series — every gauge's, and the owner's own
// records of it (forget) — once the cluster was not synced for ttl, or at once by Forget. Its
// Describe and Collect make the owner a prometheus.Collector that expires before it collects, so
// a scrape never shows a cluster not synced for ttl.
type clusterSeries struct {
	mu       sync.Mutex
	now      func() time.Time
	ttl      time.Duration
	lastSync map[seriesKey]time.Time
	gauges   []*prometheus.GaugeVec
	forget   func(seriesKey) // deletes the owner's records of a cluster; called under mu
}

// Forget removes the cluster's series: it is gone (a finalizing sync, a deleted parent).
func (s *clusterSeries) Forget(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delete(seriesKey{namespace, name})
}

// expire deletes the series of the clusters last synced more than ttl before now.
func (s *clusterSeries) expire(now time.Time) {
	for key, last := range s.lastSync {
		if now.Sub(last) > s.ttl {
			s.delete(key)
		}
	}
}

func (s *clusterSeries) delete(key seriesKey) {
	delete(s.lastSync, key)
	s.forget(key)
	for _, v := range s.gauges {
		v.DeletePartialMatch(prometheus.Labels{"namespace": key.namespace, "name": key.name})
	}
}

func (s *clusterSeries) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range s.gauges {
		v.Describe(ch)
	}
}

func (s *clusterSeries) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	s.expire(s.now())
	s.mu.Unlock()
	for _, v := range s.gauges {
		v.Collect(ch)
	}
}

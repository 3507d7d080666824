package hookmetrics

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// backupSeriesTTL is how long a backup gauge outlives the last hook call that set it: three
// resync periods of a MemgraphScheduledBackup (manifests/backup-controllers.yaml, 300 s), the
// longest of the backup parents. Metacontroller calls every parent at least that often, to one
// replica of the hook or another; a series of a schedule or cluster that is gone expires.
const backupSeriesTTL = 3 * 300 * time.Second

// BackupMetrics are the backup metrics. A replica of the hook counts the backups whose end it
// saw and sets each gauge from what its calls observe; the alert takes the newest across
// replicas (max), and a gauge no call refreshed for backupSeriesTTL is dropped.
type BackupMetrics struct {
	// Ended is memgraph_hooks_backups_total{namespace,cluster,result}: result completed or
	// failed.
	Ended *prometheus.CounterVec

	mu  sync.Mutex
	now func() time.Time
	ttl time.Duration
	// set is when each series was last set, by its gauge and labels; success the value of each
	// lastSuccess series.
	set                              map[backupSeries]time.Time
	success                          map[string]time.Time
	lastSuccess, interval, createdAt *prometheus.GaugeVec
}

type backupSeries struct {
	gauge  *prometheus.GaugeVec
	labels string // the label values, joined by "/"
}

func newBackupMetrics(now func() time.Time, ttl time.Duration) *BackupMetrics {
	return &BackupMetrics{
		Ended: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memgraph_hooks_backups_total",
			Help: "MemgraphBackups that ended, by namespace, cluster and result (completed or failed), counted by the hook replica that saw each end."},
			[]string{"namespace", "cluster", "result"}),
		now: now, ttl: ttl, set: map[backupSeries]time.Time{}, success: map[string]time.Time{},
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "memgraph_hooks_backup_last_success_timestamp_seconds",
			Help: "When the newest MemgraphBackup of the cluster that completed completed (Unix seconds), as the hook's calls for the cluster's backups and schedules observed it."},
			[]string{"namespace", "cluster"}),
		interval: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "memgraph_hooks_scheduled_backup_interval_seconds",
			Help: "The longest time between two consecutive scheduled times of a MemgraphScheduledBackup that is not suspended (its next 64 runs)."},
			[]string{"namespace", "cluster", "schedule"}),
		createdAt: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "memgraph_hooks_scheduled_backup_created_timestamp_seconds",
			Help: "When a MemgraphScheduledBackup that is not suspended was created (Unix seconds): the alert's start for a schedule without a success."},
			[]string{"namespace", "cluster", "schedule"}),
	}
}

// BackupEnded counts a backup that completed or failed.
func (m *BackupMetrics) BackupEnded(namespace, cluster string, phase v1alpha1.BackupPhase) {
	m.Ended.WithLabelValues(namespace, cluster, strings.ToLower(string(phase))).Inc()
}

// BackupSucceeded records a success of the cluster at at: the gauge keeps the newest.
func (m *BackupMetrics) BackupSucceeded(namespace, cluster string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire()
	key := backupSeries{m.lastSuccess, namespace + "/" + cluster}
	if at.After(m.success[key.labels]) {
		m.success[key.labels] = at
		m.lastSuccess.WithLabelValues(namespace, cluster).Set(float64(at.Unix()))
	}
	m.set[key] = m.now()
}

// ScheduleObserved records a schedule's interval and creation.
func (m *BackupMetrics) ScheduleObserved(namespace, cluster, schedule string, interval time.Duration, created time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire()
	labels := namespace + "/" + cluster + "/" + schedule
	m.interval.WithLabelValues(namespace, cluster, schedule).Set(interval.Seconds())
	m.createdAt.WithLabelValues(namespace, cluster, schedule).Set(float64(created.Unix()))
	m.set[backupSeries{m.interval, labels}] = m.now()
	m.set[backupSeries{m.createdAt, labels}] = m.now()
}

// ScheduleGone drops a schedule's series: it is suspended, invalid or deleted.
func (m *BackupMetrics) ScheduleGone(namespace, schedule string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key := range m.set {
		if key.gauge != m.lastSuccess && strings.HasPrefix(key.labels, namespace+"/") && strings.HasSuffix(key.labels, "/"+schedule) {
			delete(m.set, key)
		}
	}
	for _, g := range []*prometheus.GaugeVec{m.interval, m.createdAt} {
		g.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "schedule": schedule})
	}
}

// expire drops the series not set for ttl. Caller holds m.mu.
func (m *BackupMetrics) expire() {
	now := m.now()
	for key, at := range m.set {
		if now.Sub(at) > m.ttl {
			delete(m.set, key)
			if key.gauge == m.lastSuccess {
				delete(m.success, key.labels)
			}
			key.gauge.DeleteLabelValues(strings.Split(key.labels, "/")...)
		}
	}
}

func (m *BackupMetrics) vecs() []prometheus.Collector {
	return []prometheus.Collector{m.Ended, m.lastSuccess, m.interval, m.createdAt}
}

// Describe and Collect make BackupMetrics one prometheus.Collector; Collect expires first.
func (m *BackupMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range m.vecs() {
		v.Describe(ch)
	}
}

func (m *BackupMetrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	m.expire()
	m.mu.Unlock()
	for _, v := range m.vecs() {
		v.Collect(ch)
	}
}

package hookmetrics

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// backupScrape is every backup series reg exposes, as `name{label=value,…} value` lines, sorted.
func backupScrape(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			labels := ""
			for _, l := range m.GetLabel() {
				labels += l.GetName() + "=" + l.GetValue() + ","
			}
			value := m.GetGauge().GetValue()
			if m.GetCounter() != nil {
				value = m.GetCounter().GetValue()
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %g", mf.GetName(), labels, value))
		}
	}
	slices.Sort(lines)
	return lines
}

// A backup that ends is counted by result; the last success keeps the newest time it is told,
// whatever order the calls come in; a schedule's series go when it is gone, and every gauge
// expires when no call set it for the TTL (its schedule or cluster was deleted).
func TestBackupMetrics(t *testing.T) {
	clock := newFakeClock()
	m := newBackupMetrics(clock.now, backupSeriesTTL)
	reg := prometheus.NewRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 4, 3, 0, 0, 0, time.UTC)
	m.BackupEnded("db", "mg", v1alpha1.BackupCompleted)
	m.BackupEnded("db", "mg", v1alpha1.BackupFailed)
	m.BackupEnded("db", "mg", v1alpha1.BackupCompleted)
	m.BackupSucceeded("db", "mg", at)
	m.BackupSucceeded("db", "mg", at.Add(-time.Hour)) // an older one, seen later by another call
	m.ScheduleObserved("db", "mg", "nightly", 24*time.Hour, at.Add(-48*time.Hour))
	want := []string{
		fmt.Sprintf("memgraph_hooks_backup_last_success_timestamp_seconds{cluster=mg,namespace=db,} %g", float64(at.Unix())),
		"memgraph_hooks_backups_total{cluster=mg,namespace=db,result=completed,} 2",
		"memgraph_hooks_backups_total{cluster=mg,namespace=db,result=failed,} 1",
		fmt.Sprintf("memgraph_hooks_scheduled_backup_created_timestamp_seconds{cluster=mg,namespace=db,schedule=nightly,} %g", float64(at.Add(-48*time.Hour).Unix())),
		"memgraph_hooks_scheduled_backup_interval_seconds{cluster=mg,namespace=db,schedule=nightly,} 86400",
	}
	if diff := cmp.Diff(want, backupScrape(t, reg)); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
	m.ScheduleGone("db", "nightly")
	if diff := cmp.Diff(want[:3], backupScrape(t, reg)); diff != "" {
		t.Errorf("after the schedule is gone (-want +got):\n%s", diff)
	}
	clock.advance(backupSeriesTTL + time.Second)
	if diff := cmp.Diff(want[1:3], backupScrape(t, reg)); diff != "" {
		t.Errorf("after the TTL the gauges expire, the counter stays (-want +got):\n%s", diff)
	}
	m.BackupSucceeded("db", "mg", at.Add(-time.Hour))
	if got := backupScrape(t, reg)[0]; got != fmt.Sprintf("memgraph_hooks_backup_last_success_timestamp_seconds{cluster=mg,namespace=db,} %g", float64(at.Add(-time.Hour).Unix())) {
		t.Errorf("an expired series set again: %s", got)
	}
}

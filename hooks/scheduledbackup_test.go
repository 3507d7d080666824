package hooks_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
)

// scheduleRig plays Metacontroller for one MemgraphScheduledBackup on a clock the test moves:
// the children the hook returns are created (and those left out deleted), and each child's
// phase is what the test says its own hook made of it.
type scheduleRig struct {
	t        *testing.T
	now      time.Time
	handler  http.Handler
	parent   map[string]any
	children map[string]map[string]any // name → child as created, with its status
}

func newScheduleRig(t *testing.T, schedule string, keep int) *scheduleRig {
	r := &scheduleRig{t: t, now: time.Date(2026, 12, 6, 0, 30, 0, 0, time.UTC), children: map[string]map[string]any{}}
	r.handler = hooks.NewHandler(hooks.Config{Now: func() time.Time { return r.now }})
	template := (&backupRig{}).mgb("x", v1alpha1.BackupDelete)["spec"].(map[string]any)
	r.parent = map[string]any{
		"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphScheduledBackup",
		"metadata": map[string]any{"name": "nightly", "namespace": "default", "uid": "uid-s", "generation": 1,
			"creationTimestamp": r.now.Format(time.RFC3339)},
		"spec": map[string]any{"schedule": schedule, "keep": keep, "backupTemplate": template},
	}
	return r
}

type scheduleAnswer struct {
	Status             v1alpha1.MemgraphScheduledBackupStatus `json:"status"`
	Children           []map[string]any                       `json:"children"`
	ResyncAfterSeconds float64                                `json:"resyncAfterSeconds"`
	Finalized          bool                                   `json:"finalized"`
}

// sync calls the hook at the rig's time and applies its answer.
func (r *scheduleRig) sync() scheduleAnswer { return r.call(false) }

// finalize calls the finalize hook at the rig's time and applies its answer.
func (r *scheduleRig) finalize() scheduleAnswer { return r.call(true) }

func (r *scheduleRig) call(finalizing bool) scheduleAnswer {
	r.t.Helper()
	observed := map[string]any{}
	for name, c := range r.children {
		observed["default/"+name] = c
	}
	req := map[string]any{"parent": r.parent, "children": map[string]any{"MemgraphBackup.memgraph.com/v1alpha1": observed}, "related": map[string]any{},
		"finalizing": finalizing}
	raw, _ := json.Marshal(req)
	code, body := postRaw(r.handler, "/scheduledbackup/sync", raw)
	if code != http.StatusOK {
		r.t.Fatalf("POST /scheduledbackup/sync: %d %s", code, body)
	}
	var a scheduleAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		r.t.Fatal(err)
	}
	desired := map[string]map[string]any{}
	for _, c := range a.Children {
		name := c["metadata"].(map[string]any)["name"].(string)
		if old, ok := r.children[name]; ok {
			c = old
		}
		desired[name] = c
	}
	r.children = desired
	st, _ := json.Marshal(a.Status)
	var status map[string]any
	_ = json.Unmarshal(st, &status)
	r.parent["status"] = status
	return a
}

func (r *scheduleRig) setPhase(phase v1alpha1.BackupPhase) {
	for _, c := range r.children {
		if c["status"] == nil {
			c["status"] = map[string]any{"phase": string(phase)}
		}
	}
}

func (r *scheduleRig) names() []string {
	var out []string
	for n := range r.children {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Four runs of a schedule that keeps 2 leave the two newest backups: each run is created once,
// when due, and an older completed one is dropped as a newer one completes.
func TestScheduledBackupKeepsTheNewest(t *testing.T) {
	r := newScheduleRig(t, "0 * * * *", 2)
	if a := r.sync(); len(a.Children) != 0 || a.ResyncAfterSeconds != 30*60 {
		t.Fatalf("before the first run: %d children, resync %v s; want none and 1800 s", len(a.Children), a.ResyncAfterSeconds)
	}
	for hour := 1; hour <= 4; hour++ {
		r.now = time.Date(2026, 12, 6, hour, 0, 5, 0, time.UTC)
		r.sync()
		if again := r.sync(); len(again.Children) != len(r.children) {
			t.Fatalf("a second call at the same time changed the children")
		}
		r.setPhase(v1alpha1.BackupCompleted)
		r.sync()
	}
	want := []string{"nightly-1796526000", "nightly-1796529600"} // 03:00 and 04:00 in Unix seconds
	if diff := cmp.Diff(want, r.names()); diff != "" {
		t.Errorf("children after four runs (-want +got):\n%s", diff)
	}
	st := r.sync().Status
	if st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)) ||
		st.NextScheduleTime == nil || !st.NextScheduleTime.Time.Equal(time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)) {
		t.Errorf("last %v, next %v; want 04:00 and 05:00", st.LastScheduleTime, st.NextScheduleTime)
	}
	if len(st.Backups) != 2 || st.Backups[0].Name != want[1] {
		t.Errorf("status.backups %+v, want the two kept, newest first", st.Backups)
	}
}

// A schedule that does not parse creates nothing and says why in its Scheduled condition.
func TestScheduledBackupRefusesAnInvalidSchedule(t *testing.T) {
	r := newScheduleRig(t, "0 25 * * *", 2)
	r.now = r.now.Add(48 * time.Hour)
	a := r.sync()
	if c := meta.FindStatusCondition(a.Status.Conditions, "Scheduled"); len(a.Children) != 0 || c == nil || c.Reason != "InvalidSchedule" || c.Status != "False" {
		t.Errorf("answer %+v, want no child and Scheduled=False InvalidSchedule", a)
	}
}

// setPhaseOf records what a child's own hook made of it.
func (r *scheduleRig) setPhaseOf(name string, phase v1alpha1.BackupPhase, reason, msg string, completed time.Time) {
	st := map[string]any{"phase": string(phase), "reason": reason, "error": msg}
	if !completed.IsZero() {
		st["completedAt"] = completed.UTC().Format(time.RFC3339)
	}
	r.children[name]["status"] = st
}

// The schedule's status says when its newest backup completed (kept once that MemgraphBackup is
// deleted by hand) and, in LastBackupSucceeded, whether its newest backup that ended completed,
// naming the one that failed and why.
func TestScheduledBackupReportsItsLastSuccess(t *testing.T) {
	r := newScheduleRig(t, "0 * * * *", 5)
	r.now = time.Date(2026, 12, 6, 1, 0, 5, 0, time.UTC)
	r.sync()
	first := r.names()[0]
	r.setPhaseOf(first, v1alpha1.BackupCompleted, "Completed", "", r.now.Add(time.Minute))
	st := r.sync().Status
	if st.LastSuccessfulBackup == nil || st.LastSuccessfulBackup.Name != first || !st.LastSuccessfulBackup.Time.Time.Equal(r.now.Add(time.Minute)) {
		t.Errorf("lastSuccessfulBackup %+v, want %s", st.LastSuccessfulBackup, first)
	}
	if c := meta.FindStatusCondition(st.Conditions, "LastBackupSucceeded"); c == nil || c.Status != "True" {
		t.Errorf("LastBackupSucceeded %+v, want True", c)
	}
	r.now = time.Date(2026, 12, 6, 2, 0, 5, 0, time.UTC)
	r.sync()
	var second string
	for _, n := range r.names() {
		if n != first {
			second = n
		}
	}
	r.setPhaseOf(second, v1alpha1.BackupFailed, "DeadlineExceeded", "the backup did not start within its timeout of 6h", r.now.Add(6*time.Hour))
	delete(r.children, first) // deleted by hand
	st = r.sync().Status
	c := meta.FindStatusCondition(st.Conditions, "LastBackupSucceeded")
	if c == nil || c.Status != "False" || c.Reason != "DeadlineExceeded" || !strings.Contains(c.Message, second+" failed: the backup did not start") {
		t.Errorf("LastBackupSucceeded %+v, want False naming %s and why", c, second)
	}
	if st.LastSuccessfulBackup == nil || st.LastSuccessfulBackup.Name != first {
		t.Errorf("lastSuccessfulBackup %+v, want %s kept", st.LastSuccessfulBackup, first)
	}
}

// maxAge drops completed backups older than it, never the newest completed one.
func TestScheduledBackupMaxAge(t *testing.T) {
	r := newScheduleRig(t, "0 * * * *", 10)
	r.parent["spec"].(map[string]any)["maxAge"] = "2h"
	for hour := 1; hour <= 5; hour++ {
		r.now = time.Date(2026, 12, 6, hour, 0, 5, 0, time.UTC)
		r.sync()
		r.setPhase(v1alpha1.BackupCompleted)
		r.sync()
	}
	want := []string{"nightly-1796529600", "nightly-1796533200"} // 04:00 and 05:00; 03:00 is 2h5s old
	if diff := cmp.Diff(want, r.names()); diff != "" {
		t.Errorf("children with maxAge 2h at 05:00 (-want +got):\n%s", diff)
	}
	r.now = r.now.Add(30 * 24 * time.Hour)
	r.parent["spec"].(map[string]any)["suspend"] = true
	r.sync()
	if diff := cmp.Diff([]string{"nightly-1796533200"}, r.names()); diff != "" {
		t.Errorf("a month later, the newest completed backup stays (-want +got):\n%s", diff)
	}
}

// Deleting the schedule: its finalize hook returns no child, so that its MemgraphBackups go
// while it still says what their objects do, and lets it go once none is left.
func TestScheduledBackupFinalize(t *testing.T) {
	r := newScheduleRig(t, "0 * * * *", 2)
	r.now = time.Date(2026, 12, 6, 1, 0, 5, 0, time.UTC)
	r.sync()
	r.setPhase(v1alpha1.BackupCompleted)
	a := r.finalize()
	c := meta.FindStatusCondition(a.Status.Conditions, "Scheduled")
	if len(a.Children) != 0 || a.Finalized || c == nil || c.Reason != "Deleting" || !strings.Contains(c.Message, "1 MemgraphBackups to delete first; their objects stay") {
		t.Errorf("finalize with a backup left: %+v, want no child, not finalized, Deleting", a)
	}
	if a := r.finalize(); !a.Finalized {
		t.Errorf("finalize with no backup left: %+v, want finalized", a)
	}
}

func postRaw(handler http.Handler, path string, raw []byte) (int, []byte) {
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(raw)))
	return rec.Code, rec.Body.Bytes()
}

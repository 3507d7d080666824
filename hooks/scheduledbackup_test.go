package hooks_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
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
	template := (&backupRig{}).mgb("x", testBucket, topology.BackupDelete)["spec"].(map[string]any)
	template["destination"].(map[string]any)["s3"].(map[string]any)["endpoint"] = "https://s3.example.com"
	r.parent = map[string]any{
		"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphScheduledBackup",
		"metadata": map[string]any{"name": "nightly", "namespace": "default", "uid": "uid-s", "generation": 1,
			"creationTimestamp": r.now.Format(time.RFC3339)},
		"spec": map[string]any{"schedule": schedule, "keep": keep, "backupTemplate": template},
	}
	return r
}

type scheduleAnswer struct {
	Status             topology.MemgraphScheduledBackupStatus `json:"status"`
	Children           []map[string]any                       `json:"children"`
	ResyncAfterSeconds float64                                `json:"resyncAfterSeconds"`
}

// sync calls the hook at the rig's time and applies its answer.
func (r *scheduleRig) sync() scheduleAnswer {
	r.t.Helper()
	observed := map[string]any{}
	for name, c := range r.children {
		observed["default/"+name] = c
	}
	req := map[string]any{"parent": r.parent, "children": map[string]any{"MemgraphBackup.memgraph.com/v1alpha1": observed}, "related": map[string]any{}}
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

func (r *scheduleRig) setPhase(phase topology.BackupPhase) {
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
		r.setPhase(topology.BackupCompleted)
		r.sync()
	}
	want := []string{"nightly-29942100", "nightly-29942160"} // 03:00 and 04:00 in Unix minutes
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
	if len(a.Children) != 0 || len(a.Status.Conditions) != 1 || a.Status.Conditions[0].Reason != "InvalidSchedule" || a.Status.Conditions[0].Status != "False" {
		t.Errorf("answer %+v, want no child and Scheduled=False InvalidSchedule", a)
	}
}

func postRaw(handler http.Handler, path string, raw []byte) (int, []byte) {
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(raw)))
	return rec.Code, rec.Body.Bytes()
}

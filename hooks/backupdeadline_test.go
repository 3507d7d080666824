package hooks_test

import (
	"maps"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// A backup that cannot start (its cluster's credentials Secret is missing) waits with its
// deadline in its status, asks to be called again at the deadline at the latest, and past the
// deadline fails, DeadlineExceeded, saying what it waited for; nothing was snapshotted.
func TestABackupThatCannotStartFailsAtItsDeadline(t *testing.T) {
	r := newBackupRig(t)
	r.editCluster(func(_, secrets map[string]any) { delete(secrets, backupNS+"/"+s3CredsSecret) })
	b := r.mgb("stuck", v1alpha1.BackupRetain)
	b["spec"].(map[string]any)["timeout"] = "20s"
	b["metadata"].(map[string]any)["creationTimestamp"] = time.Now().Add(-15 * time.Second).UTC().Format(time.RFC3339)
	a := r.call(b, false)
	if a.Status.Phase != v1alpha1.BackupPending || a.Status.Reason != "SecretProblem" || a.Status.Deadline == nil ||
		a.ResyncAfterSeconds <= 0 || a.ResyncAfterSeconds > 6 {
		t.Fatalf("answer %+v, want Pending with its deadline, called again at it (about 5 s)", a)
	}
	b["metadata"].(map[string]any)["creationTimestamp"] = time.Now().Add(-21 * time.Second).UTC().Format(time.RFC3339)
	st := r.call(b, false).Status
	if st.Phase != v1alpha1.BackupFailed || st.Reason != "DeadlineExceeded" || st.CompletedAt == nil ||
		!strings.Contains(st.Error, "did not start within its timeout of 20s") ||
		!strings.Contains(st.Error, "it waited for: SecretProblem: Secret default/s3-credentials (spec.backup.destination.s3.credentialsSecret) does not exist") {
		t.Fatalf("status %+v, want Failed, DeadlineExceeded, saying what it waited for", st)
	}
	if taken := snapshotsTaken(r.h.world); len(taken) != 0 {
		t.Errorf("snapshots %v taken", taken)
	}
}

// An older backup stuck past its deadline (Pending, or Running with an agent that no longer
// answers) does not hold the next one, which completes.
func TestAStuckBackupDoesNotHoldTheNext(t *testing.T) {
	r := newBackupRig(t)
	r.h.must(r.h.world.Commit("memgraph", 2))
	old := time.Now().Add(-2 * time.Hour).UTC()
	for name, phase := range map[string]string{"pending": "Pending", "running": "Running"} {
		o := r.mgb(name, v1alpha1.BackupRetain)
		o["metadata"].(map[string]any)["creationTimestamp"] = old.Format(time.RFC3339)
		o["spec"].(map[string]any)["timeout"] = "1h"
		o["status"] = map[string]any{"phase": phase}
		r.others[backupNS+"/"+name] = o
	}
	if st := r.untilDone(r.mgb("next", v1alpha1.BackupRetain)).Status; st.Phase != v1alpha1.BackupCompleted {
		t.Fatalf("the next backup: %s (%s: %s), want Completed", st.Phase, st.Reason, st.Error)
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := closed.Addr().String()
	_ = closed.Close()
	r.h.handler = hooks.NewHandler(hooks.Config{Connector: r.h.pool, SyncBudget: 5 * time.Second, Now: time.Now,
		AgentResolver: memgraph.ResolverFunc(func(string) string { return dead })})
	running := r.others[backupNS+"/running"].(map[string]any)
	running["status"] = map[string]any{"phase": "Running", "instance": "instance_1", "pod": "memgraph-data-1"}
	if st := r.call(running, false).Status; st.Phase != v1alpha1.BackupFailed || st.Reason != "DeadlineExceeded" ||
		!strings.Contains(st.Error, "did not report the job's end") || !strings.Contains(st.Error, "connection refused") {
		t.Errorf("a Running backup whose agent does not answer past its deadline: %+v", st)
	}
}

// scheduled makes b a backup of MemgraphScheduledBackup nightly, related with
// backupOwnerReference owner, being deleted when deleting.
func (r *backupRig) scheduled(b map[string]any, owner string, deleting bool) {
	b["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "memgraph.com/v1alpha1",
		"kind": "MemgraphScheduledBackup", "name": "nightly", "uid": "uid-s", "controller": true}}
	meta := map[string]any{"name": "nightly", "namespace": backupNS, "uid": "uid-s"}
	if deleting {
		meta["deletionTimestamp"] = time.Now().UTC().Format(time.RFC3339)
	}
	r.schedules = map[string]any{backupNS + "/nightly": map[string]any{"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphScheduledBackup",
		"metadata": meta, "spec": map[string]any{"schedule": "@daily", "backupOwnerReference": owner,
			"backupTemplate": map[string]any{"cluster": "memgraph"}}}}
}

// Deleting a schedule's backup (deletionPolicy Delete): while the schedule lives (it dropped the
// backup, or someone deleted it by hand) its objects go; when the schedule is being deleted they
// stay with backupOwnerReference none, and go with self; when the schedule is gone they stay.
func TestDeletingAScheduledBackupByOwnerReference(t *testing.T) {
	r := newBackupRig(t)
	r.h.must(r.h.world.Commit("memgraph", 1))
	for _, tc := range []struct {
		name            string
		owner           string
		deleting, gone  bool
		removed         bool
		reason, message string
	}{
		{"dropped by its live schedule", "none", false, false, true, "Completed", ""},
		{"its schedule deleted with none", "none", true, false, false, "ObjectsKept", "backupOwnerReference is none"},
		{"its schedule deleted with self", "self", true, false, true, "Completed", ""},
		{"its schedule gone", "self", false, true, false, "ObjectsKept", "is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := r.mgb("b-"+strings.ReplaceAll(tc.name, " ", "-"), v1alpha1.BackupDelete)
			st := r.untilDone(b).Status
			if st.Phase != v1alpha1.BackupCompleted {
				t.Fatalf("backup %s: %s", st.Phase, st.Error)
			}
			r.scheduled(b, tc.owner, tc.deleting)
			if tc.gone {
				r.schedules = map[string]any{}
			}
			a := r.call(b, true)
			if !a.Finalized || a.Status.Reason != tc.reason || !strings.Contains(a.Status.Error, tc.message) {
				t.Errorf("finalize %+v, want finalized, reason %s saying %q", a, tc.reason, tc.message)
			}
			if _, _, present := r.object(st.Key); present == tc.removed {
				t.Errorf("object %s present %v, want removed %v", st.Key, present, tc.removed)
			}
		})
	}
}

// A backup whose cluster's destination names another store than the one its objects went to
// keeps them when deleted with Delete (DeleteFailed, saying where they are) rather than sending
// the cluster's credentials to the wrong store.
func TestDeletingABackupWhoseClusterMovedItsDestination(t *testing.T) {
	r := newBackupRig(t)
	r.h.must(r.h.world.Commit("memgraph", 1))
	b := r.mgb("moved", v1alpha1.BackupDelete)
	st := r.untilDone(b).Status
	r.editCluster(func(spec, _ map[string]any) {
		spec["backup"] = map[string]any{"destination": map[string]any{"s3": r.destination("another-bucket")}}
	})
	a := r.call(b, true)
	if a.Finalized || a.Status.Reason != "DeleteFailed" || !strings.Contains(a.Status.Error, "the objects are in bucket backups") {
		t.Errorf("finalize %+v, want DeleteFailed naming where the objects are", a)
	}
	if _, _, present := r.object(st.Key); !present {
		t.Errorf("object %s removed", st.Key)
	}
}

// The metrics: a backup that completes is counted once, by the call that saw it end, and the
// cluster's newest success is exported.
func TestBackupMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := newBackupRig(t, func(c *harnessConfig) { c.hook.Registerer = reg })
	r.h.must(r.h.world.Commit("memgraph", 1))
	b := r.mgb("counted", v1alpha1.BackupRetain)
	st := r.untilDone(b).Status
	r.call(b, false)
	labels := map[string]string{"namespace": backupNS, "cluster": "memgraph"}
	if got := metricValue(t, reg, "memgraph_hooks_backups_total", with(labels, "result", "completed")); got != 1 {
		t.Errorf("memgraph_hooks_backups_total{result=completed} %v, want 1", got)
	}
	if got := metricValue(t, reg, "memgraph_hooks_backup_last_success_timestamp_seconds", labels); got != float64(st.CompletedAt.Unix()) {
		t.Errorf("last success %v, want %d", got, st.CompletedAt.Unix())
	}
	failing := r.mgb("failing", v1alpha1.BackupRetain)
	r.editCluster(func(spec, _ map[string]any) {
		spec["backup"] = map[string]any{"destination": map[string]any{"s3": r.destination("no-such-bucket")}}
	})
	r.untilDone(failing)
	if got := metricValue(t, reg, "memgraph_hooks_backups_total", with(labels, "result", "failed")); got != 1 {
		t.Errorf("memgraph_hooks_backups_total{result=failed} %v, want 1", got)
	}
}

func with(labels map[string]string, k, v string) map[string]string {
	out := maps.Clone(labels)
	out[k] = v
	return out
}

//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// createSchedule makes MemgraphScheduledBackup name of template on schedule, with
// backupOwnerReference owner ("" leaves the default).
func (b *backupScenario) createSchedule(name, schedule, owner string, template map[string]any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spec := map[string]any{"schedule": schedule, "backupTemplate": template}
	if owner != "" {
		spec["backupOwnerReference"] = owner
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": v1alpha1.ScheduledBackupKind,
		"metadata": map[string]any{"name": name, "namespace": b.ns}, "spec": spec}}
	if _, err := scheduleClient(b.ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		b.t.Fatalf("create MemgraphScheduledBackup %s: %v", name, err)
	}
}

// runs are the MemgraphBackups of schedule name, by name.
func (b *backupScenario) runs(name string) map[string]v1alpha1.MemgraphBackup {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := backupClient(b.ns).List(ctx, metav1.ListOptions{LabelSelector: "memgraph.com/scheduled-backup=" + name})
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]v1alpha1.MemgraphBackup{}
	for _, item := range list.Items {
		var mb v1alpha1.MemgraphBackup
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &mb); err != nil {
			b.t.Fatal(err)
		}
		out[mb.Name] = mb
	}
	return out
}

// scheduleStatus reads MemgraphScheduledBackup name's status.
func (b *backupScenario) scheduleStatus(name string) v1alpha1.MemgraphScheduledBackupStatus {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := scheduleClient(b.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		b.t.Fatal(err)
	}
	var sb v1alpha1.MemgraphScheduledBackup
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sb); err != nil {
		b.t.Fatal(err)
	}
	return sb.Status
}

// newRun waits for schedule name to have a MemgraphBackup not in before, and returns its name.
func (b *backupScenario) newRun(name string, before map[string]v1alpha1.MemgraphBackup) string {
	b.t.Helper()
	var created string
	b.waitFor(time.Minute, func() error {
		for n := range b.runs(name) {
			if _, ok := before[n]; !ok {
				created = n
				return nil
			}
		}
		return fmt.Errorf("schedule %s created no backup yet", name)
	})
	return created
}

// deleteSchedule deletes MemgraphScheduledBackup name (background, as kubectl does) and waits
// until it and its MemgraphBackups are gone.
func (b *backupScenario) deleteSchedule(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := scheduleClient(b.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		b.t.Fatal(err)
	}
	b.waitFor(time.Minute, func() error {
		if _, err := scheduleClient(b.ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("MemgraphScheduledBackup %s still exists (%v)", name, err)
		}
		if runs := b.runs(name); len(runs) > 0 {
			return fmt.Errorf("%d MemgraphBackups of %s left", len(runs), name)
		}
		return nil
	})
}

func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }

// The schedules on the real control plane and object store, on one cluster and the hook's clock
// moved an hour ahead at a time:
//   - a schedule that keeps 2, run four times, leaves exactly two MemgraphBackups and, with
//     deletionPolicy Delete, exactly two objects; deleted (backupOwnerReference none), its
//     MemgraphBackups go and both objects stay;
//   - a scheduled backup whose cluster's credentials Secret is missing waits, then fails at its
//     (short) deadline saying why, and the next scheduled backup completes, its CRC32C verified
//     by the store; that object, changed on the store's disk, fails a restore on its checksum
//     before Memgraph loads it;
//   - a schedule with backupOwnerReference self, deleted, takes its backups' objects with it.
func TestScheduledBackupsOnTheControlPlane(t *testing.T) {
	b := startBackupScenario(t, "backup-schedule")
	const name = "sched"
	begin := time.Now()
	b.create(name, "{dataInstances: 2, backup: "+b.clusterBackup("hourly", "s3-credentials", "")+"}")
	b.waitConverged(name, convergeTimeout)
	t.Logf("a 3+2 cluster converged: %s", since(begin))

	step := time.Now()
	b.createSchedule("hourly", "0 * * * *", "", map[string]any{"cluster": name, "deletionPolicy": "Delete"})
	b.patchSchedule("hourly", `{"keep": 2}`)
	for run := 1; run <= 4; run++ {
		b.runOn(name, b.mainOrdinal(), "CREATE (n)")
		b.offset.Add(int64(time.Hour))
		b.waitFor(time.Minute, func() error {
			runs := b.runs("hourly")
			completed := 0
			for _, r := range runs {
				if r.Status.Phase == v1alpha1.BackupCompleted {
					completed++
				}
			}
			if objs := b.objects("hourly/"); completed < min(run, 2) || len(objs) != min(run, 2) {
				return fmt.Errorf("run %d: %d completed backups of %d, %d objects", run, completed, len(runs), len(objs))
			}
			if run > 2 && len(runs) != 2 {
				return fmt.Errorf("run %d: %d backups, want 2", run, len(runs))
			}
			return nil
		})
	}
	t.Logf("four runs of a schedule that keeps 2: %s", since(step))
	step = time.Now()
	b.deleteSchedule("hourly")
	if objs := b.objects("hourly/"); len(objs) != 2 {
		t.Errorf("objects after the schedule (none) was deleted: %v, want both kept", objs)
	}
	t.Logf("a schedule with backupOwnerReference none deleted, its objects kept: %s", since(step))

	// The hook's clock runs ahead of the wall clock (offset), so the new schedule's first backup
	// is due at once; a timeout of the offset plus 10 s leaves it 10 s of the wall clock.
	step = time.Now()
	b.setDestination(name, "hourly", "missing-credentials", "")
	ahead := time.Duration(b.offset.Load())
	b.createSchedule("nightly", "@every 1h", "", map[string]any{"cluster": name, "deletionPolicy": "Delete",
		"timeout": fmt.Sprintf("%dh0m10s", int(ahead.Hours()))})
	stuck := b.newRun("nightly", nil)
	b.waitFor(30*time.Second, func() error {
		if st := b.backupStatus(stuck); st.Phase != v1alpha1.BackupPending || st.Reason != "SecretProblem" || st.Deadline == nil {
			return fmt.Errorf("backup %s: %s (%s: %s)", stuck, st.Phase, st.Reason, st.Error)
		}
		return nil
	})
	st := b.waitBackup(stuck)
	failedAfter := time.Since(b.runs("nightly")[stuck].CreationTimestamp.Time)
	if st.Phase != v1alpha1.BackupFailed || st.Reason != "DeadlineExceeded" ||
		!strings.Contains(st.Error, "it waited for: SecretProblem: Secret "+b.ns+"/missing-credentials (spec.backup.destination.s3.credentialsSecret) does not exist") ||
		failedAfter < 10*time.Second {
		t.Fatalf("backup %s after %s: %+v, want Failed at its deadline, 10 s after its creation, saying what it waited for", stuck, failedAfter, st)
	}
	b.waitFor(30*time.Second, func() error {
		if c := meta(b.scheduleStatus("nightly").Conditions, "LastBackupSucceeded"); c == nil || c.Status != "False" || c.Reason != "DeadlineExceeded" {
			return fmt.Errorf("LastBackupSucceeded %+v, want False, DeadlineExceeded", c)
		}
		return nil
	})
	t.Logf("a backup that cannot start failed %s after its creation (%s in all)", failedAfter.Round(10*time.Millisecond), since(step))

	step = time.Now()
	b.setDestination(name, "hourly", "s3-credentials", "")
	b.patchSchedule("nightly", `{"backupTemplate": {"timeout": "168h"}}`)
	before := b.runs("nightly")
	b.offset.Add(int64(time.Hour))
	next := b.newRun("nightly", before)
	if st := b.waitBackup(next); st.Phase != v1alpha1.BackupCompleted || st.SnapshotTimestamp != 4 || st.Databases[0].CRC32C == "" ||
		st.Databases[0].Verified != "checksum" {
		t.Fatalf("the next scheduled backup %s: %+v, want Completed with the four writes, its object's CRC32C verified by the store", next, st)
	}
	b.waitFor(30*time.Second, func() error {
		sst := b.scheduleStatus("nightly")
		if c := meta(sst.Conditions, "LastBackupSucceeded"); c == nil || c.Status != "True" || sst.LastSuccessfulBackup == nil || sst.LastSuccessfulBackup.Name != next {
			return fmt.Errorf("schedule status %+v, want LastBackupSucceeded True and lastSuccessfulBackup %s", sst, next)
		}
		return nil
	})
	t.Logf("the next scheduled backup completed: %s", since(step))

	// The object changed on the store's disk, same size: a restore fails on its checksum, and
	// Memgraph never loads it.
	step = time.Now()
	key := b.backupStatus(next).Key
	b.tamper(key)
	b.create("restored", "{dataInstances: 1, backup: "+b.clusterBackup("hourly", "s3-credentials", "")+", bootstrap: {fromBackup: {name: "+next+"}}}")
	var restore map[string]any
	b.waitFor(2*time.Minute, func() error {
		restore, _, _ = unstructured.NestedMap(b.getCluster("restored").Object, "status", "restore")
		if restore["phase"] != "Failed" {
			return fmt.Errorf("status.restore %v", restore)
		}
		return nil
	})
	if msg := fmt.Sprint(restore["message"]); !strings.Contains(msg, "checksum: object s3://"+b.bucket+"/"+key+" has SHA-256") {
		t.Errorf("the restore of a changed object failed with %q, want the checksum", msg)
	}
	host := topology.Network{Cluster: "restored", Namespace: b.ns, ClusterDomain: "cluster.local"}.DataInstance(0).Host
	if got := b.world.Committed(host)["memgraph"]; got != 0 {
		t.Errorf("the instance restored into holds %d transactions, want none loaded", got)
	}
	t.Logf("a restore of a changed object failed on its checksum: %s", since(step))

	// A schedule with self takes its backups' objects with it.
	step = time.Now()
	b.createSchedule("owned", "@every 1h", "self", map[string]any{"cluster": name, "deletionPolicy": "Delete"})
	owned := b.newRun("owned", nil)
	if st := b.waitBackup(owned); st.Phase != v1alpha1.BackupCompleted {
		t.Fatalf("backup %s of the schedule with self: %+v", owned, st)
	}
	ownedPrefix := topology.BackupKeyPrefix("hourly", b.ns, name, owned) + "/"
	if objs := b.objects(ownedPrefix); len(objs) != 1 {
		t.Fatalf("objects of %s: %v", owned, objs)
	}
	b.deleteSchedule("owned")
	if objs := b.objects(ownedPrefix); len(objs) != 0 {
		t.Errorf("objects of %s after its schedule (self) was deleted: %v, want none", owned, objs)
	}
	t.Logf("a schedule with backupOwnerReference self deleted with its objects: %s", since(step))
}

// patchSchedule merges fields into MemgraphScheduledBackup name's spec.
func (b *backupScenario) patchSchedule(name, patch string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := `{"spec":` + patch + `}`
	if _, err := scheduleClient(b.ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		b.t.Fatalf("patch %s with %s: %v", name, body, err)
	}
}

// tamper changes a byte in the middle of the object at key on the store's disk (versitygw's
// posix backend keeps each object as a file), behind the store's back.
func (b *backupScenario) tamper(key string) {
	b.t.Helper()
	path := filepath.Join(b.store.Dir, b.bucket, filepath.FromSlash(key))
	data, err := os.ReadFile(path)
	if err != nil {
		b.t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// meta finds a condition by type.
func meta(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

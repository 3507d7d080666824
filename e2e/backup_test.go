//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/e2e/env"
	"github.com/memgraph-hooks/memgraph-hooks/e2e/metacontroller"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// backupScenario is a scenario whose hook runs on a clock the test can move forward (offset), with
// test Metacontrollers for the two backup CompositeControllers of manifests/, the backup CRDs
// installed, and versitygw with a bucket and a credentials Secret.
type backupScenario struct {
	*scenario
	offset *atomic.Int64 // nanoseconds the hook's clock is ahead of the wall clock
	store  *env.ObjectStore
	bucket string
}

func startBackupScenario(t *testing.T, ns string) *backupScenario {
	t.Helper()
	installCRD(t)
	installBackupCRDs(t)
	offset := &atomic.Int64{}
	s := startScenarioOpts(t, ns, scenarioOptions{now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, name := range []string{"memgraph-backups", "memgraph-scheduled-backups"} {
		cc, err := metacontroller.LoadCompositeController(repoPath("manifests"), name)
		if err != nil {
			t.Fatal(err)
		}
		mc := s.metacontrollerFor(cc)
		if err := mc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(mc.Stop)
	}
	store, err := testEnv.ObjectStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := &backupScenario{scenario: s, offset: offset, store: store, bucket: "backups-" + ns}
	if err := store.CreateBucket(ctx, b.bucket); err != nil {
		t.Fatal(err)
	}
	b.credentials("s3-credentials", store.SecretAccessKey)
	return b
}

var backupCRDs = []string{"memgraph.com_memgraphbackups.yaml", "memgraph.com_memgraphscheduledbackups.yaml"}

// installBackupCRDs applies the two backup CRDs and waits until they are served.
func installBackupCRDs(t *testing.T) {
	t.Helper()
	e := needEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, f := range backupCRDs {
		if _, err := e.Kubectl(ctx, "apply", "-f", repoPath("manifests", "crd", f)); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []string{topology.BackupResource, topology.ScheduledBackupResource} {
		if _, err := e.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+r+"."+topology.Group); err != nil {
			t.Fatal(err)
		}
	}
}

func (b *backupScenario) credentials(name, secret string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.ns},
		StringData: map[string]string{"accessKeyId": b.store.AccessKeyID, "secretAccessKey": secret}}
	if _, err := testEnv.Client.CoreV1().Secrets(b.ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		b.t.Fatal(err)
	}
}

func backupClient(ns string) dynamic.ResourceInterface {
	return testEnv.Dynamic.Resource(topology.GroupVersion.WithResource(topology.BackupResource)).Namespace(ns)
}

func scheduleClient(ns string) dynamic.ResourceInterface {
	return testEnv.Dynamic.Resource(topology.GroupVersion.WithResource(topology.ScheduledBackupResource)).Namespace(ns)
}

// backupSpec is a MemgraphBackup spec of cluster to the scenario's bucket.
func (b *backupScenario) backupSpec(cluster, prefix, creds string, policy topology.BackupDeletionPolicy) map[string]any {
	return map[string]any{"cluster": cluster, "deletionPolicy": string(policy), "destination": map[string]any{"s3": map[string]any{
		"endpoint": b.store.URL, "bucket": b.bucket, "prefix": prefix, "region": b.store.Region,
		"credentialsSecret": map[string]any{"name": creds}}}}
}

func (b *backupScenario) createBackup(name string, spec map[string]any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": topology.APIVersion, "kind": topology.BackupKind,
		"metadata": map[string]any{"name": name, "namespace": b.ns}, "spec": spec}}
	if _, err := backupClient(b.ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		b.t.Fatalf("create MemgraphBackup %s: %v", name, err)
	}
}

// waitBackup waits until MemgraphBackup name is Completed or Failed and returns its status.
func (b *backupScenario) waitBackup(name string) topology.MemgraphBackupStatus {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var st topology.MemgraphBackupStatus
	err := eventually(ctx, 100*time.Millisecond, func() error {
		u, err := backupClient(b.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		raw, _ := u.Object["status"].(map[string]any)
		st = topology.MemgraphBackupStatus{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
			return err
		}
		if !st.Phase.Done() {
			return fmt.Errorf("MemgraphBackup %s is %q (%s: %s)", name, st.Phase, st.Reason, st.Error)
		}
		return nil
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return st
}

func (b *backupScenario) objects(prefix string) []backup.ObjectInfo {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := backup.ListObjects(ctx, backup.S3Object{Endpoint: b.store.Endpoint, Bucket: b.bucket, Key: prefix, Region: b.store.Region, Insecure: true},
		backup.S3Credentials{AccessKeyID: b.store.AccessKeyID, SecretAccessKey: b.store.SecretAccessKey})
	if err != nil {
		b.t.Fatal(err)
	}
	return out
}

// committedOnEveryInstance is each data instance's committed transactions, as the leader's
// SHOW REPLICATION LAG reports them.
func (b *backupScenario) committedOnEveryInstance(cluster string) map[string]int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	leader, ok := b.world.Leader()
	if !ok {
		b.t.Fatal("no leader")
	}
	lag, err := b.pool.Client(b.network(cluster).Coordinator(leader).BoltServer).ShowReplicationLag(ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]int64{}
	for _, l := range lag {
		out[l.Instance] = l.Databases["memgraph"].CommittedTxns
	}
	return out
}

// Back up a cluster with acknowledged writes, delete the cluster and its volumes, create it
// again from the backup: every write is on the MAIN and, caught up, on every replica. A wrong
// secret fails a backup with the store's own error; Retain keeps the object when the
// MemgraphBackup goes.
func TestBackupAndRestoreOnTheControlPlane(t *testing.T) {
	b := startBackupScenario(t, "backup-restore")
	const name, writes = "src", 25
	b.create(name, "{dataInstances: 3, storage: {retentionPolicy: Delete}}")
	b.waitConverged(name, convergeTimeout)
	queries := make([]string, writes)
	for i := range queries {
		queries[i] = "CREATE (n)"
	}
	b.runOn(name, b.mainOrdinal(), queries...)

	start := time.Now()
	b.createBackup("full", b.backupSpec(name, "full", "s3-credentials", topology.BackupRetain))
	st := b.waitBackup("full")
	took := time.Since(start)
	if st.Phase != topology.BackupCompleted || st.SnapshotTimestamp != writes || st.Instance != b.currentMain() {
		t.Fatalf("backup %+v, want Completed on the MAIN %s holding %d writes", st, b.currentMain(), writes)
	}
	if objs := b.objects(st.Key); len(objs) != 1 || objs[0].Size != st.Size {
		t.Fatalf("objects %+v, want %s of %d bytes", objs, st.Key, st.Size)
	}
	t.Logf("backup of a 3+3 cluster (%d writes): %s, %d bytes", writes, took.Round(time.Millisecond), st.Size)

	b.credentials("wrong-credentials", "not-the-secret")
	b.createBackup("wrong", b.backupSpec(name, "wrong", "wrong-credentials", topology.BackupRetain))
	if st := b.waitBackup("wrong"); st.Phase != topology.BackupFailed || !strings.Contains(st.Error, "SignatureDoesNotMatch") {
		t.Errorf("backup with a wrong secret: %+v, want Failed with the store's SignatureDoesNotMatch", st)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := mgcClient(b.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.waitWorkloadsGone(name)
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if claims := b.claims(); len(claims) > 0 {
			return fmt.Errorf("claims left: %v", claims)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	start = time.Now()
	b.create(name, "{dataInstances: 3, bootstrap: {fromBackup: {name: full}}}")
	u := b.waitConverged(name, convergeTimeout)
	t.Logf("restore into a new 3+3 cluster, from creation to Converged: %s", time.Since(start).Round(time.Millisecond))
	if got, _, _ := unstructured.NestedString(u.Object, "status", "restoredFrom"); got != "MemgraphBackup full" {
		t.Errorf("status.restoredFrom %q, want MemgraphBackup full", got)
	}
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		got := b.committedOnEveryInstance(name)
		if len(got) != 3 {
			return fmt.Errorf("committed transactions %v, want 3 instances", got)
		}
		for inst, n := range got {
			if n != writes {
				return fmt.Errorf("%s holds %d transactions, want %d (all: %v)", inst, n, writes, got)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	if err := backupClient(b.ns).Delete(ctx, "full", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if _, err := backupClient(b.ns).Get(ctx, "full", metav1.GetOptions{}); err == nil {
			return fmt.Errorf("MemgraphBackup full still exists")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if objs := b.objects(st.Key); len(objs) != 1 {
		t.Errorf("with deletionPolicy Retain the object must stay; objects %v", objs)
	}
}

// A schedule that keeps 2, run four times on the hook's clock (moved an hour ahead each time),
// leaves exactly two MemgraphBackups and, with deletionPolicy Delete, exactly two objects.
func TestScheduledBackupKeepsTwoObjects(t *testing.T) {
	b := startBackupScenario(t, "backup-schedule")
	const name = "sched"
	b.create(name, "{dataInstances: 2}")
	b.waitConverged(name, convergeTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": topology.APIVersion, "kind": topology.ScheduledBackupKind,
		"metadata": map[string]any{"name": "hourly", "namespace": b.ns},
		"spec": map[string]any{"schedule": "0 * * * *", "keep": int64(2),
			"backupTemplate": b.backupSpec(name, "hourly", "s3-credentials", topology.BackupDelete)}}}
	if _, err := scheduleClient(b.ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 4; run++ {
		b.runOn(name, b.mainOrdinal(), "CREATE (n)")
		b.offset.Add(int64(time.Hour))
		if err := eventually(ctx, 200*time.Millisecond, func() error {
			list, err := backupClient(b.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			completed := 0
			for _, item := range list.Items {
				if phase, _, _ := unstructured.NestedString(item.Object, "status", "phase"); phase == string(topology.BackupCompleted) {
					completed++
				}
			}
			if completed < min(run, 2) || len(b.objects("hourly/")) != min(run, 2) {
				return fmt.Errorf("run %d: %d completed backups of %d, %d objects", run, completed, len(list.Items), len(b.objects("hourly/")))
			}
			if run > 2 && len(list.Items) != 2 {
				return fmt.Errorf("run %d: %d backups, want 2", run, len(list.Items))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if objs := b.objects("hourly/"); len(objs) != 2 {
		t.Errorf("objects after four runs %v, want exactly 2", objs)
	}
}

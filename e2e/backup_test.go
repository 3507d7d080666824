//go:build e2e

package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/e2e/env"
	"github.com/memgraph-hooks/memgraph-hooks/e2e/metacontroller"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// backupScenario is a scenario whose hook runs on a clock the test can move forward (offset), with
// test Metacontrollers for the two backup CompositeControllers of manifests/ (sharing their
// informers), the backup CRDs installed, and versitygw with a bucket and a credentials Secret.
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
	// One Metacontroller process runs both, sharing its informers: a backup's finalize hook sees
	// its schedule being deleted once the schedule's own finalize hook has.
	informers := metacontroller.NewInformers(needEnv(t).Dynamic, ns)
	t.Cleanup(informers.Stop)
	for _, name := range []string{"memgraph-backups", "memgraph-scheduled-backups"} {
		cc, err := metacontroller.LoadCompositeController(repoPath("manifests"), name)
		if err != nil {
			t.Fatal(err)
		}
		mc := s.metacontrollerFor(cc, informers)
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
	for _, r := range []string{v1alpha1.BackupResource, v1alpha1.ScheduledBackupResource} {
		if _, err := e.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+r+"."+v1alpha1.Group); err != nil {
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
	return testEnv.Dynamic.Resource(v1alpha1.GroupVersion.WithResource(v1alpha1.BackupResource)).Namespace(ns)
}

func scheduleClient(ns string) dynamic.ResourceInterface {
	return testEnv.Dynamic.Resource(v1alpha1.GroupVersion.WithResource(v1alpha1.ScheduledBackupResource)).Namespace(ns)
}

// backupSpec is a MemgraphBackup spec of cluster.
func (b *backupScenario) backupSpec(cluster string, policy v1alpha1.BackupDeletionPolicy) map[string]any {
	return map[string]any{"cluster": cluster, "deletionPolicy": string(policy)}
}

// clusterBackup is a MemgraphCluster's spec.backup, as JSON (which a spec's YAML takes too):
// its destination the scenario's bucket under prefix, at endpoint (the store's own when ""),
// with the credentials Secret creds.
func (b *backupScenario) clusterBackup(prefix, creds, endpoint string) string {
	if endpoint == "" {
		endpoint = b.store.URL
	}
	raw, _ := json.Marshal(map[string]any{"destination": map[string]any{"s3": map[string]any{
		"endpoint": endpoint, "insecure": true, "bucket": b.bucket, "prefix": prefix, "region": b.store.Region,
		"credentialsSecret": map[string]any{"name": creds}}}})
	return string(raw)
}

// setDestination points cluster's spec.backup at the bucket (clusterBackup).
func (b *backupScenario) setDestination(cluster, prefix, creds, endpoint string) {
	b.t.Helper()
	b.patchSpec(cluster, `{"backup":`+b.clusterBackup(prefix, creds, endpoint)+`}`)
}

func (b *backupScenario) createBackup(name string, spec map[string]any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": v1alpha1.BackupKind,
		"metadata": map[string]any{"name": name, "namespace": b.ns}, "spec": spec}}
	if _, err := backupClient(b.ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		b.t.Fatalf("create MemgraphBackup %s: %v", name, err)
	}
}

// waitBackup waits until MemgraphBackup name is Completed or Failed and returns its status.
func (b *backupScenario) waitBackup(name string) v1alpha1.MemgraphBackupStatus {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var st v1alpha1.MemgraphBackupStatus
	err := eventually(ctx, 100*time.Millisecond, func() error {
		u, err := backupClient(b.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		raw, _ := u.Object["status"].(map[string]any)
		st = v1alpha1.MemgraphBackupStatus{}
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

// watchBackup watches MemgraphBackup name from its current resourceVersion and reports on the
// channel nil once a status the hook wrote satisfies want, or why none did within timeout.
func (b *backupScenario) watchBackup(name string, timeout time.Duration, want func(v1alpha1.MemgraphBackupStatus) bool) <-chan error {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	u, err := backupClient(b.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		cancel()
		b.t.Fatal(err)
	}
	w, err := backupClient(b.ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: u.GetResourceVersion()})
	if err != nil {
		cancel()
		b.t.Fatal(err)
	}
	out := make(chan error, 1)
	go func() {
		defer cancel()
		defer w.Stop()
		var seen []string
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			raw, _ := obj.Object["status"].(map[string]any)
			var st v1alpha1.MemgraphBackupStatus
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
				out <- err
				return
			}
			if want(st) {
				out <- nil
				return
			}
			seen = append(seen, fmt.Sprintf("%s (%s: %s)", st.Phase, st.Reason, st.Error))
		}
		out <- fmt.Errorf("MemgraphBackup %s: no status as wanted within %s; the hook wrote %v", name, timeout, seen)
	}()
	return out
}

// backupStatus reads MemgraphBackup name's status.
func (b *backupScenario) backupStatus(name string) v1alpha1.MemgraphBackupStatus {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := backupClient(b.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		b.t.Fatal(err)
	}
	raw, _ := u.Object["status"].(map[string]any)
	var st v1alpha1.MemgraphBackupStatus
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
		b.t.Fatal(err)
	}
	return st
}

// getCluster reads MemgraphCluster name.
func (s *scenario) getCluster(name string) *unstructured.Unstructured {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := s.get(ctx, name)
	if err != nil {
		s.t.Fatal(err)
	}
	return u
}

// sha256OfObject downloads the object at key and hashes it.
func (b *backupScenario) sha256OfObject(key string) (string, int64) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body, _, err := backup.OpenObject(ctx, backup.S3Object{Endpoint: b.store.Endpoint, Bucket: b.bucket, Key: key, Region: b.store.Region, Insecure: true},
		backup.S3Credentials{AccessKeyID: b.store.AccessKeyID, SecretAccessKey: b.store.SecretAccessKey})
	if err != nil {
		b.t.Fatal(err)
	}
	defer body.Close()
	return sha256Of(b.t, body)
}

func sha256Of(t *testing.T, r io.Reader) (string, int64) {
	t.Helper()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil)), n
}

// The backup of a database whose snapshot takes 20 s (several times the sync budget) and is larger
// than the S3 client's 16 MiB multipart threshold completes on a caught-up replica, its object's
// SHA-256 that of the replica's snapshot file; a wrong secret fails a backup with the store's own
// error. The cluster and its volumes deleted, a new cluster restored from the backup — its
// restore target's pod killed while Memgraph loads the snapshot — holds every acknowledged write
// on the MAIN and, caught up, on every replica. Retain keeps the object when the MemgraphBackup
// goes.
func TestBackupAndRestoreOnTheControlPlane(t *testing.T) {
	b := startBackupScenario(t, "backup-restore")
	const name, writes = "src", 20
	// 2 MiB per write: 40 MiB, written in 20 s (512 s/GiB) and loaded in 5 s (128 s/GiB).
	b.world.SetSnapshotCost(sim.SnapshotCost{BytesPerTransaction: 2 << 20, WritePerGiB: 512 * time.Second, LoadPerGiB: 128 * time.Second})
	b.create(name, "{dataInstances: 3, storage: {retentionPolicy: Delete}, backup: "+b.clusterBackup("full", "wrong-credentials", "")+"}")
	b.waitConverged(name, convergeTimeout)

	b.credentials("wrong-credentials", "not-the-secret")
	b.createBackup("wrong", b.backupSpec(name, v1alpha1.BackupRetain))
	if st := b.waitBackup("wrong"); st.Phase != v1alpha1.BackupFailed || !strings.Contains(st.Error, "SignatureDoesNotMatch") {
		t.Errorf("backup with a wrong secret: %+v, want Failed with the store's SignatureDoesNotMatch", st)
	}
	b.setDestination(name, "full", "s3-credentials", "")

	queries := make([]string, writes)
	for i := range queries {
		queries[i] = "CREATE (n)"
	}
	b.runOn(name, b.mainOrdinal(), queries...)
	start := time.Now()
	b.createBackup("full", b.backupSpec(name, v1alpha1.BackupRetain))
	b.waitFor(time.Minute, func() error {
		if st := b.backupStatus("full"); st.Phase != v1alpha1.BackupRunning || st.Reason != "Snapshotting" {
			return fmt.Errorf("backup %s (%s)", st.Phase, st.Reason)
		}
		return nil
	})
	if status, reason, msg := conditionStatus(b.getCluster(name), string(v1alpha1.ConditionConverged)); status != "True" {
		t.Errorf("the cluster is not Converged while it is backed up: %s %s", reason, msg)
	}
	st := b.waitBackup("full")
	took := time.Since(start)
	if st.Phase != v1alpha1.BackupCompleted || st.SnapshotTimestamp != writes || st.InstanceRole != "REPLICA" || st.Instance == b.currentMain() {
		t.Fatalf("backup %+v, want Completed on a replica, holding %d writes", st, writes)
	}
	if took < 20*time.Second || st.Size <= 16<<20 {
		t.Errorf("the backup took %s for %d bytes: want a snapshot of over 16 MiB that takes 20 s", took, st.Size)
	}
	objectSum, objectSize := b.sha256OfObject(st.Key)
	file, err := os.Open(st.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	fileSum, _ := sha256Of(t, file)
	_ = file.Close()
	if objectSum != st.Databases[0].SHA256 || objectSum != fileSum || objectSize != st.Size {
		t.Fatalf("object %s: SHA-256 %s, %d bytes; the status says %s, %d; the snapshot file %s", st.Key, objectSum, objectSize,
			st.Databases[0].SHA256, st.Size, fileSum)
	}
	t.Logf("backup of a 3+3 cluster (%d writes) on %s: %s, %d bytes", writes, st.Instance, took.Round(time.Millisecond), st.Size)

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
	b.create(name, "{dataInstances: 3, bootstrap: {fromBackup: {name: full}}, backup: "+b.clusterBackup("full", "s3-credentials", "")+"}")
	b.waitFor(2*time.Minute, func() error {
		restore, _, _ := unstructured.NestedMap(b.getCluster(name).Object, "status", "restore")
		if restore["phase"] != "Recovering" {
			return fmt.Errorf("status.restore %v", restore)
		}
		return nil
	})
	recovering := time.Since(start)
	pod := topology.DataSetName(name) + "-0"
	host := topology.Network{Cluster: name, Namespace: b.ns, ClusterDomain: "cluster.local"}.DataInstance(0).Host
	b.waitPodReplaced(pod, b.deletePod(pod), host)
	replaced := time.Since(start)
	u := b.waitConverged(name, convergeTimeout)
	t.Logf("restore into a new 3+3 cluster, its target's pod killed while it loaded, from creation to Converged: %s "+
		"(Recovering after %s, the pod replaced after %s)", time.Since(start).Round(time.Millisecond), recovering.Round(time.Millisecond),
		replaced.Round(time.Millisecond))
	if got, _, _ := unstructured.NestedString(u.Object, "status", "restoredFrom"); got != "MemgraphBackup full" {
		t.Errorf("status.restoredFrom %q, want MemgraphBackup full", got)
	}
	// The one RECOVER SNAPSHOT was cut short by the kill; the restarted instance recovered the
	// snapshot it had downloaded at start, which the restarted agent's job found in SHOW SNAPSHOTS.
	var recovers []string
	for _, q := range b.world.QueryLog(host) {
		if strings.HasPrefix(q.Text, "RECOVER SNAPSHOT") {
			recovers = append(recovers, fmt.Sprintf("failed %v: %s", q.Failed, q.Message))
		}
	}
	if len(recovers) != 1 || !strings.Contains(recovers[0], "failed true") {
		t.Errorf("RECOVER SNAPSHOTs on %s: %v, want one, cut short by the kill", host, recovers)
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

// A backup that starts while the periodic snapshot is being written waits it out (status
// snapshotWaits) and completes. A backup whose agent's pod is killed while it uploads goes back
// to Pending (AgentRestarted), is taken again and completes, its bucket holding the new job's
// object alone.
func TestBackupWaitsOutAPeriodicSnapshotAndOutlivesItsAgent(t *testing.T) {
	b := startBackupScenario(t, "backup-agent")
	const name = "pa"
	// 1 MiB per write: 8 writes are an 8 MiB snapshot, written in 2 s (256 s/GiB).
	b.world.SetSnapshotCost(sim.SnapshotCost{BytesPerTransaction: 1 << 20, WritePerGiB: 256 * time.Second})
	b.create(name, "{dataInstances: 2, backup: "+b.clusterBackup("periodic", "s3-credentials", "")+"}")
	b.waitConverged(name, convergeTimeout)
	b.runOn(name, b.mainOrdinal(), "CREATE (n)", "CREATE (n)", "CREATE (n)", "CREATE (n)", "CREATE (n)", "CREATE (n)", "CREATE (n)", "CREATE (n)")
	network := topology.Network{Cluster: name, Namespace: b.ns, ClusterDomain: "cluster.local"}
	replica := 1 - b.mainOrdinal()
	host := network.DataInstance(replica).Host

	start := time.Now()
	if err := b.world.StartPeriodicSnapshot(host, "memgraph"); err != nil {
		t.Fatal(err)
	}
	b.createBackup("during-periodic", b.backupSpec(name, v1alpha1.BackupRetain))
	st := b.waitBackup("during-periodic")
	if st.Phase != v1alpha1.BackupCompleted || st.SnapshotWaits == 0 || st.Instance != network.DataInstance(replica).Name {
		t.Fatalf("backup %+v, want Completed on the replica after waiting for the periodic snapshot", st)
	}
	refused := false
	for _, q := range b.world.QueryLog(host) {
		refused = refused || (q.Text == "CREATE SNAPSHOT" && q.Failed && q.Message == "Another snapshot creation is already in progress")
	}
	if !refused {
		t.Errorf("no CREATE SNAPSHOT was refused on %s for the periodic snapshot", host)
	}
	t.Logf("a backup that waited for a periodic snapshot: %s", time.Since(start).Round(time.Millisecond))

	// Through a proxy that lets 2 MiB/s through, the 8 MiB upload takes 4 s.
	start = time.Now()
	b.setDestination(name, "slow", "s3-credentials", "http://"+throttled(t, b.store.Endpoint, 2<<20))
	b.createBackup("killed", b.backupSpec(name, v1alpha1.BackupRetain))
	b.waitFor(time.Minute, func() error {
		if st := b.backupStatus("killed"); st.Reason != "Uploading" || st.UploadedBytes == 0 {
			return fmt.Errorf("backup %s (%s), %d bytes uploaded", st.Phase, st.Reason, st.UploadedBytes)
		}
		return nil
	})
	pod := fmt.Sprintf("%s-%d", topology.DataSetName(name), replica)
	// Pending (AgentRestarted) lasts one sync before the backup is taken again: a watch, opened
	// before the pod goes, sees every status the hook wrote, where polling may miss it.
	restarted := b.watchBackup("killed", time.Minute, func(st v1alpha1.MemgraphBackupStatus) bool {
		return st.Phase == v1alpha1.BackupPending && st.Reason == "AgentRestarted"
	})
	b.deletePod(pod)
	if err := <-restarted; err != nil {
		b.t.Fatal(err)
	}
	st = b.waitBackup("killed")
	if st.Phase != v1alpha1.BackupCompleted {
		t.Fatalf("backup whose agent's pod was killed mid-upload, taken again: %+v, want Completed", st)
	}
	if objs := b.objects(path.Dir(st.Key) + "/"); len(objs) != 1 || objs[0].Key != st.Key {
		t.Errorf("objects of the backup taken again: %v, want its one object %s", objs, st.Key)
	}
	t.Logf("a backup killed mid-upload, taken again until it completed: %s", time.Since(start).Round(time.Millisecond))
}

// throttled is the address of a TCP proxy to target that lets rate bytes a second through
// towards target (answers come back at once).
func throttled(t *testing.T, target string, rate int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer client.Close()
				server, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer server.Close()
				go func() { _, _ = io.Copy(client, server) }()
				buf := make([]byte, 32<<10)
				for {
					n, err := client.Read(buf)
					if n > 0 {
						time.Sleep(time.Duration(n) * time.Second / time.Duration(rate))
						if _, werr := server.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

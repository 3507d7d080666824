package hooks_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/johannesboyne/gofakes3"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/internal/s3test"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const (
	testBucket    = "backups"
	backupNS      = "default"
	s3CredsSecret = "s3-credentials"
	s3CASecret    = "s3-ca"
)

// backupRig is a converged 3+3 cluster on the simulator, each data instance with a data
// directory and the real backup agent of its pod (agentFarm), and an in-process S3 store with
// one bucket (internal/s3test: it verifies the checksums uploads carry), over HTTPS with a CA of
// its own (given as Secret s3CASecret) or plain HTTP; the cluster's spec.backup.destination
// names it.
type backupRig struct {
	t       *testing.T
	h       *harness
	farm    *agentFarm
	store   *s3test.Server
	others  map[string]any // other MemgraphBackups of the namespace, by v2 key
	storeCA string         // the store's CA (PEM), in Secret s3CASecret; "" when it serves HTTP
	created time.Time      // the MemgraphBackups' creation
	// schedules are the related MemgraphScheduledBackups, by v2 key.
	schedules map[string]any
}

func newBackupRig(t *testing.T, opts ...harnessOption) *backupRig {
	t.Helper()
	return newBackupRigOn(t, false, opts...)
}

// newBackupRigWithPrivateCA is a backup rig whose store serves HTTPS with a certificate of a CA
// no system trusts, given as the Secret s3CASecret.
func newBackupRigWithPrivateCA(t *testing.T) *backupRig {
	t.Helper()
	return newBackupRigOn(t, true)
}

func newBackupRigOn(t *testing.T, https bool, opts ...harnessOption) *backupRig {
	t.Helper()
	r := &backupRig{t: t, others: map[string]any{}, schedules: map[string]any{}, created: time.Now().UTC().Truncate(time.Second)}
	var storeOpts []s3test.Option
	if https {
		storeOpts = append(storeOpts, s3test.WithTLS())
	}
	r.store = s3test.New(t, []string{testBucket}, storeOpts...)
	r.storeCA = string(r.store.CAPEM)
	r.h, r.farm = newHarnessWithAgents(t, 3, 3, opts...)
	r.h.spec["backup"] = map[string]any{"destination": map[string]any{"s3": r.destination(testBucket)}}
	r.h.secrets = r.storeSecrets()
	r.h.bootstrap()
	r.h.sync()
	r.h.assertConverged()
	return r
}

// destination is the cluster's spec.backup.destination.s3, to bucket of the rig's store.
func (r *backupRig) destination(bucket string) map[string]any {
	return map[string]any{"endpoint": r.store.URL, "bucket": bucket, "prefix": "prod", "insecure": r.storeCA == "",
		"credentialsSecret": map[string]any{"name": s3CredsSecret}}
}

// storeSecrets are the store's credentials Secret and, when it serves HTTPS, its CA's.
func (r *backupRig) storeSecrets() map[string]any {
	secrets := map[string]any{backupNS + "/" + s3CredsSecret: secretOf(s3CredsSecret, map[string]string{"accessKeyId": "test", "secretAccessKey": "test-secret"})}
	if r.storeCA != "" {
		secrets[backupNS+"/"+s3CASecret] = secretOf(s3CASecret, map[string]string{"ca.crt": r.storeCA})
	}
	return secrets
}

// editCluster changes the cluster's spec or Secrets, and syncs it: its hook copies what its
// backups read into its backup-agent Secret.
func (r *backupRig) editCluster(edit func(spec map[string]any, secrets map[string]any)) {
	r.t.Helper()
	edit(r.h.spec, r.h.secrets)
	r.h.sync()
}

func secretOf(name string, data map[string]string) map[string]any {
	enc := map[string]any{}
	for k, v := range data {
		enc[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name, "namespace": backupNS}, "data": enc}
}

// mgb is a MemgraphBackup of the rig's cluster.
func (r *backupRig) mgb(name string, policy v1alpha1.BackupDeletionPolicy) map[string]any {
	return map[string]any{
		"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphBackup",
		"metadata": map[string]any{"name": name, "namespace": backupNS, "uid": "uid-" + name, "generation": 1,
			"creationTimestamp": r.created.Format(time.RFC3339)},
		"spec": map[string]any{"cluster": "memgraph", "deletionPolicy": string(policy)},
	}
}

// secrets are the related Secrets of a backup: its cluster's backup-agent Secret, as the
// cluster's hook last returned it.
func (r *backupRig) secrets() map[string]any {
	secret, ok := r.h.children["Secret/"+topology.BackupAgentSecretName("memgraph")]
	if !ok {
		return map[string]any{}
	}
	return map[string]any{backupNS + "/" + topology.BackupAgentSecretName("memgraph"): secret}
}

// request is the request Metacontroller sends for b, its status as last answered.
func (r *backupRig) request(b map[string]any, finalizing bool) map[string]any {
	pods := map[string]any{}
	for pod := range r.h.pods {
		pods[backupNS+"/"+pod] = r.h.podObject(pod)
	}
	return map[string]any{
		"controller": map[string]any{"kind": "CompositeController"},
		"parent":     b,
		"children":   map[string]any{},
		"related": map[string]any{
			"MemgraphCluster.memgraph.com/v1alpha1":         map[string]any{backupNS + "/memgraph": r.h.parent()},
			"Pod.v1":                                        pods,
			"Secret.v1":                                     r.secrets(),
			"MemgraphBackup.memgraph.com/v1alpha1":          r.others,
			"MemgraphScheduledBackup.memgraph.com/v1alpha1": r.schedules,
		},
		"finalizing": finalizing,
	}
}

type backupAnswer struct {
	Status             v1alpha1.MemgraphBackupStatus `json:"status"`
	Children           []any                         `json:"children"`
	ResyncAfterSeconds float64                       `json:"resyncAfterSeconds"`
	Finalized          bool                          `json:"finalized"`
}

// call posts b's sync (or finalize) and records the answered status into b.
func (r *backupRig) call(b map[string]any, finalizing bool) backupAnswer {
	r.t.Helper()
	code, body := r.h.post("/backup/sync", r.request(b, finalizing))
	if code != http.StatusOK {
		r.t.Fatalf("POST /backup/sync: %d %s", code, body)
	}
	var a backupAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		r.t.Fatal(err)
	}
	if a.Children == nil {
		r.t.Fatalf("children is %s, want []", body)
	}
	raw, _ := json.Marshal(a.Status)
	var st map[string]any
	_ = json.Unmarshal(raw, &st)
	b["status"] = st
	return a
}

// untilDone calls b's sync until its phase is final, moving the simulated clock a minute on
// between calls (snapshots that take time are written meanwhile).
func (r *backupRig) untilDone(b map[string]any) backupAnswer {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a := r.call(b, false)
		if a.Status.Phase.Done() {
			return a
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("backup still %s (%s: %s) after 10 s", a.Status.Phase, a.Status.Reason, a.Status.Error)
		}
		time.Sleep(10 * time.Millisecond)
		r.h.advance(time.Minute)
	}
}

// object is the object at key: its size and hex SHA-256.
func (r *backupRig) object(key string) (int64, string, bool) {
	data, ok := r.store.Object(testBucket, key)
	if !ok {
		return 0, "", false
	}
	sum := sha256.Sum256(data)
	return int64(len(data)), hex.EncodeToString(sum[:]), true
}

// snapshotsTaken counts the CREATE SNAPSHOTs the data instances received, by host.
func snapshotsTaken(w *sim.World) map[string]int {
	out := map[string]int{}
	for _, q := range w.Queries() {
		if q.Text == memgraph.CreateSnapshotQuery && !q.Failed {
			out[q.Host]++
		}
	}
	return out
}

// A backup is taken on a Sync replica proven caught up with the MAIN (spec.backup.target's
// default, PreferReplica), by that pod's agent: every database, each snapshot uploaded, with its
// size and SHA-256 those of its object; the status says where, why, and how much was uploaded.
// Called again, a completed backup takes nothing more.
func TestBackupSnapshotsEveryDatabaseOnACaughtUpReplica(t *testing.T) {
	r := newBackupRig(t)
	r.h.must(r.h.world.Commit("memgraph", 7))
	r.h.must(r.h.world.Commit("tenant_a", 2))
	b := r.mgb("nightly", v1alpha1.BackupRetain)
	st := r.untilDone(b).Status
	if st.Phase != v1alpha1.BackupCompleted || st.Reason != "Completed" {
		t.Fatalf("phase %s (%s: %s), want Completed", st.Phase, st.Reason, st.Error)
	}
	if st.Instance != "instance_1" || st.Pod != "memgraph-data-1" || st.InstanceRole != "REPLICA" ||
		!strings.Contains(st.InstanceReason, "instance_1 is a Sync replica proven caught up with the MAIN instance_0") {
		t.Errorf("taken on %s (%s, %s): %q; want the caught-up replica instance_1", st.Instance, st.Pod, st.InstanceRole, st.InstanceReason)
	}
	if len(st.Databases) != 2 || st.Databases[0].Name != "memgraph" || st.Databases[1].Name != "tenant_a" ||
		st.Databases[0].SnapshotTimestamp != 7 || st.Databases[1].SnapshotTimestamp != 2 {
		t.Fatalf("databases %+v, want memgraph at 7 and tenant_a at 2", st.Databases)
	}
	var total int64
	for _, d := range st.Databases {
		size, sum, ok := r.object(d.Key)
		if !ok || size != d.Size || sum != d.SHA256 || size == 0 {
			t.Errorf("database %s: object %s present %v, %d bytes, %s; the status says %d, %s", d.Name, d.Key, ok, size, sum, d.Size, d.SHA256)
		}
		total += size
	}
	wantKey := "prod/default/memgraph/nightly/" + st.Databases[0].Snapshot[strings.LastIndex(st.Databases[0].Snapshot, "/")+1:]
	if st.Key != wantKey || st.Snapshot != st.Databases[0].Snapshot || st.SnapshotTimestamp != 7 || st.Size != total ||
		st.UploadedBytes != total || st.TotalBytes != total || st.MemgraphVersion != "3.12.0" || st.StartedAt == nil ||
		st.CompletedAt == nil || st.Deadline == nil || !st.Deadline.Time.Equal(r.created.Add(6*time.Hour)) {
		t.Errorf("status %+v: want the default database's key %s, %d bytes uploaded of %d, the times and the deadline", st, wantKey, total, total)
	}
	if !strings.HasPrefix(st.Databases[1].Key, "prod/default/memgraph/nightly/databases/tenant_a/") {
		t.Errorf("tenant_a's key %s", st.Databases[1].Key)
	}
	taken := snapshotsTaken(r.h.world)
	if diff := cmp.Diff(map[string]int{r.h.hostOf("memgraph-data-1"): 2}, taken); diff != "" {
		t.Errorf("snapshots by host (-want +got):\n%s", diff)
	}
	if again := r.call(b, false); !cmp.Equal(again.Status, st) || !cmp.Equal(snapshotsTaken(r.h.world), taken) {
		t.Errorf("a completed backup called again: %+v, snapshots %v; want it unchanged", again.Status, snapshotsTaken(r.h.world))
	}
}

// With spec.backup.target Main, and with PreferReplica when no replica is proven caught up, the
// backup is taken on the MAIN, and the status says why.
func TestBackupOnTheMain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(r *backupRig)
		reason string
	}{
		{"target Main", func(r *backupRig) {
			r.editCluster(func(spec, _ map[string]any) { spec["backup"].(map[string]any)["target"] = "Main" })
		}, "spec.backup.target is Main"},
		{"no replica caught up", func(r *backupRig) {
			for _, pod := range []string{"memgraph-data-1", "memgraph-data-2"} {
				r.h.must(r.h.world.SetLag(r.h.hostOf(pod), "memgraph", 2))
			}
		}, "no Sync or StrictSync replica is proven caught up with the MAIN instance_0 (instance_1 is 2 transactions behind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newBackupRig(t)
			r.h.must(r.h.world.Commit("memgraph", 5))
			tc.setup(r)
			st := r.untilDone(r.mgb("nightly", v1alpha1.BackupRetain)).Status
			if st.Phase != v1alpha1.BackupCompleted || st.Instance != "instance_0" || st.InstanceRole != "MAIN" || !strings.Contains(st.InstanceReason, tc.reason) {
				t.Fatalf("status %s on %s (%s): %q, %s; want Completed on the MAIN instance_0 saying %q", st.Phase, st.Instance,
					st.InstanceRole, st.InstanceReason, st.Error, tc.reason)
			}
		})
	}
}

// A bucket that does not exist fails the backup with the store's own words, before anything is
// snapshotted, once: it is never retried.
func TestBackupToAMissingBucketFailsWithTheStoresError(t *testing.T) {
	r := newBackupRig(t)
	r.editCluster(func(spec, _ map[string]any) {
		spec["backup"] = map[string]any{"destination": map[string]any{"s3": r.destination("no-such-bucket")}}
	})
	b := r.mgb("nightly", v1alpha1.BackupRetain)
	st := r.untilDone(b).Status
	if st.Phase != v1alpha1.BackupFailed || st.Reason != "UploadFailed" || !strings.Contains(st.Error, "NoSuchBucket") ||
		st.Bucket != "no-such-bucket" {
		t.Fatalf("status %+v, want Failed, UploadFailed, with NoSuchBucket", st)
	}
	taken := snapshotsTaken(r.h.world)
	if len(taken) != 0 {
		t.Errorf("snapshots %v taken for a bucket that does not exist", taken)
	}
	if again := r.call(b, false); again.Status.Phase != v1alpha1.BackupFailed || !cmp.Equal(snapshotsTaken(r.h.world), taken) {
		t.Errorf("a failed backup called again: %+v, snapshots %v (were %v): want it failed and not retried", again.Status, snapshotsTaken(r.h.world), taken)
	}
}

// A backup waits, touching nothing, for its cluster, an awake cluster, its Secrets and the
// other backups of its cluster.
func TestBackupWaitsAndTouchesNothing(t *testing.T) {
	r := newBackupRig(t)
	for _, tc := range []struct {
		name   string
		setup  func()
		undo   func()
		reason string
	}{
		{"no such cluster", func() {}, func() {}, "ClusterNotFound"},
		{"hibernated cluster", func() { r.h.spec["hibernate"] = true }, func() { delete(r.h.spec, "hibernate") }, "ClusterHibernated"},
		{"no destination", func() { r.editCluster(func(spec, _ map[string]any) { delete(spec, "backup") }) },
			func() {
				r.editCluster(func(spec, _ map[string]any) {
					spec["backup"] = map[string]any{"destination": map[string]any{"s3": r.destination(testBucket)}}
				})
			}, "NoDestination"},
		{"missing credentials Secret", func() { r.editCluster(func(_, secrets map[string]any) { delete(secrets, backupNS+"/"+s3CredsSecret) }) },
			func() { r.editCluster(func(_, secrets map[string]any) { maps.Copy(secrets, r.storeSecrets()) }) }, "SecretProblem"},
		{"an older backup of the cluster is not done", func() {
			older := r.mgb("earlier", v1alpha1.BackupRetain)
			older["metadata"].(map[string]any)["creationTimestamp"] = r.created.Add(-time.Hour).Format(time.RFC3339)
			r.others[backupNS+"/earlier"] = older
		}, func() { delete(r.others, backupNS+"/earlier") }, "BackupRunning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := r.mgb("nightly", v1alpha1.BackupRetain)
			if tc.name == "no such cluster" {
				b["spec"].(map[string]any)["cluster"] = "other"
			}
			tc.setup()
			defer tc.undo()
			r.h.world.ResetLog()
			a := r.call(b, false)
			if a.Status.Phase != v1alpha1.BackupPending || a.Status.Reason != tc.reason || a.Status.Error == "" || a.ResyncAfterSeconds <= 0 {
				t.Errorf("answer %+v, want Pending, %s, a message, and a call again", a, tc.reason)
			}
			if q := r.h.world.Queries(); len(q) != 0 {
				t.Errorf("a waiting backup sent %v", q)
			}
		})
	}
}

// Deleting a backup: with Delete every object goes before the finalizer does; with Retain they
// stay.
func TestBackupDeletionPolicy(t *testing.T) {
	r := newBackupRig(t)
	r.h.must(r.h.world.Commit("tenant_a", 1))
	for _, policy := range []v1alpha1.BackupDeletionPolicy{v1alpha1.BackupRetain, v1alpha1.BackupDelete} {
		t.Run(string(policy), func(t *testing.T) {
			b := r.mgb("b-"+strings.ToLower(string(policy)), policy)
			st := r.untilDone(b).Status
			if st.Phase != v1alpha1.BackupCompleted || len(st.Databases) != 2 {
				t.Fatalf("phase %s, %d databases: %s", st.Phase, len(st.Databases), st.Error)
			}
			if a := r.call(b, true); !a.Finalized {
				t.Fatalf("finalize answered %+v, want finalized", a)
			}
			for _, d := range st.Databases {
				if _, _, present := r.object(d.Key); present != (policy == v1alpha1.BackupRetain) {
					t.Errorf("object %s present %v after deletion with %s", d.Key, present, policy)
				}
			}
			if again := r.call(b, true); !again.Finalized {
				t.Errorf("a second finalize call answered %+v, want finalized", again)
			}
		})
	}
}

// A replica chosen for the backup that is MAIN when its agent starts is not snapshotted: the
// backup fails with RoleChanged, and nothing is uploaded.
func TestBackupFailsWhenTheChosenInstanceChangedRole(t *testing.T) {
	r := newBackupRig(t)
	tap := &tapConnector{inner: r.h.pool, afterLag: func() {
		id, ok := r.h.world.Leader()
		if !ok {
			t.Fatal("no leader")
		}
		leader := r.h.pool.Client(r.h.network().Coordinator(id).BoltServer)
		ctx := context.Background()
		r.h.must(leader.DemoteInstance(ctx, "instance_0"))
		r.h.must(leader.SetInstanceToMain(ctx, "instance_1"))
	}}
	r.h.handler = hooks.NewHandler(hooks.Config{Connector: tap, SyncBudget: 5 * time.Second, AgentResolver: r.farm.resolver(), Now: time.Now})
	st := r.untilDone(r.mgb("nightly", v1alpha1.BackupRetain)).Status
	if st.Phase != v1alpha1.BackupFailed || st.Reason != "RoleChanged" || st.Instance != "instance_0" ||
		!strings.Contains(st.Error, "chosen as main and is replica now") {
		t.Fatalf("status %+v, want Failed, RoleChanged, on instance_0", st)
	}
	if taken := snapshotsTaken(r.h.world); len(taken) != 0 {
		t.Errorf("snapshots taken: %v", taken)
	}
	objects, err := r.store.Mem.ListBucket(testBucket, nil, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects.Contents) != 0 {
		t.Errorf("objects %v uploaded, want none", objects.Contents)
	}
}

// A snapshot that takes longer than a sync runs beside Memgraph: the backup is Running
// (Snapshotting) meanwhile, and the MemgraphCluster's converged sync still sends one query.
func TestConvergedSyncOfAClusterBeingBackedUpIssuesOneQuery(t *testing.T) {
	r := newBackupRig(t, withWorld(sim.WithSnapshotCost(sim.SnapshotCost{BytesPerTransaction: 1 << 20, WritePerGiB: time.Hour})))
	r.h.must(r.h.world.Commit("memgraph", 10)) // a 10 MiB snapshot: 35 s of simulated time
	b := r.mgb("nightly", v1alpha1.BackupRetain)
	st := r.call(b, false).Status
	for deadline := time.Now().Add(5 * time.Second); !r.h.world.SnapshotRunning(r.h.hostOf("memgraph-data-1"), "memgraph"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot is being written: %+v", st)
		}
	}
	if st = r.call(b, false).Status; st.Phase != v1alpha1.BackupRunning || st.Reason != "Snapshotting" || st.Instance != "instance_1" {
		t.Fatalf("status %+v, want Running, Snapshotting on instance_1", st)
	}
	r.h.world.ResetLog()
	for range 3 {
		r.h.sync()
		r.h.assertConverged()
	}
	var queries []string
	for _, q := range r.h.world.Queries() {
		queries = append(queries, q.Host+": "+q.Text)
	}
	want := []string{}
	for range 3 {
		want = append(want, r.h.network().Coordinator(1).Host+": SHOW INSTANCES")
	}
	if diff := cmp.Diff(want, queries); diff != "" {
		t.Errorf("queries of three converged syncs while a backup is taken (-want +got):\n%s", diff)
	}
	r.h.advance(time.Minute)
	if st := r.untilDone(b).Status; st.Phase != v1alpha1.BackupCompleted || st.Size < 10<<20 {
		t.Errorf("the backup once the snapshot is written: %s, %d bytes (%s)", st.Phase, st.Size, st.Error)
	}
}

// A pod whose agent restarts while it takes the backup (the pod was replaced) loses the job:
// the backup goes back to Pending (AgentRestarted), the objects the lost job uploaded are
// removed, and the backup is taken again and completes. Past its deadline a lost job fails it.
func TestABackupWhoseAgentRestartedIsTakenAgain(t *testing.T) {
	r := newBackupRig(t, withWorld(sim.WithSnapshotCost(sim.SnapshotCost{BytesPerTransaction: 1 << 20, WritePerGiB: time.Hour})))
	r.h.must(r.h.world.Commit("memgraph", 2))
	b := r.mgb("first", v1alpha1.BackupRetain)
	if st := r.call(b, false).Status; st.Phase != v1alpha1.BackupRunning {
		t.Fatalf("status %+v, want Running", st)
	}
	// What the lost job had uploaded of a database before its pod went.
	const partial = "prod/default/memgraph/first/databases/tenant_a/20261206000000000000_timestamp_3"
	r.store.Tamper(t, testBucket, partial, []byte("a snapshot of tenant_a"))
	status := b["status"].(map[string]any)
	status["databases"] = []any{map[string]any{"name": "tenant_a", "key": partial, "size": 22}}
	r.farm.restart(r.h.hostOf("memgraph-data-1"))
	a := r.call(b, false)
	if st := a.Status; st.Phase != v1alpha1.BackupPending || st.Reason != "AgentRestarted" || !strings.Contains(st.Error, "taken again from its start") {
		t.Fatalf("status %+v, want Pending, AgentRestarted", st)
	}
	if a.ResyncAfterSeconds < planner.PendingPollMin.Seconds() {
		t.Errorf("resyncAfterSeconds %v, want a pending poll of at least %v", a.ResyncAfterSeconds, planner.PendingPollMin)
	}
	if _, _, ok := r.object(partial); ok {
		t.Errorf("the lost job's object %s is still in the store", partial)
	}
	r.h.advance(time.Minute) // the snapshot the first job started is written
	st := r.untilDone(b).Status
	if st.Phase != v1alpha1.BackupCompleted {
		t.Fatalf("the backup taken again: %s (%s: %s)", st.Phase, st.Reason, st.Error)
	}
	if _, _, ok := r.object(st.Key); !ok {
		t.Errorf("the completed backup's object %s is not in the store", st.Key)
	}

	late := r.mgb("late", v1alpha1.BackupRetain)
	if st := r.call(late, false).Status; st.Phase != v1alpha1.BackupRunning {
		t.Fatalf("status %+v, want Running", st)
	}
	r.farm.restart(r.h.hostOf(podOf(t, late)))
	// The same backup six hours on: its deadline, as its creation and status say, has passed.
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	late["metadata"].(map[string]any)["creationTimestamp"] = time.Now().Add(-6*time.Hour - time.Minute).UTC().Format(time.RFC3339)
	late["status"].(map[string]any)["deadline"] = past
	if st := r.call(late, false).Status; st.Phase != v1alpha1.BackupFailed || st.Reason != "DeadlineExceeded" ||
		!strings.Contains(st.Error, "did not complete by its deadline") {
		t.Fatalf("a lost job past the deadline: %+v, want Failed, DeadlineExceeded", st)
	}
}

// podOf is the pod backup b is taken on, as its status says.
func podOf(t *testing.T, b map[string]any) string {
	t.Helper()
	pod, _ := b["status"].(map[string]any)["pod"].(string)
	if pod == "" {
		t.Fatalf("backup %v names no pod", b["status"])
	}
	return pod
}

// A new cluster with bootstrap.fromBackup restores every database of the backup into its first
// MAIN before any data instance is registered: Restoring, with the restore's progress, then every
// write the backup held is on the MAIN and, once the replicas are registered, on every replica;
// status.restoredFrom names the backup.
func TestRestoreANewClusterFromABackup(t *testing.T) {
	r := newBackupRig(t)
	r.h.must(r.h.world.Commit("memgraph", 11))
	r.h.must(r.h.world.Commit("tenant_a", 4))
	b := r.mgb("nightly", v1alpha1.BackupRetain)
	if st := r.untilDone(b).Status; st.Phase != v1alpha1.BackupCompleted {
		t.Fatalf("backup %s: %s", st.Phase, st.Error)
	}
	n, _ := r.restoringCluster(b)
	resp := n.sync() // the StatefulSets: the pods start
	var restoring map[string]any
	for deadline := time.Now().Add(10 * time.Second); resp.Status["restoredFrom"] == nil; resp = n.sync() {
		if r, ok := resp.Status["restore"].(map[string]any); ok && resp.Status["phase"] == "Restoring" {
			restoring = r
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restored after 10 s: %v", resp.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if restoring["source"] != "MemgraphBackup nightly" || restoring["instance"] != "instance_0" || !strings.Contains(fmt.Sprint(restoring["note"]), "users and roles") {
		t.Errorf("status.restore while restoring: %v", restoring)
	}
	if resp.Status["restoredFrom"] != "MemgraphBackup nightly" || resp.Status["restore"] != nil {
		t.Errorf("restoredFrom %v, restore %v", resp.Status["restoredFrom"], resp.Status["restore"])
	}
	for range 5 {
		n.sync()
	}
	n.assertConverged()
	for _, pod := range []string{"memgraph-data-0", "memgraph-data-1", "memgraph-data-2"} {
		if diff := cmp.Diff(map[string]int64{"memgraph": 11, "tenant_a": 4}, n.world.Committed(n.hostOf(pod))); diff != "" {
			t.Errorf("%s holds (-want +got):\n%s", pod, diff)
		}
	}
}

// A restore whose backup is not there holds every data instance unregistered and says why.
func TestRestoreWaitsForItsBackup(t *testing.T) {
	n := newHarness(t, 3, 2)
	n.spec["bootstrap"] = map[string]any{"fromBackup": map[string]any{"name": "nightly"}}
	n.spec["backup"] = map[string]any{"destination": map[string]any{"s3": map[string]any{"endpoint": "https://s3.example.com", "bucket": testBucket,
		"credentialsSecret": map[string]any{"name": s3CredsSecret}}}}
	n.sync()
	n.sync()
	resp := n.sync()
	st, reason, msg := n.condition(v1alpha1.ConditionConverged)
	if resp.Status["phase"] != "Restoring" || st != "False" || reason != v1alpha1.ReasonRegistrationInProgress ||
		!strings.Contains(msg, "MemgraphBackup default/nightly") {
		t.Errorf("phase %v, Converged %s %s: %s; want Restoring and the missing backup named", resp.Status["phase"], st, reason, msg)
	}
	if restore, _ := resp.Status["restore"].(map[string]any); restore["phase"] != "Pending" || !strings.Contains(fmt.Sprint(restore["message"]), "does not exist") {
		t.Errorf("status.restore %v, want Pending and why", resp.Status["restore"])
	}
	for _, q := range n.world.Queries() {
		if strings.HasPrefix(q.Text, "REGISTER INSTANCE") || strings.HasPrefix(q.Text, "RECOVER") {
			t.Errorf("sent %q while the backup is missing", q.Text)
		}
	}
}

// A cluster that restores a MemgraphBackup by name reads the backup's status (phase, key, store)
// from the request's one decode: a sync decodes its body once. A backup in another store than
// the cluster's is refused, naming its key, which only its status says.
func TestARestoreReadsItsBackupFromTheOneDecode(t *testing.T) {
	n := newHarness(t, 3, 2)
	n.spec["bootstrap"] = map[string]any{"fromBackup": map[string]any{"name": "nightly"}}
	n.spec["backup"] = map[string]any{"destination": map[string]any{"s3": map[string]any{"endpoint": "https://s3.example.com", "bucket": testBucket,
		"credentialsSecret": map[string]any{"name": s3CredsSecret}}}}
	n.related = map[string]map[string]any{"MemgraphBackup.memgraph.com/v1alpha1": {backupNS + "/nightly": map[string]any{
		"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphBackup", "metadata": map[string]any{"name": "nightly", "namespace": backupNS},
		"status": map[string]any{"phase": "Completed", "key": "prod/snap_timestamp_7", "endpoint": "https://s3.example.com", "bucket": "elsewhere",
			"size": 12, "databases": []any{map[string]any{"name": "memgraph", "key": "prod/snap_timestamp_7", "size": 12}}}}}}
	n.sync()
	before := wire.BodyDecodes()
	resp := n.sync()
	if decodes := wire.BodyDecodes() - before; decodes != 1 {
		t.Errorf("a sync of a restoring cluster decoded its body %d times, want once", decodes)
	}
	restore, _ := resp.Status["restore"].(map[string]any)
	if msg := fmt.Sprint(restore["message"]); restore["phase"] != "Pending" || !strings.Contains(msg, "is in bucket elsewhere at https://s3.example.com") ||
		!strings.Contains(msg, `fromBackup.key "prod/snap_timestamp_7"`) {
		t.Errorf("status.restore %v, want Pending, naming the backup's store and key", resp.Status["restore"])
	}
}

type relatedRules struct {
	RelatedResources []struct {
		APIVersion    string   `json:"apiVersion"`
		Resource      string   `json:"resource"`
		Namespace     string   `json:"namespace"`
		Names         []string `json:"names"`
		LabelSelector *struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"labelSelector"`
	} `json:"relatedResources"`
}

// customizeRules posts a customize request for parent to path and lists what it asks for, as
// "resource names" or "resource selector".
func customizeRules(t *testing.T, handler http.Handler, path string, parent map[string]any) []string {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"controller": map[string]any{}, "parent": parent})
	code, body := postRaw(handler, path, raw)
	if code != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, code, body)
	}
	var rules relatedRules
	if err := json.Unmarshal(body, &rules); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rules.RelatedResources {
		what := strings.Join(r.Names, ",")
		if r.LabelSelector != nil {
			what = fmt.Sprintf("selector %v", r.LabelSelector.MatchLabels)
		}
		out = append(out, r.Namespace+" "+r.Resource+" "+what)
	}
	return out
}

// No customize hook asks for every Secret of the namespace. A MemgraphBackup asks for its
// cluster, the cluster's pods, the cluster's backup-agent Secret (by name), the namespace's
// MemgraphBackups and, when a schedule owns it, that schedule; a cluster asks, besides its own,
// for the Secrets its spec.backup.destination names and the MemgraphBackup it restores, by name;
// a MemgraphUser for its cluster, the cluster's user-access Secret and its password Secret.
func TestCustomizeAsksOnlyForTheSecretsTheClusterNames(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{})
	r := &backupRig{created: time.Now()}
	b := r.mgb("nightly-1", v1alpha1.BackupRetain)
	b["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "memgraph.com/v1alpha1",
		"kind": "MemgraphScheduledBackup", "name": "nightly", "uid": "uid-s", "controller": true}}
	got := customizeRules(t, handler, "/backup/customize", b)
	want := []string{
		"default memgraphclusters memgraph",
		"default pods selector map[app.kubernetes.io/instance:memgraph app.kubernetes.io/name:memgraph]",
		"default secrets memgraph-backup-agent",
		"default memgraphbackups selector map[]",
		"default memgraphscheduledbackups nightly",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/backup/customize (-want +got):\n%s", diff)
	}
	cluster := map[string]any{"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphCluster",
		"metadata": map[string]any{"name": "restored", "namespace": "default"},
		"spec": map[string]any{"bootstrap": map[string]any{"fromBackup": map[string]any{"name": "nightly"}},
			"backup": map[string]any{"destination": map[string]any{"s3": map[string]any{"endpoint": "https://s3.example.com", "bucket": "b-1",
				"credentialsSecret": map[string]any{"name": s3CredsSecret}, "caSecret": map[string]any{"name": s3CASecret}}}}}}
	got = customizeRules(t, handler, "/customize", cluster)
	if len(got) < 2 || !cmp.Equal(got[len(got)-2:], []string{"default secrets s3-credentials,s3-ca", "default memgraphbackups nightly"}) {
		t.Errorf("/customize of a restoring cluster asks for %v, want its store's Secrets and MemgraphBackup nightly last", got)
	}
	for _, rule := range got {
		if strings.Contains(rule, "secrets selector") {
			t.Errorf("/customize asks for %q", rule)
		}
	}
	user := map[string]any{"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphUser",
		"metadata": map[string]any{"name": "app", "namespace": "default"},
		"spec":     map[string]any{"cluster": "memgraph", "passwordSecret": map[string]any{"name": "app-pw"}}}
	got = customizeRules(t, handler, "/user/customize", user)
	if want := []string{"default memgraphclusters memgraph", "default secrets memgraph-user-access,app-pw"}; !cmp.Equal(want, got) {
		t.Errorf("/user/customize asks for %v, want %v", got, want)
	}
}

// Agents that do not answer leave the backup Pending, and nothing is snapshotted.
func TestBackupWaitsForAnUnreachableAgent(t *testing.T) {
	r := newBackupRig(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := closed.Addr().String()
	_ = closed.Close()
	r.h.handler = hooks.NewHandler(hooks.Config{Connector: r.h.pool, SyncBudget: 5 * time.Second, Now: time.Now,
		AgentResolver: memgraph.ResolverFunc(func(string) string { return dead })})
	a := r.call(r.mgb("nightly", v1alpha1.BackupRetain), false)
	if a.Status.Phase != v1alpha1.BackupPending || a.Status.Reason != "AgentUnreachable" || a.ResyncAfterSeconds <= 0 {
		t.Errorf("answer %+v, want Pending, AgentUnreachable, a call again", a)
	}
	if taken := snapshotsTaken(r.h.world); len(taken) != 0 {
		t.Errorf("snapshots %v taken while no agent answers, want none", taken)
	}
}

// A backup whose first answer was lost (the next request carries no status) adopts the job that
// call started, found on its instance's agent: the status names the instance, why it was chosen,
// its snapshot and the start as the agent recorded them, and no second snapshot is taken.
func TestBackupAdoptsTheJobOfALostAnswer(t *testing.T) {
	r := newBackupRig(t, withWorld(sim.WithSnapshotCost(sim.SnapshotCost{BytesPerTransaction: 1 << 20, WritePerGiB: time.Hour})))
	r.h.must(r.h.world.Commit("memgraph", 7))
	b := r.mgb("nightly", v1alpha1.BackupRetain)
	first := r.call(b, false).Status
	if first.Phase != v1alpha1.BackupRunning || first.Instance != "instance_1" {
		t.Fatalf("first call: %+v, want Running on instance_1", first)
	}
	delete(b, "status") // Metacontroller never stored the first answer
	r.h.advance(time.Minute)
	st := r.untilDone(b).Status
	if st.Phase != v1alpha1.BackupCompleted || st.Instance != first.Instance || st.InstanceRole != "REPLICA" ||
		st.InstanceReason != first.InstanceReason || !st.StartedAt.Equal(first.StartedAt) || st.SnapshotTimestamp != 7 {
		t.Errorf("adopted backup's status %+v, want the first call's instance, reason and start", st)
	}
	if taken := snapshotsTaken(r.h.world); taken[r.h.hostOf("memgraph-data-1")] != 1 || len(taken) != 1 {
		t.Errorf("snapshots %v, want the one the first call's job took", taken)
	}
}

// restoringCluster is a new 3+3 cluster, with data directories and agents, that restores the
// MemgraphBackup b (spec.bootstrap.fromBackup.name) from the rig's store, its own
// spec.backup.destination (as the rig's cluster names it), with the rig's Secrets.
func (r *backupRig) restoringCluster(b map[string]any) (*harness, *agentFarm) {
	n, farm := newHarnessWithAgents(r.t, 3, 3)
	name := b["metadata"].(map[string]any)["name"].(string)
	n.spec["bootstrap"] = map[string]any{"fromBackup": map[string]any{"name": name}}
	n.spec["backup"] = r.h.spec["backup"]
	n.secrets = r.storeSecrets()
	n.related = map[string]map[string]any{"MemgraphBackup.memgraph.com/v1alpha1": {backupNS + "/" + name: b}}
	return n, farm
}

// withCASecret names the rig's CA Secret as the cluster's destination's caSecret.
func (r *backupRig) withCASecret() {
	r.editCluster(func(spec, _ map[string]any) {
		s3 := r.destination(testBucket)
		s3["caSecret"] = map[string]any{"name": s3CASecret}
		spec["backup"] = map[string]any{"destination": map[string]any{"s3": s3}}
	})
}

// A store whose certificate a private CA signed: a backup of a cluster whose destination names
// the CA (caSecret) uploads; one that does not fails on the store's certificate. A restore from it fetches the objects with
// that CA too (the agent does, not Memgraph).
func TestBackupAndRestoreWithAStoreOfAPrivateCA(t *testing.T) {
	r := newBackupRigWithPrivateCA(t)
	r.h.must(r.h.world.Commit("memgraph", 3))
	if st := r.untilDone(r.mgb("untrusted", v1alpha1.BackupRetain)).Status; st.Phase != v1alpha1.BackupFailed ||
		!strings.Contains(st.Error, "certificate") {
		t.Errorf("a backup to the store without its CA: %s (%s), want Failed on the store's certificate", st.Phase, st.Error)
	}
	r.withCASecret()
	b := r.mgb("nightly", v1alpha1.BackupRetain)
	st := r.untilDone(b).Status
	if st.Phase != v1alpha1.BackupCompleted {
		t.Fatalf("a backup with caSecret: %s (%s: %s), want Completed", st.Phase, st.Reason, st.Error)
	}
	n, _ := r.restoringCluster(b)
	resp := n.sync()
	for deadline := time.Now().Add(10 * time.Second); resp.Status["restoredFrom"] == nil; resp = n.sync() {
		if time.Now().After(deadline) {
			_, _, msg := n.condition(v1alpha1.ConditionConverged)
			t.Fatalf("not restored after 10 s: %s", msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := n.world.Committed(n.hostOf("memgraph-data-0"))["memgraph"]; got != 3 {
		t.Errorf("the restored MAIN holds %d, want 3", got)
	}
}

// A backup whose cluster is deleted while its job runs fails as ClusterNotFound, naming the
// cluster and the instance, and nothing is retried.
func TestBackupFailsWhenItsClusterGoesMidJob(t *testing.T) {
	r := newBackupRig(t)
	b := r.mgb("nightly", v1alpha1.BackupRetain)
	b["spec"].(map[string]any)["cluster"] = "deleted"
	b["status"] = map[string]any{"phase": "Running", "reason": "Uploading", "instance": "instance_0", "pod": "deleted-data-0"}
	st := r.call(b, false).Status
	if st.Phase != v1alpha1.BackupFailed || st.Reason != "ClusterNotFound" ||
		!strings.Contains(st.Error, "cluster deleted") || !strings.Contains(st.Error, "instance_0") {
		t.Errorf("status %+v, want Failed, ClusterNotFound, naming the cluster and the instance", st)
	}
	if taken := snapshotsTaken(r.h.world); len(taken) != 0 {
		t.Errorf("snapshots %v taken, want none", taken)
	}
}

// An instance to restore into that holds data of its own (here, a later backup recovered by
// hand) is never overwritten: the restore fails for good, saying so, and registration stays
// held; once spec.bootstrap.fromBackup is removed, the hook registers the data instances and makes
// that instance the first MAIN, on the data it holds.
func TestARestoreNeverOverwritesDataThenFromBackupRemoved(t *testing.T) {
	r := newBackupRig(t)
	r.h.must(r.h.world.Commit("memgraph", 5))
	b := r.mgb("nightly", v1alpha1.BackupRetain)
	if st := r.untilDone(b).Status; st.Phase != v1alpha1.BackupCompleted {
		t.Fatalf("backup %s: %s", st.Phase, st.Error)
	}
	r.h.must(r.h.world.Commit("memgraph", 3))
	later := r.untilDone(r.mgb("later", v1alpha1.BackupRetain)).Status
	if later.Phase != v1alpha1.BackupCompleted || later.SnapshotTimestamp != 8 {
		t.Fatalf("the later backup %s at %d: %s", later.Phase, later.SnapshotTimestamp, later.Error)
	}
	n, _ := r.restoringCluster(b)
	n.spec["preferredMain"] = "instance_1"
	n.sync() // the StatefulSets: the pods start, nothing is registered
	byHand := memgraph.S3Config{Region: "us-east-1", AccessKey: "test", SecretKey: "test-secret", EndpointURL: r.store.URL}
	target := n.pool.Snapshots(n.network().DataInstance(1).BoltServer, nil, memgraph.Credentials{})
	if err := target.RecoverSnapshot(context.Background(), "", "s3://"+testBucket+"/"+later.Key, &byHand); err != nil {
		t.Fatalf("RECOVER SNAPSHOT by hand: %v", err)
	}
	var msg string
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(msg, "already holds data"); _, _, msg = n.condition(v1alpha1.ConditionConverged) {
		n.sync()
		if time.Now().After(deadline) {
			t.Fatalf("Converged says %q, want the restore refused: the instance holds data", msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if restore, _ := n.lastResp.Status["restore"].(map[string]any); restore["phase"] != "Failed" {
		t.Errorf("status.restore %v, want Failed", restore)
	}
	delete(n.spec, "bootstrap")
	for range 6 {
		n.sync()
	}
	n.assertConverged()
	if main := n.lastResp.Status["main"]; main != "instance_1" {
		t.Errorf("MAIN %v, want instance_1, the instance that holds data", main)
	}
	for _, pod := range []string{"memgraph-data-0", "memgraph-data-1", "memgraph-data-2"} {
		if got := n.world.Committed(n.hostOf(pod))["memgraph"]; got != 8 {
			t.Errorf("%s holds %d committed transactions, want the 8 recovered by hand", pod, got)
		}
	}
}

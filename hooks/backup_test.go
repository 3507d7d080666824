package hooks_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const (
	testBucket     = "backups"
	agentToken     = "agent-token-0123456789abcdef"
	backupNS       = "default"
	s3CredsSecret  = "s3-credentials"
	s3CASecret     = "s3-ca"
	snapshotsQuery = "CREATE SNAPSHOT"
)

// backupRig is a converged cluster on the simulator, each data instance with a data directory,
// the real backup agent of every data pod (one HTTPS listener, routed by the advertised host,
// with the cluster's agent certificate), and an in-process S3 store with one bucket.
type backupRig struct {
	t        *testing.T
	h        *harness
	mem      *s3mem.Backend
	endpoint string
	agentTLS backup.AgentTLS
	mu       sync.Mutex
	agents   map[string]*backup.Agent
	others   map[string]any // other MemgraphBackups of the namespace, by v2 key
	noSecret bool           // leave out the destination's credentials Secret
	storeCA  string         // the store's CA (PEM), in Secret s3CASecret; "" when it serves HTTP
	resolve  memgraph.Resolver
}

type staticTokens [][]byte

func (s staticTokens) Tokens() [][]byte { return s }

func newBackupRig(t *testing.T) *backupRig {
	t.Helper()
	return newBackupRigOn(t, false)
}

// newBackupRigWithPrivateCA is a backup rig whose store serves HTTPS with a certificate of a CA
// no system trusts, given as the Secret s3CASecret.
func newBackupRigWithPrivateCA(t *testing.T) *backupRig {
	t.Helper()
	return newBackupRigOn(t, true)
}

func newBackupRigOn(t *testing.T, https bool) *backupRig {
	t.Helper()
	r := &backupRig{t: t, mem: s3mem.New(), agents: map[string]*backup.Agent{}, others: map[string]any{}}
	if err := r.mem.CreateBucket(testBucket); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewUnstartedServer(gofakes3.New(r.mem).Server())
	if https {
		s3.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
		s3.StartTLS()
		r.storeCA = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s3.Certificate().Raw}))
	} else {
		s3.Start()
	}
	t.Cleanup(s3.Close)
	r.endpoint = s3.URL
	root := t.TempDir()
	var hosts []string
	n := topology.Network{Cluster: "memgraph", Namespace: backupNS, ClusterDomain: "cluster.local"}
	for i := range 3 {
		hosts = append(hosts, n.DataInstance(i).Host)
	}
	var err error
	if r.agentTLS, err = backup.NewAgentTLS(hosts); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(r.agentTLS.Cert, r.agentTLS.Key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		host, _, _ := net.SplitHostPort(req.Host)
		r.agent(filepath.Join(root, host, "snapshots"), host).Handler().ServeHTTP(w, req)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	agentAddr := srv.Listener.Addr().String()
	resolve := memgraph.ResolverFunc(func(address string) string {
		if strings.HasSuffix(address, ":8443") {
			return agentAddr
		}
		return address
	})
	r.resolve = resolve
	r.h = newHarness(t, 3, 2, func(c *harnessConfig) { c.hook.AgentResolver = resolve })
	r.h.dataRoot = root
	r.h.bootstrap()
	r.h.sync()
	r.h.assertConverged()
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, a := range r.agents {
			a.Close()
		}
	})
	return r
}

// agent is the backup agent of host, serving dir.
func (r *backupRig) agent(dir, host string) *backup.Agent {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.agents[host]; ok {
		return a
	}
	a, err := backup.NewAgent(backup.AgentConfig{SnapshotDir: dir, Tokens: staticTokens{[]byte(agentToken)}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.agents[host] = a
	return a
}

func secretOf(name string, data map[string]string) map[string]any {
	enc := map[string]any{}
	for k, v := range data {
		enc[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name, "namespace": backupNS}, "data": enc}
}

// mgb is a MemgraphBackup of the rig's cluster, to bucket.
func mgb(name, bucket string, policy topology.BackupDeletionPolicy) map[string]any {
	return map[string]any{
		"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphBackup",
		"metadata": map[string]any{"name": name, "namespace": backupNS, "uid": "uid-" + name, "generation": 1,
			"creationTimestamp": "2026-01-01T00:00:00Z"},
		"spec": map[string]any{"cluster": "memgraph", "deletionPolicy": string(policy), "destination": map[string]any{"s3": map[string]any{
			"endpoint": "", "bucket": bucket, "prefix": "prod", "credentialsSecret": map[string]any{"name": s3CredsSecret}}}},
	}
}

// request is the request Metacontroller sends for b, its status as last answered.
func (r *backupRig) request(b map[string]any, finalizing bool) map[string]any {
	b["spec"].(map[string]any)["destination"].(map[string]any)["s3"].(map[string]any)["endpoint"] = r.endpoint
	pods := map[string]any{}
	for pod := range r.h.pods {
		pods[backupNS+"/"+pod] = r.h.podObject(pod)
	}
	secrets := map[string]any{
		backupNS + "/memgraph-backup-agent": secretOf("memgraph-backup-agent", map[string]string{
			"token": agentToken, "ca.crt": string(r.agentTLS.CA), "tls.crt": string(r.agentTLS.Cert), "tls.key": string(r.agentTLS.Key)}),
	}
	if !r.noSecret {
		secrets[backupNS+"/"+s3CredsSecret] = secretOf(s3CredsSecret, map[string]string{"accessKeyId": "test", "secretAccessKey": "test-secret"})
	}
	if r.storeCA != "" {
		secrets[backupNS+"/"+s3CASecret] = secretOf(s3CASecret, map[string]string{"ca.crt": r.storeCA})
	}
	return map[string]any{
		"controller": map[string]any{"kind": "CompositeController"},
		"parent":     b,
		"children":   map[string]any{},
		"related": map[string]any{
			"MemgraphCluster.memgraph.com/v1alpha1": map[string]any{backupNS + "/memgraph": r.h.parent()},
			"Pod.v1":                                pods,
			"Secret.v1":                             secrets,
			"MemgraphBackup.memgraph.com/v1alpha1":  r.others,
		},
		"finalizing": finalizing,
	}
}

type backupAnswer struct {
	Status             topology.MemgraphBackupStatus `json:"status"`
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

// untilDone calls b's sync until its phase is final.
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
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *backupRig) object(key string) (int64, bool) {
	obj, err := r.mem.HeadObject(testBucket, key)
	if err != nil {
		return 0, false
	}
	return obj.Size, true
}

func (r *backupRig) snapshotsTaken() int {
	n := 0
	for _, q := range r.h.world.Queries() {
		if q.Text == snapshotsQuery {
			n++
		}
	}
	return n
}

// A backup takes a snapshot on the MAIN, which the MAIN's agent uploads: the status names the
// instance, the version, the snapshot's timestamp (every committed write) and the object, whose
// size is the object's in the bucket. Called again, a completed backup takes nothing more.
func TestBackupSnapshotsTheMainAndUploadsIt(t *testing.T) {
	r := newBackupRig(t)
	if err := r.h.world.Commit("memgraph", 7); err != nil {
		t.Fatal(err)
	}
	b := mgb("nightly", testBucket, topology.BackupRetain)
	a := r.untilDone(b)
	st := a.Status
	if st.Phase != topology.BackupCompleted {
		t.Fatalf("phase %s (%s: %s), want Completed", st.Phase, st.Reason, st.Error)
	}
	wantKey := "prod/default/memgraph/nightly/" + filepath.Base(st.Snapshot)
	if diff := cmp.Diff(topology.MemgraphBackupStatus{ObservedGeneration: 1, Phase: topology.BackupCompleted, Reason: "Completed",
		Instance: "instance_0", Pod: "memgraph-data-0", MemgraphVersion: "3.12.0", SnapshotTimestamp: 7, Key: wantKey, Size: st.Size,
		Snapshot: st.Snapshot, StartedAt: st.StartedAt, CompletedAt: st.CompletedAt}, st); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if st.StartedAt == nil || st.CompletedAt == nil || !strings.HasPrefix(st.Snapshot, r.h.dataDir(r.h.hostOf("memgraph-data-0"))) {
		t.Errorf("startedAt %v, completedAt %v, snapshot %q: want both times and a file of the MAIN", st.StartedAt, st.CompletedAt, st.Snapshot)
	}
	if size, ok := r.object(wantKey); !ok || size != st.Size || size == 0 {
		t.Errorf("object %s: size %d, present %v; status says %d", wantKey, size, ok, st.Size)
	}
	taken := r.snapshotsTaken()
	if again := r.call(b, false); !cmp.Equal(again.Status, st) || r.snapshotsTaken() != taken {
		t.Errorf("a completed backup called again: %+v and %d snapshots, want it unchanged and %d", again.Status, r.snapshotsTaken(), taken)
	}
}

// A bucket that does not exist fails the backup with the store's own words, once: it is never
// retried.
func TestBackupToAMissingBucketFailsWithTheStoresError(t *testing.T) {
	r := newBackupRig(t)
	b := mgb("nightly", "no-such-bucket", topology.BackupRetain)
	st := r.untilDone(b).Status
	if st.Phase != topology.BackupFailed || st.Reason != "UploadFailed" || !strings.Contains(st.Error, "NoSuchBucket") {
		t.Fatalf("status %+v, want Failed, UploadFailed, with NoSuchBucket", st)
	}
	taken := r.snapshotsTaken()
	if again := r.call(b, false); again.Status.Phase != topology.BackupFailed || r.snapshotsTaken() != taken {
		t.Errorf("a failed backup called again: %+v, %d snapshots (was %d): want it failed and not retried", again.Status, r.snapshotsTaken(), taken)
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
		{"missing credentials Secret", func() { r.noSecret = true }, func() { r.noSecret = false }, "SecretProblem"},
		{"an older backup of the cluster is not done", func() {
			older := mgb("earlier", testBucket, topology.BackupRetain)
			older["metadata"].(map[string]any)["creationTimestamp"] = "2025-12-31T00:00:00Z"
			r.others[backupNS+"/earlier"] = older
		}, func() { delete(r.others, backupNS+"/earlier") }, "BackupRunning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mgb("nightly", testBucket, topology.BackupRetain)
			if tc.name == "no such cluster" {
				b["spec"].(map[string]any)["cluster"] = "other"
			}
			tc.setup()
			defer tc.undo()
			r.h.world.ResetLog()
			a := r.call(b, false)
			if a.Status.Phase != topology.BackupPending || a.Status.Reason != tc.reason || a.Status.Error == "" || a.ResyncAfterSeconds <= 0 {
				t.Errorf("answer %+v, want Pending, %s, a message, and a call again", a, tc.reason)
			}
			if q := r.h.world.Queries(); len(q) != 0 {
				t.Errorf("a waiting backup sent %v", q)
			}
		})
	}
}

// Deleting a backup: with Delete its object goes before the finalizer does; with Retain it stays.
func TestBackupDeletionPolicy(t *testing.T) {
	r := newBackupRig(t)
	for _, policy := range []topology.BackupDeletionPolicy{topology.BackupRetain, topology.BackupDelete} {
		t.Run(string(policy), func(t *testing.T) {
			b := mgb("b-"+strings.ToLower(string(policy)), testBucket, policy)
			st := r.untilDone(b).Status
			if st.Phase != topology.BackupCompleted {
				t.Fatalf("phase %s: %s", st.Phase, st.Error)
			}
			a := r.call(b, true)
			if !a.Finalized {
				t.Fatalf("finalize answered %+v, want finalized", a)
			}
			_, present := r.object(st.Key)
			if present != (policy == topology.BackupRetain) {
				t.Errorf("object %s present %v after deletion with %s", st.Key, present, policy)
			}
			if again := r.call(b, true); !again.Finalized {
				t.Errorf("a second finalize call answered %+v, want finalized", again)
			}
		})
	}
}

// A MAIN that changes between the snapshot and the upload fails the backup, with the reason,
// and nothing is uploaded: the snapshot is of an instance that is no longer MAIN.
func TestBackupFailsWhenTheMainChangesBeforeTheUpload(t *testing.T) {
	r := newBackupRig(t)
	tap := &tapConnector{inner: r.h.pool, afterSnapshot: func() {
		id, ok := r.h.world.Leader()
		if !ok {
			t.Fatal("no leader")
		}
		leader := r.h.pool.Client(r.h.network().Coordinator(id).BoltServer)
		ctx := context.Background()
		if err := leader.DemoteInstance(ctx, "instance_0"); err != nil {
			t.Fatal(err)
		}
		if err := leader.SetInstanceToMain(ctx, "instance_1"); err != nil {
			t.Fatal(err)
		}
	}}
	r.h.handler = hooks.NewHandler(hooks.Config{Connector: tap, SyncBudget: 5 * time.Second, AgentResolver: r.resolve})
	b := mgb("nightly", testBucket, topology.BackupRetain)
	st := r.call(b, false).Status
	if st.Phase != topology.BackupFailed || st.Reason != "MainChanged" || st.Instance != "instance_0" ||
		!strings.Contains(st.Error, "instance_1 became MAIN") {
		t.Fatalf("status %+v, want Failed, MainChanged, taken on instance_0, naming instance_1", st)
	}
	objects, err := r.mem.ListBucket(testBucket, nil, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects.Contents) != 0 {
		t.Errorf("objects %v uploaded, want none", objects.Contents)
	}
}

// A new cluster with bootstrap.fromBackup restores the backup into its first MAIN before any
// data instance is registered: Restoring, then every write the backup held is on the MAIN and,
// once the replicas are registered, on every replica; status.restoredFrom names the backup.
func TestRestoreANewClusterFromABackup(t *testing.T) {
	r := newBackupRig(t)
	if err := r.h.world.Commit("memgraph", 11); err != nil {
		t.Fatal(err)
	}
	b := mgb("nightly", testBucket, topology.BackupRetain)
	if st := r.untilDone(b).Status; st.Phase != topology.BackupCompleted {
		t.Fatalf("backup %s: %s", st.Phase, st.Error)
	}

	n := r.restoringCluster(b)
	n.sync() // StatefulSets created
	resp := n.sync()
	if got := resp.Status["restoredFrom"]; got != "MemgraphBackup nightly" {
		t.Fatalf("restoredFrom %v (phase %v, Converged %v), want MemgraphBackup nightly", got, resp.Status["phase"], resp.Status["conditions"])
	}
	for range 5 {
		n.sync()
	}
	n.assertConverged()
	leader, ok := n.world.Leader()
	if !ok {
		t.Fatal("no leader")
	}
	lag, err := n.pool.Client(n.network().Coordinator(leader).BoltServer).ShowReplicationLag(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	caughtUp := map[string]int64{}
	for _, l := range lag {
		caughtUp[l.Instance] = l.Databases["memgraph"].CommittedTxns
	}
	if diff := cmp.Diff(map[string]int64{"instance_0": 11, "instance_1": 11}, caughtUp); diff != "" {
		t.Errorf("committed transactions per instance (-want +got):\n%s", diff)
	}
	path, err := n.pool.Client(n.network().DataInstance(0).BoltServer).CreateSnapshot(context.Background())
	if err != nil || !strings.HasSuffix(path, "_timestamp_11") {
		t.Errorf("a snapshot of the restored MAIN: %q, %v; want timestamp 11", path, err)
	}
}

// A restore whose backup is not there holds every data instance unregistered and says why.
func TestRestoreWaitsForItsBackup(t *testing.T) {
	n := newHarness(t, 3, 2)
	n.spec["bootstrap"] = map[string]any{"fromBackup": map[string]any{"name": "nightly"}}
	n.sync()
	n.sync()
	resp := n.sync()
	st, reason, msg := n.condition(topology.ConditionConverged)
	if resp.Status["phase"] != "Restoring" || st != "False" || reason != topology.ReasonRegistrationInProgress ||
		!strings.Contains(msg, "MemgraphBackup default/nightly") {
		t.Errorf("phase %v, Converged %s %s: %s; want Restoring and the missing backup named", resp.Status["phase"], st, reason, msg)
	}
	for _, q := range n.world.Queries() {
		if strings.HasPrefix(q.Text, "REGISTER INSTANCE") || strings.HasPrefix(q.Text, "RECOVER") {
			t.Errorf("sent %q while the backup is missing", q.Text)
		}
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

// A MemgraphBackup asks for its cluster, the cluster's pods, the namespace's Secrets and
// MemgraphBackups; a cluster restoring a backup asks, besides its own, for that MemgraphBackup
// and the namespace's Secrets (its credentials Secret is named only by the MemgraphBackup).
func TestCustomizeAsksForWhatBackupsAndRestoresRead(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{})
	b := mgb("nightly", testBucket, topology.BackupRetain)
	b["spec"].(map[string]any)["destination"].(map[string]any)["s3"].(map[string]any)["endpoint"] = "https://s3.example.com"
	got := customizeRules(t, handler, "/backup/customize", b)
	want := []string{
		"default memgraphclusters memgraph",
		"default pods selector map[app.kubernetes.io/instance:memgraph app.kubernetes.io/name:memgraph]",
		"default secrets selector map[]",
		"default memgraphbackups selector map[]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/backup/customize (-want +got):\n%s", diff)
	}
	cluster := map[string]any{"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphCluster",
		"metadata": map[string]any{"name": "restored", "namespace": "default"},
		"spec":     map[string]any{"bootstrap": map[string]any{"fromBackup": map[string]any{"name": "nightly"}}}}
	got = customizeRules(t, handler, "/customize", cluster)
	if len(got) < 2 || !cmp.Equal(got[len(got)-2:], []string{"default secrets selector map[]", "default memgraphbackups nightly"}) {
		t.Errorf("/customize of a restoring cluster asks for %v, want the namespace's Secrets and MemgraphBackup nightly last", got)
	}
}

// An agent that does not answer leaves the backup Pending before anything is written: the hook
// reads the agent's job before it takes a snapshot.
func TestBackupWaitsForAnUnreachableAgentBeforeTheSnapshot(t *testing.T) {
	r := newBackupRig(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := closed.Addr().String()
	_ = closed.Close()
	r.h.handler = hooks.NewHandler(hooks.Config{Connector: r.h.pool, SyncBudget: 5 * time.Second,
		AgentResolver: memgraph.ResolverFunc(func(string) string { return dead })})
	a := r.call(mgb("nightly", testBucket, topology.BackupRetain), false)
	if a.Status.Phase != topology.BackupPending || a.Status.Reason != "AgentUnreachable" || a.ResyncAfterSeconds <= 0 {
		t.Errorf("answer %+v, want Pending, AgentUnreachable, a call again", a)
	}
	if n := r.snapshotsTaken(); n != 0 {
		t.Errorf("%d snapshots taken while the agent does not answer, want none", n)
	}
}

// A backup whose first answer was lost (the next request carries no status) adopts the job that
// call started: its status names the snapshot, its timestamp, the object's key and the start as
// the agent recorded them, and no second snapshot is taken.
func TestBackupAdoptsTheJobOfALostAnswer(t *testing.T) {
	r := newBackupRig(t)
	if err := r.h.world.Commit("memgraph", 7); err != nil {
		t.Fatal(err)
	}
	b := mgb("nightly", testBucket, topology.BackupRetain)
	first := r.call(b, false).Status
	if first.Phase != topology.BackupRunning || first.Snapshot == "" {
		t.Fatalf("first call: %+v, want Running with a snapshot", first)
	}
	delete(b, "status") // Metacontroller never stored the first answer
	taken := r.snapshotsTaken()
	st := r.untilDone(b).Status
	want := topology.MemgraphBackupStatus{ObservedGeneration: 1, Phase: topology.BackupCompleted, Reason: "Completed",
		Instance: first.Instance, Pod: first.Pod, MemgraphVersion: first.MemgraphVersion, Snapshot: first.Snapshot,
		SnapshotTimestamp: 7, Key: first.Key, Size: st.Size, StartedAt: st.StartedAt, CompletedAt: st.CompletedAt}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("adopted backup's status (-want +got):\n%s", diff)
	}
	if st.StartedAt == nil || st.Size == 0 || r.snapshotsTaken() != taken {
		t.Errorf("startedAt %v, size %d, %d snapshots (want a start, an object and still %d)", st.StartedAt, st.Size, r.snapshotsTaken(), taken)
	}
}

// restoringCluster is a new 3+2 cluster, with data directories, that restores the MemgraphBackup
// b (spec.bootstrap.fromBackup.name) with the rig's credentials and, when the store has one, CA.
func (r *backupRig) restoringCluster(b map[string]any) *harness {
	n := newHarness(r.t, 3, 2)
	n.dataRoot = r.t.TempDir()
	n.spec["bootstrap"] = map[string]any{"fromBackup": map[string]any{"name": b["metadata"].(map[string]any)["name"]}}
	n.secrets = map[string]any{backupNS + "/" + s3CredsSecret: secretOf(s3CredsSecret, map[string]string{"accessKeyId": "test", "secretAccessKey": "test-secret"})}
	if r.storeCA != "" {
		n.secrets[backupNS+"/"+s3CASecret] = secretOf(s3CASecret, map[string]string{"ca.crt": r.storeCA})
	}
	n.related = map[string]map[string]any{"MemgraphBackup.memgraph.com/v1alpha1": {backupNS + "/" + b["metadata"].(map[string]any)["name"].(string): b}}
	return n
}

// withCASecret names the rig's CA Secret as b's destination's caSecret.
func withCASecret(b map[string]any) map[string]any {
	b["spec"].(map[string]any)["destination"].(map[string]any)["s3"].(map[string]any)["caSecret"] = map[string]any{"name": s3CASecret}
	return b
}

// A store whose certificate a private CA signed: a backup that names the CA (caSecret) uploads;
// one that does not fails on the store's certificate. Restoring from it, Memgraph downloads the
// snapshot itself with no way to be given the CA, so the restore holds registration and its
// condition says the data pods' image must trust that CA.
func TestBackupAndRestoreWithAStoreOfAPrivateCA(t *testing.T) {
	r := newBackupRigWithPrivateCA(t)
	if err := r.h.world.Commit("memgraph", 3); err != nil {
		t.Fatal(err)
	}
	if st := r.untilDone(mgb("untrusted", testBucket, topology.BackupRetain)).Status; st.Phase != topology.BackupFailed ||
		!strings.Contains(st.Error, "certificate") {
		t.Errorf("a backup to the store without its CA: %s (%s), want Failed on the store's certificate", st.Phase, st.Error)
	}
	b := withCASecret(mgb("nightly", testBucket, topology.BackupRetain))
	st := r.untilDone(b).Status
	if st.Phase != topology.BackupCompleted {
		t.Fatalf("a backup with caSecret: %s (%s: %s), want Completed", st.Phase, st.Reason, st.Error)
	}
	if _, ok := r.object(st.Key); !ok {
		t.Fatalf("object %s not in the store", st.Key)
	}

	n := r.restoringCluster(b)
	n.sync()
	resp := n.sync()
	status, reason, msg := n.condition(topology.ConditionConverged)
	if resp.Status["phase"] != "Restoring" || status != "False" || reason != topology.ReasonRegistrationInProgress ||
		!strings.Contains(msg, "Failed to download snapshot file from s3") || !strings.Contains(msg, "Secret "+s3CASecret) ||
		!strings.Contains(msg, "image must trust") {
		t.Errorf("phase %v, Converged %s %s: %s; want Restoring, Memgraph's refusal and what to do about the CA", resp.Status["phase"], status, reason, msg)
	}
	for _, q := range n.world.Queries() {
		if strings.HasPrefix(q.Text, "REGISTER INSTANCE") {
			t.Errorf("sent %q while the restore fails", q.Text)
		}
	}
}

// A backup whose cluster is deleted while its upload runs fails as ClusterNotFound, naming the
// cluster and the instance, and nothing is retried.
func TestBackupFailsWhenItsClusterGoesMidUpload(t *testing.T) {
	r := newBackupRig(t)
	b := mgb("nightly", testBucket, topology.BackupRetain)
	b["spec"].(map[string]any)["cluster"] = "deleted"
	b["status"] = map[string]any{"phase": "Running", "reason": "Uploading", "instance": "instance_0", "pod": "deleted-data-0"}
	st := r.call(b, false).Status
	if st.Phase != topology.BackupFailed || st.Reason != "ClusterNotFound" ||
		!strings.Contains(st.Error, "cluster deleted") || !strings.Contains(st.Error, "instance_0") {
		t.Errorf("status %+v, want Failed, ClusterNotFound, naming the cluster and the instance", st)
	}
	if n := r.snapshotsTaken(); n != 0 {
		t.Errorf("%d snapshots taken, want none", n)
	}
}

// The restore docs/backup.md gives for a snapshot too large for one sync: RECOVER SNAPSHOT sent
// by hand to the restore target while the cluster holds registration. The hook's own RECOVER then
// gets Memgraph's "Storage is not clean" and registration stays held; once spec.bootstrap.fromBackup
// is removed, the hook registers the data instances and makes that instance the first MAIN, on the
// data it loaded.
func TestARestoreByHandThenFromBackupRemoved(t *testing.T) {
	r := newBackupRig(t)
	if err := r.h.world.Commit("memgraph", 5); err != nil {
		t.Fatal(err)
	}
	b := mgb("nightly", testBucket, topology.BackupRetain)
	st := r.untilDone(b).Status
	if st.Phase != topology.BackupCompleted {
		t.Fatalf("backup %s: %s", st.Phase, st.Error)
	}

	n := r.restoringCluster(b)
	n.spec["preferredMain"] = "instance_1"
	n.sync() // the StatefulSets: the pods start, nothing is registered
	target := n.network().DataInstance(1).BoltServer
	byHand := memgraph.S3Config{Region: "us-east-1", AccessKey: "test", SecretKey: "test-secret", EndpointURL: r.endpoint}
	if err := n.pool.Client(target).RecoverSnapshot(context.Background(), "s3://"+testBucket+"/"+st.Key, &byHand); err != nil {
		t.Fatalf("RECOVER SNAPSHOT by hand: %v", err)
	}

	n.sync()
	if _, _, msg := n.condition(topology.ConditionConverged); !strings.Contains(msg, "Storage is not clean") {
		t.Errorf("Converged says %q, want Memgraph's Storage is not clean", msg)
	}
	delete(n.spec, "bootstrap")
	for range 6 {
		n.sync()
	}
	n.assertConverged()
	if main := n.lastResp.Status["main"]; main != "instance_1" {
		t.Errorf("MAIN %v, want instance_1, the instance restored by hand", main)
	}
	lag, err := n.pool.Client(n.network().Coordinator(1).BoltServer).ShowReplicationLag(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lag {
		if got := l.Databases["memgraph"].CommittedTxns; got != 5 {
			t.Errorf("%s holds %d committed transactions, want the backup's 5", l.Instance, got)
		}
	}
}

//go:build e2e

package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/e2e/metacontroller"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const (
	userAuthSecret   = "memgraph-hooks-auth"
	userAuthName     = "hooks"
	userAuthPassword = "hooks-e2e-password"
)

// installUserCRD applies the MemgraphUser CRD and waits until it is served.
func installUserCRD(t *testing.T) {
	t.Helper()
	e := needEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := e.Kubectl(ctx, "apply", "-f", repoPath("manifests", "crd", "memgraph.com_memgraphusers.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+v1alpha1.UserResource+"."+v1alpha1.Group); err != nil {
		t.Fatal(err)
	}
}

func userClient(ns string) dynamic.ResourceInterface {
	return testEnv.Dynamic.Resource(v1alpha1.GroupVersion.WithResource(v1alpha1.UserResource)).Namespace(ns)
}

// startUserScenario is a backup scenario (to restore a cluster from a backup) with the
// MemgraphUser CRD, a test Metacontroller for the memgraph-users CompositeController of
// manifests/, and spec.auth's Secret.
func startUserScenario(t *testing.T, ns string) (*backupScenario, *metacontroller.Controller) {
	t.Helper()
	installUserCRD(t)
	s := startBackupScenario(t, ns)
	cc, err := metacontroller.LoadCompositeController(repoPath("manifests"), "memgraph-users")
	if err != nil {
		t.Fatal(err)
	}
	mc := s.metacontrollerFor(cc, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := mc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mc.Stop)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: userAuthSecret, Namespace: ns},
		StringData: map[string]string{"username": userAuthName, "password": userAuthPassword}}
	if _, err := testEnv.Client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return s, mc
}

func (s *scenario) createUser(name, spec string) {
	s.t.Helper()
	u := fromYAML(s.t, fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: %s, namespace: %s}\nspec: %s",
		v1alpha1.APIVersion, v1alpha1.UserKind, name, s.ns, spec))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := userClient(s.ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create MemgraphUser %s: %v", name, err)
	}
}

// waitUser waits until MemgraphUser name's status passes check, and returns it.
func (s *scenario) waitUser(name, what string, check func(v1alpha1.MemgraphUserStatus) error) v1alpha1.MemgraphUserStatus {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var st v1alpha1.MemgraphUserStatus
	if err := eventually(ctx, 100*time.Millisecond, func() error {
		u, err := userClient(s.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		raw, _ := u.Object["status"].(map[string]any)
		st = v1alpha1.MemgraphUserStatus{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
			return err
		}
		return check(st)
	}); err != nil {
		s.t.Fatalf("MemgraphUser %s %s: %v (status %+v)", name, what, err, st)
	}
	return st
}

func ready(st v1alpha1.MemgraphUserStatus) error {
	if st.Phase != v1alpha1.UserReady {
		return fmt.Errorf("phase %q", st.Phase)
	}
	return nil
}

// userCredentials are the username and password of MemgraphUser name's generated Secret.
func (s *scenario) userCredentials(name string) (string, string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	secret, err := testEnv.Client.CoreV1().Secrets(s.ns).Get(ctx, v1alpha1.UserSecretName(name), metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return string(secret.Data["username"]), string(secret.Data["password"])
}

// throughRW runs one query, as user with password, on the pod the cluster's -rw Service's ready
// endpoints name (the address a bolt:// client of the Secret's uri reaches), over the real
// driver: "" when it succeeded, else the FAILURE's message.
func (s *scenario) throughRW(cluster, user, password, query string) string {
	s.t.Helper()
	_, pods := rwState(s.ns, cluster)
	if len(pods) != 1 {
		s.t.Fatalf("-rw's ready endpoints are %v, want the MAIN's pod alone", pods)
	}
	host := fmt.Sprintf("%s.%s.%s.svc.cluster.local:7687", pods[0], topology.DataSetName(cluster), s.ns)
	drv, err := neo4j.NewDriverWithContext("bolt://"+s.world.Resolve(host), neo4j.BasicAuth(user, password, ""))
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer drv.Close(ctx)
	session := drv.NewSession(ctx, neo4j.SessionConfig{})
	defer session.Close(ctx)
	res, err := session.Run(ctx, query, nil)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	var ne *neo4j.Neo4jError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ne):
		return ne.Msg
	}
	return err.Error()
}

// A MemgraphUser's generated credentials connect through -rw and write, its sync carrying no
// Secret of the namespace but the cluster's user-access copy; a read-only user is
// refused a write with Memgraph's text; kubectl memgraph rotate-password gives a new password
// that works while the old one is refused; deleting a MemgraphUser refuses its login; the
// cluster backed up, deleted with its volumes and restored from the backup under the same name
// (a snapshot holds no users) gets the user back, whose credentials read the restored data. No
// password reaches a status or the hook's log.
func TestMemgraphUsersOnTheControlPlane(t *testing.T) {
	s, users := startUserScenario(t, "users")
	const name = "mgu"
	spec := "{dataInstances: 2, storage: {retentionPolicy: Delete}, auth: {secretName: " + userAuthSecret + "}, roles: [{name: reporting, privileges: [MATCH, STATS]}], backup: " + s.clusterBackup("users", "s3-credentials", "") + "}"
	start := time.Now()
	s.create(name, spec)
	s.waitConverged(name, convergeTimeout)
	t.Logf("cluster converged in %s", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	s.createUser("app", "{cluster: "+name+", roles: [readwrite]}")
	s.createUser("reader", "{cluster: "+name+", roles: [readonly, reporting]}")
	app := s.waitUser("app", "Ready", ready)
	s.waitUser("reader", "Ready", ready)
	t.Logf("two users Ready %s after their creation", time.Since(start).Round(time.Millisecond))
	related, err := users.Related(context.Background(), s.ns+"/app")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := related["Secret.v1"], []string{s.ns + "/" + topology.UserAccessSecretName(name)}; !slices.Equal(got, want) {
		t.Errorf("a sync of MemgraphUser app carries the Secrets %v, want %v alone", got, want)
	}
	user, password := s.userCredentials("app")
	if user != "app" || len(password) != 32 {
		t.Fatalf("generated credentials: user %q, a password of %d characters", user, len(password))
	}
	if msg := s.throughRW(name, user, password, "CREATE (n)"); msg != "" {
		t.Fatalf("a write with the generated credentials through -rw: %s", msg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, u := range []string{"app", "reader"} {
		if err := users.WaitCurrent(ctx, s.ns+"/"+u); err != nil {
			t.Fatal(err)
		}
	}
	since, synced := time.Now(), users.Stats().Snapshot().SyncsCompleted
	s.world.ResetLog()
	users.Resync()
	if err := eventually(ctx, 50*time.Millisecond, func() error {
		if n := users.Stats().Snapshot().SyncsCompleted - synced; n < 2 {
			return fmt.Errorf("%d of 2 user syncs completed", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if snap := users.Stats().Snapshot(); len(snap.ChildWrites(since)) > 0 || snap.CountSince("status", since) > 0 {
		t.Errorf("a resync of converged users wrote: %s", snap.Report())
	}
	for _, q := range s.world.Queries() {
		if !strings.HasPrefix(q.Text, "SHOW ") {
			t.Errorf("a resync of converged users sent %q to %s", q.Text, q.Host)
		}
	}
	readerUser, readerPassword := s.userCredentials("reader")
	if msg := s.throughRW(name, readerUser, readerPassword, "MATCH (n) RETURN count(n)"); msg != "" {
		t.Errorf("a read by the read-only user: %s", msg)
	}
	want := `You are not authorized to execute this query on database "memgraph"!`
	if msg := s.throughRW(name, readerUser, readerPassword, "CREATE (n)"); !strings.HasPrefix(msg, want) {
		t.Errorf("a write by the read-only user: %q, want Memgraph's %q…", msg, want)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(s.mustKubectlMemgraph("status", name), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[2] == string(v1alpha1.UserReady) {
			listed[f[0]] = true
		}
	}
	if !listed["app"] || !listed["reader"] {
		t.Errorf("kubectl memgraph status lists %v Ready, want app and reader", listed)
	}

	start = time.Now()
	s.mustKubectlMemgraph("rotate-password", "app", "--wait")
	t.Logf("rotate-password --wait took %s", time.Since(start).Round(time.Millisecond))
	_, rotated := s.userCredentials("app")
	if rotated == password {
		t.Fatal("the rotation kept the password")
	}
	if msg := s.throughRW(name, user, password, "RETURN 1"); !strings.Contains(msg, "Authentication failure") {
		t.Errorf("the old password after the rotation: %q", msg)
	}
	if msg := s.throughRW(name, user, rotated, "CREATE (n)"); msg != "" {
		t.Errorf("the rotated password: %s", msg)
	}

	start = time.Now()
	if err := userClient(s.ns).Delete(ctx, "reader", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := eventually(ctx, 100*time.Millisecond, func() error {
		if _, err := userClient(s.ns).Get(ctx, "reader", metav1.GetOptions{}); err == nil {
			return errors.New("MemgraphUser reader is still there")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("MemgraphUser reader finalized %s after its deletion", time.Since(start).Round(time.Millisecond))
	if msg := s.throughRW(name, readerUser, readerPassword, "RETURN 1"); !strings.Contains(msg, "Authentication failure") {
		t.Errorf("a deleted user's login: %q", msg)
	}

	start = time.Now()
	s.createBackup("before", s.backupSpec(name, v1alpha1.BackupRetain))
	backedUp := s.waitBackup("before")
	if backedUp.Phase != v1alpha1.BackupCompleted || backedUp.SnapshotTimestamp < 2 {
		t.Fatalf("backup %+v, want Completed, holding the two writes", backedUp)
	}
	t.Logf("backup of the cluster: %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if err := mgcClient(s.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitWorkloadsGone(name)
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if claims := s.claims(); len(claims) > 0 {
			return fmt.Errorf("claims left: %v", claims)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.create(name, strings.TrimSuffix(spec, "}")+", bootstrap: {fromBackup: {name: before}}}")
	restored := s.waitConverged(name, convergeTimeout)
	if got, _, _ := unstructured.NestedString(restored.Object, "status", "restoredFrom"); got != "MemgraphBackup before" {
		t.Errorf("status.restoredFrom %q, want MemgraphBackup before", got)
	}
	s.waitUser("app", "Ready on the restored cluster", func(st v1alpha1.MemgraphUserStatus) error {
		if err := ready(st); err != nil {
			return err
		}
		if msg := s.throughRW(name, user, rotated, "MATCH (n) RETURN count(n)"); msg != "" {
			return fmt.Errorf("login on the restored cluster: %s", msg)
		}
		return nil
	})
	if got := s.committedOnEveryInstance(name)[s.currentMain()]; got != backedUp.SnapshotTimestamp {
		t.Errorf("the restored MAIN holds %d transactions, want the backup's %d", got, backedUp.SnapshotTimestamp)
	}
	t.Logf("the cluster deleted and restored from its backup, the user back in %s", time.Since(start).Round(time.Millisecond))

	final, err := userClient(s.ns).Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status, _, _ := unstructured.NestedMap(final.Object, "status")
	for what, text := range map[string]string{"status": fmt.Sprint(status), "the hook's log": s.hookLogs(), "the first status": fmt.Sprint(app)} {
		for _, secret := range []string{password, rotated, readerPassword, userAuthPassword} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows a password", what)
			}
		}
	}
}

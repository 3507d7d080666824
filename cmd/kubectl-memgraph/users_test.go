package main

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

const storedUsers = `
apiVersion: memgraph.com/v1alpha1
kind: MemgraphUser
metadata: {name: app, namespace: prod}
spec: {cluster: memgraph, roles: [readwrite]}
status:
  phase: Ready
  username: app
  secret: app-credentials
  appliedPasswordVersion: app-credentials/7
  roles: [readwrite]
  privileges: [CREATE, DELETE, MATCH, MERGE, SET, REMOVE, INDEX]
  conditions:
  - {type: Ready, status: "True", reason: InForce, message: "user app is in force on MAIN instance_1", lastTransitionTime: "2026-12-05T16:00:00Z"}
---
apiVersion: memgraph.com/v1alpha1
kind: MemgraphUser
metadata: {name: reports, namespace: prod}
spec: {cluster: memgraph, username: reporter, roles: [auditors], passwordSecret: {name: reporter-password}}
status:
  phase: Failed
  username: reporter
  secret: reporter-password
  conditions:
  - {type: Ready, status: "False", reason: UnknownRole, message: "role auditors is neither declared in MemgraphCluster memgraph's spec.roles nor one of Memgraph's built-in roles", lastTransitionTime: "2026-12-05T16:00:00Z"}
---
apiVersion: memgraph.com/v1alpha1
kind: MemgraphUser
metadata: {name: elsewhere, namespace: prod}
spec: {cluster: other}
`

func userObjects(t *testing.T) []runtime.Object {
	var out []runtime.Object
	for _, doc := range strings.Split(storedUsers, "\n---\n") {
		out = append(out, object(t, doc))
	}
	return out
}

// kubectl memgraph status lists the cluster's MemgraphUsers after the rest, and says why one is
// not Ready.
func TestStatusListsTheClustersUsers(t *testing.T) {
	client := fakeClient(t, append(append(testPods(t), object(t, storedCluster)), userObjects(t)...)...)
	out, err := run(t, client, "status", "memgraph")
	if err != nil {
		t.Fatal(err)
	}
	_, users, ok := strings.Cut(out, "\nUsers:\n")
	if !ok {
		t.Fatalf("no Users section:\n%s", out)
	}
	golden(t, "users.txt", users)
	if strings.Contains(users, "elsewhere") {
		t.Errorf("a user of another cluster is listed:\n%s", users)
	}
	empty, err := run(t, fakeClient(t, append(testPods(t), object(t, storedCluster))...), "status", "memgraph")
	if err != nil || !strings.HasSuffix(empty, "\nUsers:\n  none\n") {
		t.Errorf("a cluster without users: %v\n%s", err, empty)
	}
}

// rotate-password annotates the MemgraphUser with the time; --dry-run prints the kubectl command
// instead; a user whose password comes from its own Secret is refused; --wait follows the status
// until another password version is in force.
func TestRotatePassword(t *testing.T) {
	client := fakeClient(t, userObjects(t)...)
	out, err := run(t, client, "rotate-password", "app", "--dry-run")
	if err != nil || !strings.Contains(out, "kubectl annotate memgraphuser/app memgraph.com/rotate-password=") || !strings.Contains(out, "--overwrite -n prod") {
		t.Errorf("--dry-run: %v\n%s", err, out)
	}
	if got := annotation(t, client, "app"); got != "" {
		t.Fatalf("--dry-run annotated: %q", got)
	}
	if _, err := run(t, client, "rotate-password", "reports"); err == nil || !strings.Contains(err.Error(), "Secret reporter-password (spec.passwordSecret)") {
		t.Errorf("a user with spec.passwordSecret: %v", err)
	}

	gets := 0
	client.(*dynamicfake.FakeDynamicClient).PrependReactor("get", "memgraphusers", func(k8stesting.Action) (bool, runtime.Object, error) {
		gets++
		if gets < 3 {
			return false, nil, nil
		}
		u := object(t, strings.Split(storedUsers, "\n---\n")[0])
		_ = unstructured.SetNestedField(u.Object, "app-credentials/8", "status", "appliedPasswordVersion")
		return true, u, nil
	})
	start := time.Now().UTC()
	out, err = run(t, client, "rotate-password", "app", "--wait")
	if err != nil || !strings.Contains(out, "memgraphuser.memgraph.com/app annotated: memgraph.com/rotate-password=") ||
		!strings.Contains(out, "the new password of Secret app-credentials is in force (app-credentials/8)") {
		t.Fatalf("--wait: %v\n%s", err, out)
	}
	requested, err := time.Parse(time.RFC3339Nano, annotation(t, client, "app"))
	if err != nil || requested.Before(start.Add(-time.Second)) {
		t.Errorf("annotation %v (%v)", requested, err)
	}
}

// annotation is the rotation request stored on MemgraphUser name, read past any reactor.
func annotation(t *testing.T, client dynamic.Interface, name string) string {
	t.Helper()
	obj, err := client.(*dynamicfake.FakeDynamicClient).Tracker().Get(usersGVR, "prod", name)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*unstructured.Unstructured).GetAnnotations()[v1alpha1.AnnotationRotatePassword]
}

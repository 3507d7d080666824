package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/kubectl-memgraph -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

const storedCluster = `
apiVersion: memgraph.com/v1alpha1
kind: MemgraphCluster
metadata: {name: memgraph, namespace: prod, generation: 4}
spec:
  coordinators: 3
  dataInstances: 3
  image: {repository: docker.io/memgraph/memgraph, tag: 3.12.0, pullPolicy: IfNotPresent}
status:
  main: instance_1
  leader: coordinator_2
  members: 6/6
  phase: Running
  version: docker.io/memgraph/memgraph:3.12.0
  pods: {coordinators: {ready: 3, desired: 3}, dataInstances: {ready: 3, desired: 3}}
  replicas:
  - {name: instance_0, syncMode: sync, state: ready, since: "2026-12-05T16:30:00Z"}
  - {name: instance_2, syncMode: async, state: diverged, since: "2026-12-05T16:50:00Z"}
  conditions:
  - {type: Ready, status: "True", reason: MainServing, message: "instance_1 is MAIN and serves writes", observedGeneration: 4, lastTransitionTime: "2026-12-05T16:00:00Z"}
  - {type: Converged, status: "True", reason: AllInstancesRegistered, message: "every declared member is registered", observedGeneration: 4, lastTransitionTime: "2026-12-05T16:30:00Z"}
  - {type: Updated, status: "True", reason: UpToDate, message: "all 6 pods run their StatefulSet's current pod template", observedGeneration: 4, lastTransitionTime: "2026-12-05T16:00:00Z"}
  lastOperation: {writes: "DEMOTE instance_0; SET instance_1 TO MAIN", result: Succeeded, time: "2026-12-05T16:30:00Z"}
  operations:
  - {command: "SET INSTANCE instance_1 TO MAIN", outcome: Succeeded, time: "2026-12-05T16:30:00Z"}
  - {command: "DEMOTE INSTANCE instance_0", outcome: Succeeded, time: "2026-12-05T16:29:59Z"}
`

var testNow = time.Date(2026, 12, 5, 17, 0, 0, 0, time.UTC)

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil { // integers as int64, as the API machinery holds them
		t.Fatal(err)
	}
	return u
}

func testPods(t *testing.T) []runtime.Object {
	var out []runtime.Object
	add := func(name, role, node string, ready bool) {
		status := corev1.ConditionTrue
		if !ready {
			status = corev1.ConditionFalse
		}
		labels := topology.RoleSelector("memgraph", role)
		labels[topology.LabelPodName] = name
		pod := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "prod", Labels: labels},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: topology.ContainerName, Image: "docker.io/memgraph/memgraph:3.12.0"}}},
			Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	for i := 1; i <= 3; i++ {
		add("memgraph-coordinator-"+string(rune('0'+i)), topology.RoleCoordinator, "node-"+string(rune('a'+i-1)), true)
	}
	add("memgraph-data-0", topology.RoleData, "node-a", true)
	add("memgraph-data-1", topology.RoleData, "node-b", true)
	// memgraph-data-2 has no pod: status says so
	return out
}

func fakeClient(t *testing.T, objs ...runtime.Object) dynamic.Interface {
	scheme := runtime.NewScheme()
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		clustersGVR: "MemgraphClusterList", podsGVR: "PodList", statefulSetsGVR: "StatefulSetList", usersGVR: "MemgraphUserList",
	}, objs...)
}

// run runs the plugin with args against client, in namespace prod.
func run(t *testing.T, client dynamic.Interface, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRoot(&out, &errOut, func() (dynamic.Interface, string, error) { return client, "prod", nil })
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestStatusGolden(t *testing.T) {
	mgc := object(t, storedCluster)
	var out bytes.Buffer
	var pods []corev1.Pod
	for _, o := range testPods(t) {
		var p corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.(*unstructured.Unstructured).Object, &p); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	if err := printStatus(&out, mgc, pods, testNow); err != nil {
		t.Fatal(err)
	}
	golden(t, "status.txt", out.String())
}

// The status command reads the cluster and its pods through the client.
func TestStatusCommand(t *testing.T) {
	client := fakeClient(t, append(testPods(t), object(t, storedCluster))...)
	out, err := run(t, client, "status", "memgraph")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MAIN:      instance_1", "instance_1     MAIN", "memgraph-data-1", "node-b", "instance_2     replica   memgraph-data-2         -       no pod"} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}
}

// Each verb's --dry-run prints the kubectl command that applies its patch, and changes nothing.
func TestDryRunPatchesGolden(t *testing.T) {
	var all strings.Builder
	for _, args := range [][]string{
		{"switchover", "memgraph", "--to", "instance_2"},
		{"pause", "memgraph"},
		{"resume", "memgraph"},
		{"hibernate", "memgraph"},
		{"wake", "memgraph"},
	} {
		client := fakeClient(t, object(t, storedCluster))
		out, err := run(t, client, append(args, "--dry-run")...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		all.WriteString("$ kubectl memgraph " + strings.Join(args, " ") + " --dry-run\n" + out + "\n")
		mgc, err := client.Resource(clustersGVR).Namespace("prod").Get(context.Background(), "memgraph", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(object(t, storedCluster).Object, mgc.Object); diff != "" {
			t.Errorf("%v --dry-run changed the cluster:\n%s", args, diff)
		}
	}
	golden(t, "dry-run.txt", all.String())
}

// restart stamps the time it runs, so its patch is checked apart from the golden file.
func TestRestartPatch(t *testing.T) {
	c, err := plan("restart", object(t, storedCluster), "", testNow)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"annotations":{"memgraph.com/restartedAt":"2026-12-05T17:00:00Z"}}}`
	if c.Patch != want || c.Kubectl != "kubectl annotate mgc memgraph memgraph.com/restartedAt=2026-12-05T17:00:00Z --overwrite" {
		t.Errorf("restart: patch %s, kubectl %q; want %s", c.Patch, c.Kubectl, want)
	}
}

// Applying a verb changes only the declaration: the stored object after the patch differs from
// before in exactly the field or annotation the docs name.
func TestVerbsChangeOnlyTheDeclaration(t *testing.T) {
	for _, tc := range []struct {
		args []string
		path []string
		want any
	}{
		{[]string{"switchover", "memgraph", "--to", "instance_0"}, []string{"spec", "preferredMain"}, "instance_0"},
		{[]string{"pause", "memgraph"}, []string{"metadata", "annotations", topology.AnnotationPaused}, "true"},
		{[]string{"hibernate", "memgraph"}, []string{"spec", "hibernate"}, true},
		{[]string{"wake", "memgraph"}, []string{"spec", "hibernate"}, false},
	} {
		client := fakeClient(t, object(t, storedCluster))
		if _, err := run(t, client, tc.args...); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		got, err := client.Resource(clustersGVR).Namespace("prod").Get(context.Background(), "memgraph", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := object(t, storedCluster)
		if err := unstructured.SetNestedField(want.Object, tc.want, tc.path...); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Object, got.Object); diff != "" {
			t.Errorf("%v changed more than %s (-want +got):\n%s", tc.args, strings.Join(tc.path, "."), diff)
		}
	}
}

// What admission would refuse, the plugin refuses first, with the reason.
func TestVerbsRefuseWhatAdmissionRefuses(t *testing.T) {
	hibernated := object(t, storedCluster)
	_ = unstructured.SetNestedField(hibernated.Object, true, "spec", "hibernate")
	var all strings.Builder
	for _, tc := range []struct {
		mgc  *unstructured.Unstructured
		args []string
	}{
		{object(t, storedCluster), []string{"switchover", "memgraph", "--to", "main"}},
		{object(t, storedCluster), []string{"switchover", "memgraph", "--to", "instance_3"}},
		{object(t, storedCluster), []string{"switchover", "memgraph", "--to", "instance_01"}},
		{hibernated, []string{"switchover", "memgraph", "--to", "instance_0"}},
		{hibernated, []string{"restart", "memgraph"}},
	} {
		client := fakeClient(t, tc.mgc)
		_, err := run(t, client, tc.args...)
		if err == nil {
			t.Errorf("%v: accepted, want a refusal", tc.args)
			continue
		}
		all.WriteString("$ kubectl memgraph " + strings.Join(tc.args, " ") + "\nerror: " + err.Error() + "\n\n")
	}
	if _, err := run(t, fakeClient(t), "pause", "absent"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("pause of a missing cluster: %v, want not found", err)
	}
	golden(t, "refusals.txt", all.String())
}

// --wait follows the conditions: it returns once the condition holds for the patched
// generation, and gives up at --timeout, saying the change stays declared.
func TestWaitFollowsTheCondition(t *testing.T) {
	mgc := object(t, storedCluster)
	client := fakeClient(t, mgc)
	s := &session{client: client, namespace: "prod", out: &bytes.Buffer{}, poll: time.Millisecond}
	c, err := plan("pause", mgc, "", testNow)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.wait(ctx, c, 4); err == nil {
		t.Fatal("wait returned with no Paused condition")
	}
	conds, _, _ := unstructured.NestedSlice(mgc.Object, "status", "conditions")
	conds = append(conds, map[string]any{"type": "Paused", "status": "True", "reason": "PausedByAnnotation", "message": "paused", "observedGeneration": int64(4), "lastTransitionTime": "2026-12-05T17:00:00Z"})
	_ = unstructured.SetNestedSlice(mgc.Object, conds, "status", "conditions")
	if _, err := client.Resource(clustersGVR).Namespace("prod").Update(context.Background(), mgc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.wait(context.Background(), c, 4); err != nil {
		t.Fatalf("wait with Paused=True: %v", err)
	}
	if out := s.out.(*bytes.Buffer).String(); !strings.Contains(out, "Paused=True PausedByAnnotation: paused") {
		t.Errorf("progress %q does not show the condition", out)
	}
}

// Shell completion is there, as cobra generates it, and completes cluster names.
func TestCompletion(t *testing.T) {
	client := fakeClient(t, object(t, storedCluster))
	out, err := run(t, client, "completion", "bash")
	if err != nil || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: %v\n%.200s", err, out)
	}
	out, err = run(t, client, "__complete", "pause", "")
	if err != nil || !strings.HasPrefix(out, "memgraph\n") {
		t.Errorf("completing pause's NAME: %v, %q", err, out)
	}
}

// The nodes section says what one node's loss would take, as HighlyAvailable judges it: here
// node-a runs two of three coordinators and the MAIN with every Sync replica.
func TestStatusNodesSayWhatALossTakes(t *testing.T) {
	mgc := object(t, storedCluster)
	var pods []corev1.Pod
	for _, p := range []struct{ name, node string }{
		{"memgraph-coordinator-1", "node-a"}, {"memgraph-coordinator-2", "node-a"}, {"memgraph-coordinator-3", "node-b"},
		{"memgraph-data-0", "node-a"}, {"memgraph-data-1", "node-a"}, {"memgraph-data-2", "node-a"},
	} {
		pods = append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: "prod"}, Spec: corev1.PodSpec{NodeName: p.node}})
	}
	var out bytes.Buffer
	if err := printStatus(&out, mgc, pods, testNow); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"node-a": "coordinator_1, coordinator_2 (leader), instance_0, instance_1 (MAIN), instance_2 " +
			"the Raft majority (2 of 3 coordinators); every copy of the data surely up to date (the MAIN and its Sync and StrictSync replicas)",
		"node-b": "coordinator_3 -",
	}
	got := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[0], "node-") {
			got[f[0]] = strings.Join(f[1:], " ")
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nodes (-want +got):\n%s\n%s", diff, out.String())
	}
}

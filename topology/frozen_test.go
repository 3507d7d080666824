package topology

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	kjson "sigs.k8s.io/json"
)

// stored is a child as the API server returns it after Metacontroller created it from desired:
// the last-applied annotation, server-filled metadata, defaults the server adds, and a status.
func stored(t *testing.T, desired map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(desired)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &obj); err != nil {
		t.Fatal(err)
	}
	meta := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[LastAppliedAnnotation] = string(raw)
	meta["uid"], meta["resourceVersion"], meta["generation"] = "u-1", "42", int64(3)
	meta["creationTimestamp"] = "2026-01-01T00:00:00Z"
	meta["managedFields"] = []any{map[string]any{"manager": "metacontroller"}}
	meta["ownerReferences"] = []any{map[string]any{"kind": "MemgraphCluster", "name": "memgraph", "uid": "p-1", "controller": true}}
	if spec, ok := obj["spec"].(map[string]any); ok && obj["kind"] == "StatefulSet" {
		spec["revisionHistoryLimit"] = int64(10)
		containers := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
		containers[0].(map[string]any)["terminationMessagePath"] = "/dev/termination-log"
		obj["status"] = map[string]any{"replicas": int64(3), "readyReplicas": int64(3)}
	}
	return obj
}

func renderedChildren(t *testing.T) []map[string]any {
	t.Helper()
	c, err := NewCluster(apitest.MinimalCluster())
	if err != nil {
		t.Fatal(err)
	}
	children, err := Render(c, Rendering{Replicas: Replicas{Coordinators: 3, DataInstances: 2}})
	if err != nil {
		t.Fatal(err)
	}
	return children
}

// Nobody edited the children: each frozen child is exactly what Metacontroller last applied, so
// its 3-way merge changes nothing, not even the annotation.
func TestFrozenChildIsTheLastAppliedObject(t *testing.T) {
	for _, desired := range renderedChildren(t) {
		frozen, err := FrozenChild(stored(t, desired))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(desired, frozen); diff != "" {
			t.Errorf("%s: frozen child differs from the last applied one (-want +got):\n%s", desired["metadata"].(map[string]any)["name"], diff)
		}
	}
}

// A field a human changed while the cluster is paused keeps the human's value: the hook does
// not fight the repair. A field the human removed is not brought back.
func TestFrozenChildKeepsHumanEdits(t *testing.T) {
	sts := stored(t, renderedChildren(t)[1])
	spec := sts["spec"].(map[string]any)
	spec["replicas"] = int64(1)
	labels := sts["metadata"].(map[string]any)["labels"].(map[string]any)
	delete(labels, v1alpha1.LabelManagedBy)
	frozen, err := FrozenChild(sts)
	if err != nil {
		t.Fatal(err)
	}
	if got := frozen["spec"].(map[string]any)["replicas"]; got != int64(1) {
		t.Errorf("replicas %v, want the human's 1", got)
	}
	if _, ok := frozen["metadata"].(map[string]any)["labels"].(map[string]any)[v1alpha1.LabelManagedBy]; ok {
		t.Error("a label the human removed is returned")
	}
	if _, ok := frozen["spec"].(map[string]any)["revisionHistoryLimit"]; ok {
		t.Error("a server default the hook never set is returned")
	}
}

// Without the annotation there is no last-applied shape: the child is returned as observed,
// minus its status and what only the API server writes.
func TestFrozenChildWithoutAnnotation(t *testing.T) {
	sts := stored(t, renderedChildren(t)[0])
	delete(sts["metadata"].(map[string]any)["annotations"].(map[string]any), LastAppliedAnnotation)
	frozen, err := FrozenChild(sts)
	if err != nil {
		t.Fatal(err)
	}
	meta := frozen["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"} {
		if _, ok := meta[f]; ok {
			t.Errorf("metadata.%s returned", f)
		}
	}
	if _, ok := frozen["status"]; ok {
		t.Error("status returned")
	}
	if frozen["spec"].(map[string]any)["revisionHistoryLimit"] != int64(10) || meta["ownerReferences"] == nil {
		t.Error("the observed spec and owner are not returned as observed")
	}
	if _, ok := sts["metadata"].(map[string]any)["uid"]; !ok {
		t.Error("freezing changed the observed object")
	}
}

func TestFrozenChildWithABrokenAnnotation(t *testing.T) {
	sts := stored(t, renderedChildren(t)[0])
	sts["metadata"].(map[string]any)["annotations"].(map[string]any)[LastAppliedAnnotation] = "{"
	if _, err := FrozenChild(sts); err == nil {
		t.Error("a last-applied annotation that is not JSON is accepted")
	}
}

package metacontroller

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := unmarshalPreservingInts([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// observedWith returns observed with the last-applied annotation set to applied.
func observedWith(t *testing.T, observed, applied string) map[string]any {
	t.Helper()
	o := obj(t, observed)
	if err := setLastApplied(o, obj(t, applied)); err != nil {
		t.Fatal(err)
	}
	return o
}

const desiredSTS = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"a","namespace":"ns","labels":{"x":"1"}},
 "spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"m","image":"i:1","ports":[{"containerPort":7687,"name":"bolt"}]}]}}}}`

// The observed object as the API server stores it: defaults filled in, system fields, status.
const observedSTS = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"a","namespace":"ns","labels":{"x":"1"},
  "uid":"u1","resourceVersion":"7","generation":2,"creationTimestamp":"2026-01-01T00:00:00Z"},
 "spec":{"replicas":3,"revisionHistoryLimit":10,"template":{"spec":{"containers":[{"name":"m","image":"i:1",
   "ports":[{"containerPort":7687,"name":"bolt","protocol":"TCP"}],"terminationMessagePath":"/dev/termination-log"}]}}},
 "status":{"replicas":3}}`

func TestApplyUpdateConvergedIsNoOp(t *testing.T) {
	observed := observedWith(t, observedSTS, desiredSTS)
	merged, err := applyUpdate(observed, obj(t, desiredSTS))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(observed, merged); diff != "" {
		t.Fatalf("a converged child must not be written (-observed +merged):\n%s", diff)
	}
}

func TestApplyUpdateMergesListsByKeyAndKeepsServerDefaults(t *testing.T) {
	observed := observedWith(t, observedSTS, desiredSTS)
	desired := obj(t, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"a","namespace":"ns","labels":{"x":"1"}},
 "spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"m","image":"i:2","ports":[{"containerPort":7687,"name":"bolt"}]}]}}}}`)
	merged, err := applyUpdate(observed, desired)
	if err != nil {
		t.Fatal(err)
	}
	c := merged["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if c["image"] != "i:2" || c["terminationMessagePath"] != "/dev/termination-log" {
		t.Errorf("container merged by name must take the new image and keep server defaults: %v", c)
	}
	port := c["ports"].([]any)[0].(map[string]any)
	if port["protocol"] != "TCP" {
		t.Errorf("ports merged by containerPort must keep the defaulted protocol: %v", port)
	}
	spec := merged["spec"].(map[string]any)
	if spec["replicas"] != int64(5) || spec["revisionHistoryLimit"] != int64(10) {
		t.Errorf("replicas must change and revisionHistoryLimit stay: %v", spec)
	}
	if !reflect.DeepEqual(merged["status"], observed["status"]) {
		t.Errorf("status must be reverted to observed")
	}
	meta := merged["metadata"].(map[string]any)
	if meta["resourceVersion"] != "7" || meta["uid"] != "u1" {
		t.Errorf("system metadata must stay: %v", meta)
	}
	var applied map[string]any
	if err := json.Unmarshal([]byte(meta["annotations"].(map[string]any)[LastAppliedAnnotation].(string)), &applied); err != nil {
		t.Fatal(err)
	}
	if applied["spec"].(map[string]any)["replicas"] != float64(5) {
		t.Errorf("last-applied must record the new desired object: %v", applied)
	}
}

func TestApplyUpdateRemovesFieldsDroppedFromDesired(t *testing.T) {
	observed := observedWith(t, observedSTS, desiredSTS)
	desired := obj(t, desiredSTS)
	delete(desired["metadata"].(map[string]any), "labels")
	merged, err := applyUpdate(observed, desired)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := merged["metadata"].(map[string]any)["labels"]; ok {
		t.Errorf("labels applied before and dropped now must be removed")
	}
}

// Metacontroller issue #566: volumeClaimTemplates items share no merge key, so the list is
// replaced whole; a desired template lacking server-filled fields differs from observed forever.
func TestApplyUpdateReplacesVolumeClaimTemplatesAtomically(t *testing.T) {
	stored := `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"lib"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"volumeMode":"Filesystem"},"status":{"phase":"Pending"}}`
	bare := `{"metadata":{"name":"lib"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`
	observedJSON := `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"a"},"spec":{"volumeClaimTemplates":[` + stored + `]}}`
	for name, tc := range map[string]struct {
		vct     string
		changes bool
	}{
		"as the server stores it": {stored, false},
		"without server fields":   {bare, true},
	} {
		t.Run(name, func(t *testing.T) {
			desiredJSON := `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"a"},"spec":{"volumeClaimTemplates":[` + tc.vct + `]}}`
			observed := observedWith(t, observedJSON, desiredJSON)
			merged, err := applyUpdate(observed, obj(t, desiredJSON))
			if err != nil {
				t.Fatal(err)
			}
			if changed := !reflect.DeepEqual(merged, observed); changed != tc.changes {
				t.Errorf("changed = %v, want %v:\n%s", changed, tc.changes, cmp.Diff(observed, merged))
			}
		})
	}
}

func TestListMapKey(t *testing.T) {
	for name, tc := range map[string]struct {
		lists [][]any
		want  string
	}{
		"containerPort wins over name": {[][]any{{map[string]any{"name": "a", "containerPort": int64(1)}}}, "containerPort"},
		"name":                         {[][]any{{map[string]any{"name": "a"}}, {map[string]any{"name": "b", "x": 1}}}, "name"},
		"scalars":                      {[][]any{{"a", "b"}}, ""},
		"no common key":                {[][]any{{map[string]any{"name": "a"}, map[string]any{"path": "b"}}}, ""},
	} {
		if got := listMapKey(tc.lists...); got != tc.want {
			t.Errorf("%s: listMapKey = %q, want %q", name, got, tc.want)
		}
	}
}

func TestParseCompositeController(t *testing.T) {
	cc, err := ParseCompositeController([]byte(`
apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: {name: mgc}
spec:
  generateSelector: true
  resyncPeriodSeconds: 30
  parentResource: {apiVersion: memgraph.com/v1alpha1, resource: memgraphclusters, ignoreStatusChanges: true}
  childResources:
  - {apiVersion: apps/v1, resource: statefulsets, updateStrategy: {method: InPlace}}
  - {apiVersion: v1, resource: services}
  hooks:
    sync: {version: v2, webhook: {service: {name: h, namespace: hooks}, path: /sync, timeout: 9s}}
    customize: {webhook: {url: "http://x:8080/customize"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if !cc.GenerateSelector || !cc.IgnoreStatusChanges || cc.ResyncPeriod.Seconds() != 30 {
		t.Errorf("flags: %+v", cc)
	}
	if cc.Children[0].Method != MethodInPlace || cc.Children[1].Method != MethodOnDelete {
		t.Errorf("methods: %+v", cc.Children)
	}
	if cc.Sync.URL != "http://h.hooks:80/sync" || cc.Sync.Version != "v2" || !cc.Sync.Strict || cc.Sync.Timeout.Seconds() != 9 {
		t.Errorf("sync hook: %+v", cc.Sync)
	}
	if cc.Customize.URL != "http://x:8080/customize" || cc.Customize.Version != "v1" || cc.Customize.Strict {
		t.Errorf("customize hook: %+v", cc.Customize)
	}
}

package v1alpha1_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDecodeCluster(t *testing.T) {
	in := `{` + apitest.ParentHead + `,"metadata":{"name":"graph","namespace":"prod","generation":4},
		"spec":{"coordinators":5,"storage":{"data":{"libPVCSize":"2048Mi"}},"futureField":{"x":1}},
		"status":{"observedGeneration":3,"main":"instance_0","pods":{"coordinators":{"ready":2,"desired":3},"dataInstances":{"ready":0,"desired":2}}}}`
	mc, err := v1alpha1.DecodeCluster([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := []any{mc.Name, mc.Namespace, mc.Generation, mc.Spec.Coordinators, mc.Spec.Storage.Data.LibPVCSize.Cmp(resource.MustParse("2Gi")),
		mc.Status.Main, mc.Status.Pods.Coordinators}
	want := []any{"graph", "prod", int64(4), int32(5), 0, "instance_0", v1alpha1.RolePods{Ready: 2, Desired: 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeClusterErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"truncated JSON", `{"apiVersion":`, "not valid JSON: unexpected end of JSON input"},
		{"garbage", `<xml/>`, "not valid JSON"},
		{"not an object", `["a"]`, "must be a JSON object, got a JSON array"},
		{"no apiVersion", `{"kind":"MemgraphCluster"}`, "no apiVersion, want memgraph.com/v1alpha1"},
		{"wrong apiVersion", `{"apiVersion":"memgraph.com/v1","kind":"MemgraphCluster"}`, `apiVersion is "memgraph.com/v1"`},
		{"no kind", `{"apiVersion":"memgraph.com/v1alpha1"}`, "no kind, want MemgraphCluster"},
		{"wrong kind", `{"apiVersion":"memgraph.com/v1alpha1","kind":"StatefulSet"}`, `kind is "StatefulSet"`},
		{"apiVersion not a string", `{"apiVersion":1}`, "apiVersion has the wrong type: got a JSON number, want a string"},
		{"no name", `{` + apitest.ParentHead + `,"metadata":{"namespace":"prod"}}`, "no metadata.name"},
		{"no namespace", `{` + apitest.ParentHead + `,"metadata":{"name":"graph"}}`, "no metadata.namespace"},
		{"count as a string", `{` + apitest.ParentHead + `,"metadata":{"name":"g","namespace":"p"},"spec":{"coordinators":"3"}}`,
			"spec.coordinators has the wrong type: got a JSON string, want an integer"},
		{"embedded field as object", `{` + apitest.ParentHead + `,"metadata":{"name":"g","namespace":"p"},"spec":{"dataTemplate":{"extraArgs":{}}}}`,
			"spec.dataTemplate.extraArgs has the wrong type: got a JSON object, want a list"},
		{"spec as list", `{` + apitest.ParentHead + `,"metadata":{"name":"g","namespace":"p"},"spec":[]}`,
			"spec has the wrong type: got a JSON array, want an object"},
		{"malformed size", `{` + apitest.ParentHead + `,"metadata":{"name":"g","namespace":"p"},"spec":{"storage":{"data":{"logPVCSize":"lots"}}}}`,
			"malformed quantity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc, err := v1alpha1.DecodeCluster([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodeCluster = %v, %v; want an error containing %q", mc, err, tc.want)
			}
		})
	}
}

// Field names are matched as written: a mis-cased field is an unknown field, not an alias.
func TestDecodeClusterIsCaseSensitive(t *testing.T) {
	mc, err := v1alpha1.DecodeCluster([]byte(`{` + apitest.ParentHead + `,"metadata":{"name":"g","namespace":"p"},"spec":{"Coordinators":5}}`))
	if err != nil {
		t.Fatal(err)
	}
	if mc.Spec.Coordinators != 0 {
		t.Errorf("Coordinators (capital C) was read as coordinators: %d", mc.Spec.Coordinators)
	}
}

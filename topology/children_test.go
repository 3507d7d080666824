package topology

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current output")

var renderCases = []struct {
	name     string
	cluster  func() *MemgraphCluster
	replicas Replicas
}{
	{"default", minimalCluster, Replicas{Coordinators: 3, DataInstances: 2}},
	{"retain-delete", retainDeleted, Replicas{Coordinators: 3, DataInstances: 2}},
	{"every-knob", everyKnob, Replicas{Coordinators: 5, DataInstances: 3}},
}

func render(t *testing.T, mc *MemgraphCluster, r Replicas) []map[string]any {
	t.Helper()
	children, err := DesiredChildren(mc, r)
	if err != nil {
		t.Fatalf("DesiredChildren: %v", err)
	}
	return children
}

func childID(c map[string]any) string {
	return strings.ToLower(c["kind"].(string)) + "-" + c["metadata"].(map[string]any)["name"].(string)
}

// Every rendered child of every case matches its golden file (run with -update to rewrite them).
func TestDesiredChildrenGolden(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, child := range render(t, tc.cluster(), tc.replicas) {
				got, err := yaml.Marshal(child)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", tc.name, childID(child)+".yaml")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./topology -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("%s (-golden +got):\n%s", path, diff)
				}
			}
		})
	}
}

func TestDesiredChildrenOrder(t *testing.T) {
	var got []string
	for _, c := range render(t, minimalCluster(), Replicas{3, 2}) {
		got = append(got, childID(c))
	}
	want := []string{
		"statefulset-memgraph-coordinator", "statefulset-memgraph-data",
		"service-memgraph-coordinator", "service-memgraph-data", "service-memgraph",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("children order (-want +got):\n%s", diff)
	}
}

// No child may carry a JSON null anywhere: Metacontroller's merge treats a desired null as a
// change on every sync. Nor a top-level status or a creationTimestamp.
func TestDesiredChildrenHaveNoNulls(t *testing.T) {
	for _, tc := range renderCases {
		for _, child := range render(t, tc.cluster(), tc.replicas) {
			raw, err := json.Marshal(child)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			for _, p := range findForbidden(v, "") {
				t.Errorf("%s/%s: %s", tc.name, childID(child), p)
			}
			if _, ok := child["status"]; ok {
				t.Errorf("%s/%s has a top-level status", tc.name, childID(child))
			}
		}
	}
}

func findForbidden(v any, path string) []string {
	var found []string
	switch t := v.(type) {
	case nil:
		found = append(found, "null at "+path)
	case map[string]any:
		for k, c := range t {
			if k == "creationTimestamp" {
				found = append(found, "creationTimestamp at "+path+"."+k)
			}
			found = append(found, findForbidden(c, path+"."+k)...)
		}
	case []any:
		for i, c := range t {
			found = append(found, findForbidden(c, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return found
}

// The volumeClaimTemplates are in the exact form the API server stores, and a size written as
// 2048Mi is rendered as the server canonicalises it.
func TestVolumeClaimTemplatesInStoredForm(t *testing.T) {
	children := render(t, everyKnob(), Replicas{5, 3})
	got := children[0]["spec"].(map[string]any)["volumeClaimTemplates"]
	want := []any{
		storedClaim("lib-storage", "2Gi", "ReadWriteOncePod", "fast"),
		storedClaim("log-storage", "512Mi", "ReadWriteMany", "slow"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("coordinator volumeClaimTemplates (-want +got):\n%s", diff)
	}
	data := children[1]["spec"].(map[string]any)["volumeClaimTemplates"]
	if diff := cmp.Diff([]any{storedClaim("lib-storage", "50Gi", "ReadWriteOnce", "ssd")}, data); diff != "" {
		t.Errorf("data volumeClaimTemplates without a log claim (-want +got):\n%s", diff)
	}
}

func storedClaim(name, size, mode, class string) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "PersistentVolumeClaim",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"accessModes":      []any{mode},
			"resources":        map[string]any{"requests": map[string]any{"storage": size}},
			"storageClassName": class,
			"volumeMode":       "Filesystem",
		},
		"status": map[string]any{"phase": "Pending"},
	}
}

func TestDesiredChildrenRendersReplicasAsGiven(t *testing.T) {
	children := render(t, minimalCluster(), Replicas{Coordinators: 7, DataInstances: 0})
	for i, want := range []int64{7, 0} {
		if got := children[i]["spec"].(map[string]any)["replicas"]; got != want {
			t.Errorf("%s replicas = %v, want %d", childID(children[i]), got, want)
		}
	}
}

func TestDesiredChildrenRefusesWhatItCannotRender(t *testing.T) {
	invalid := minimalCluster()
	invalid.Spec.Coordinators = 4
	noNamespace := minimalCluster()
	noNamespace.Namespace = ""
	for name, tc := range map[string]struct {
		mc   *MemgraphCluster
		r    Replicas
		want string
	}{
		"nil cluster":      {nil, Replicas{3, 2}, "no MemgraphCluster"},
		"no namespace":     {noNamespace, Replicas{3, 2}, "metadata.namespace"},
		"negative replica": {minimalCluster(), Replicas{3, -1}, "must not be negative"},
		"invalid spec":     {invalid, Replicas{3, 2}, MsgCoordinators},
	} {
		_, err := DesiredChildren(tc.mc, tc.r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}

// User labels reach metadata and pods but never a selector, so adding one never touches an
// immutable StatefulSet field.
func TestUserLabelsStayOutOfSelectors(t *testing.T) {
	for _, c := range render(t, everyKnob(), Replicas{5, 3}) {
		spec := c["spec"].(map[string]any)
		sel, ok := spec["selector"].(map[string]any)
		if ml, isSTS := sel["matchLabels"]; ok && isSTS {
			sel = ml.(map[string]any)
		}
		if _, leaked := sel["team"]; leaked {
			t.Errorf("%s selector carries a user label: %v", childID(c), sel)
		}
		if got := c["metadata"].(map[string]any)["labels"].(map[string]any)["team"]; got != "graph" {
			t.Errorf("%s metadata lacks the user label team=graph", childID(c))
		}
	}
}

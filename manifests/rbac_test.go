package manifests_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// metacontrollerRole is the ClusterRole of metacontroller-rbac.yaml.
func metacontrollerRole(t *testing.T) rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile("metacontroller-rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(doc), &role); err == nil && role.Kind == "ClusterRole" {
			return role
		}
	}
	t.Fatal("no ClusterRole in metacontroller-rbac.yaml")
	return rbacv1.ClusterRole{}
}

// verbsOn lists the verbs role grants on resource of group, in the order its rules give them.
func verbsOn(role rbacv1.ClusterRole, group, resource string) []string {
	var verbs []string
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) {
			verbs = append(verbs, r.Verbs...)
		}
	}
	return verbs
}

// Metacontroller may manage every child kind the CompositeController lists, and may only read
// Nodes and update them — the label memgraph.com/cordoned its DecoratorController memgraph-nodes
// sets and takes off (Metacontroller v4.17.2 writes a decorated object's labels with an update,
// pkg/controller/decorator/controller.go) — never create, patch or delete one.
func TestMetacontrollerRoleCoversTheChildrenAndOnlyLabelsNodes(t *testing.T) {
	var cc struct {
		Spec struct {
			ChildResources []struct {
				APIVersion string `json:"apiVersion"`
				Resource   string `json:"resource"`
			} `json:"childResources"`
		} `json:"spec"`
	}
	raw, err := os.ReadFile("compositecontroller.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &cc); err != nil {
		t.Fatal(err)
	}
	role := metacontrollerRole(t)
	manage := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	var kinds []string
	for _, c := range cc.Spec.ChildResources {
		gv, err := schema.ParseGroupVersion(c.APIVersion)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, gv.Group+"/"+c.Resource)
		if diff := cmp.Diff(manage, verbsOn(role, gv.Group, c.Resource)); diff != "" {
			t.Errorf("verbs on child %s/%s (-want +got):\n%s", gv.Group, c.Resource, diff)
		}
	}
	if !slices.Contains(kinds, "policy/poddisruptionbudgets") {
		t.Errorf("the CompositeController's children %v have no PodDisruptionBudgets", kinds)
	}
	if diff := cmp.Diff([]string{"get", "list", "watch", "update"}, verbsOn(role, "", "nodes")); diff != "" {
		t.Errorf("verbs on nodes (-want +got):\n%s", diff)
	}
	var decorator struct {
		Kind     string
		Metadata struct{ Name string }
		Spec     struct {
			Resources []struct {
				APIVersion string `json:"apiVersion"`
				Resource   string `json:"resource"`
			} `json:"resources"`
			Attachments []any `json:"attachments"`
		} `json:"spec"`
	}
	raw, err = os.ReadFile("node-decorator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &decorator); err != nil {
		t.Fatal(err)
	}
	if decorator.Kind != "DecoratorController" || len(decorator.Spec.Resources) != 1 || decorator.Spec.Resources[0].Resource != "nodes" ||
		len(decorator.Spec.Attachments) > 0 {
		t.Errorf("node-decorator.yaml: %+v, want a DecoratorController of Nodes alone, without attachments", decorator)
	}
}

// Metacontroller may run both backup CompositeControllers: read the parents and write their
// status and finalizer, and create and delete the MemgraphBackups a schedule owns.
func TestMetacontrollerRoleCoversTheBackupControllers(t *testing.T) {
	role := metacontrollerRole(t)
	for _, tc := range []struct {
		resource string
		want     []string
	}{
		{"memgraphbackups", []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{"memgraphscheduledbackups", []string{"get", "list", "watch", "update", "patch"}},
		{"memgraphbackups/status", []string{"get", "update", "patch"}},
		{"memgraphscheduledbackups/status", []string{"get", "update", "patch"}},
	} {
		if diff := cmp.Diff(tc.want, verbsOn(role, "memgraph.com", tc.resource)); diff != "" {
			t.Errorf("verbs on memgraph.com/%s (-want +got):\n%s", tc.resource, diff)
		}
	}
}

// Metacontroller may run the MemgraphUser CompositeController: read the parents, write their
// status and finalizer, and manage the generated Secret it declares as a child.
func TestMetacontrollerRoleCoversTheUserController(t *testing.T) {
	role := metacontrollerRole(t)
	for _, tc := range []struct {
		group, resource string
		want            []string
	}{
		{"memgraph.com", "memgraphusers", []string{"get", "list", "watch", "update", "patch"}},
		{"memgraph.com", "memgraphusers/status", []string{"get", "update", "patch"}},
		{"", "secrets", []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	} {
		if diff := cmp.Diff(tc.want, verbsOn(role, tc.group, tc.resource)); diff != "" {
			t.Errorf("verbs on %s/%s (-want +got):\n%s", tc.group, tc.resource, diff)
		}
	}
}

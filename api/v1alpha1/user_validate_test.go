package v1alpha1_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func appUser() v1alpha1.MemgraphUser {
	return v1alpha1.MemgraphUser{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "prod"},
		Spec: v1alpha1.MemgraphUserSpec{Cluster: "memgraph", Roles: []string{"readwrite", "reporting"},
			Privileges: []v1alpha1.MemgraphPrivilege{"MATCH", "CREATE"}, Databases: []string{"memgraph", "sales"}, MainDatabase: "sales"}}
}

func TestUserViolations(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(u *v1alpha1.MemgraphUser)
		want []string
	}{
		{"a valid user", func(*v1alpha1.MemgraphUser) {}, nil},
		{"the least: a cluster", func(u *v1alpha1.MemgraphUser) { u.Spec = v1alpha1.MemgraphUserSpec{Cluster: "memgraph"} }, nil},
		{"every database, another main", func(u *v1alpha1.MemgraphUser) { u.Spec.Databases = []string{"*"}; u.Spec.MainDatabase = "hr" }, nil},
		{"ALL alone", func(u *v1alpha1.MemgraphUser) {
			u.Spec.Privileges = []v1alpha1.MemgraphPrivilege{v1alpha1.PrivilegeAll}
		}, nil},
		{"ALL and more", func(u *v1alpha1.MemgraphUser) {
			u.Spec.Privileges = []v1alpha1.MemgraphPrivilege{v1alpha1.PrivilegeAll, "DUMP"}
		},
			[]string{"spec.privileges: " + v1alpha1.MsgPrivilegesAll}},
		{"an upper-case username", func(u *v1alpha1.MemgraphUser) { u.Spec.Username = "App" }, []string{"spec.username: " + v1alpha1.MsgUsername}},
		{"a username of 129 characters", func(u *v1alpha1.MemgraphUser) { u.Spec.Username = strings.Repeat("a", 129) },
			[]string{"spec.username: " + v1alpha1.MsgUsername}},
		{"a role with a space", func(u *v1alpha1.MemgraphUser) { u.Spec.Roles = []string{"read only"} }, []string{"spec.roles: " + v1alpha1.MsgUserRoles}},
		{"a database with a slash", func(u *v1alpha1.MemgraphUser) { u.Spec.Databases = []string{"a/b"}; u.Spec.MainDatabase = "" },
			[]string{"spec.databases: " + v1alpha1.MsgDatabases}},
		{"a main database not listed", func(u *v1alpha1.MemgraphUser) { u.Spec.MainDatabase = "hr" }, []string{"spec: " + v1alpha1.MsgUserMainDatabase}},
		{"a main database other than memgraph without databases", func(u *v1alpha1.MemgraphUser) { u.Spec.Databases = nil },
			[]string{"spec: " + v1alpha1.MsgUserMainDatabase}},
		{"no cluster", func(u *v1alpha1.MemgraphUser) { u.Spec.Cluster = "" }, []string{"spec.cluster: " + v1alpha1.MsgUserCluster}},
		{"a password Secret that is no name", func(u *v1alpha1.MemgraphUser) { u.Spec.PasswordSecret = &v1alpha1.SecretReference{Name: "App_Pw"} },
			[]string{"spec.passwordSecret.name: " + v1alpha1.MsgSecretReference}},
		{"a name of 129 characters", func(u *v1alpha1.MemgraphUser) { u.Name = strings.Repeat("a", 129) },
			[]string{"metadata.name: " + v1alpha1.MsgUserObjectName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := appUser()
			tc.edit(&u)
			if diff := cmp.Diff(tc.want, violationMessages(v1alpha1.UserViolations(&u))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterRolesAreValidated(t *testing.T) {
	for _, tc := range []struct {
		name string
		role v1alpha1.ClusterRole
		want []string
	}{
		{"a role", v1alpha1.ClusterRole{Name: "reporting", Privileges: []v1alpha1.MemgraphPrivilege{"MATCH"}, Databases: []string{"sales"}}, nil},
		{"a built-in role's name", v1alpha1.ClusterRole{Name: "readonly"}, []string{v1alpha1.MsgRoleBuiltin}},
		{"an upper-case name", v1alpha1.ClusterRole{Name: "Reporting"}, []string{v1alpha1.MsgRoleName}},
		{"ALL and more", v1alpha1.ClusterRole{Name: "r", Privileges: []v1alpha1.MemgraphPrivilege{"DUMP", v1alpha1.PrivilegeAll}}, []string{v1alpha1.MsgPrivilegesAll}},
		{"a database with a space", v1alpha1.ClusterRole{Name: "r", Databases: []string{"my db"}}, []string{v1alpha1.MsgDatabases}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := apitest.MinimalCluster()
			mc.Spec.Roles = []v1alpha1.ClusterRole{tc.role}
			if diff := cmp.Diff(tc.want, apitest.MessagesOf(t, mc.Validate())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The MemgraphUser CRD carries exactly the CEL messages user_validate.go mirrors, with its
// patterns.
func TestUserCRDRulesMatchGoValidation(t *testing.T) {
	rules, got := celRules(loadCRDSchemaAt(t, "../../manifests/crd/memgraph.com_memgraphusers.yaml"))
	want := []string{v1alpha1.MsgUserObjectName, v1alpha1.MsgUsernameImmutable, v1alpha1.MsgUserMainDatabase, v1alpha1.MsgUserCluster, v1alpha1.MsgUserClusterImmutable,
		v1alpha1.MsgUsername, v1alpha1.MsgUserRoles, v1alpha1.MsgPrivilegesAll, v1alpha1.MsgDatabases, v1alpha1.MsgMainDatabaseName, v1alpha1.MsgSecretReference}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CEL messages differ from user_validate.go (-go +crd):\n%s", diff)
	}
	for _, pattern := range []string{v1alpha1.AuthNamePattern, v1alpha1.DatabaseNamePattern, v1alpha1.ClusterNamePattern} {
		if !strings.Contains(strings.Join(rules, "\n"), pattern) {
			t.Errorf("no CEL rule uses %q, which UserViolations uses", pattern)
		}
	}
}

// The privilege enum of both CRDs is Privileges.
func TestPrivilegeEnumIsPrivileges(t *testing.T) {
	var want []string
	for _, p := range v1alpha1.Privileges {
		want = append(want, string(p))
	}
	for file, path := range map[string][]string{
		"memgraph.com_memgraphusers.yaml":    {"spec", "privileges"},
		"memgraph.com_memgraphclusters.yaml": {"spec", "roles", "[]", "privileges"},
	} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "manifests", "crd", file))
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Versions []struct {
					Schema struct {
						OpenAPIV3Schema enumSchema `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatal(err)
		}
		s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		for _, p := range path {
			if p == "[]" {
				s = *s.Items
				continue
			}
			s = s.Properties[p]
		}
		if diff := cmp.Diff(want, s.Items.Enum); diff != "" {
			t.Errorf("%s: the privilege enum (-Privileges +crd):\n%s", file, diff)
		}
	}
}

type enumSchema struct {
	Properties map[string]enumSchema `json:"properties"`
	Items      *enumSchema           `json:"items"`
	Enum       []string              `json:"enum"`
}

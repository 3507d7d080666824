package topology

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func appUser() MemgraphUser {
	return MemgraphUser{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "prod"},
		Spec: MemgraphUserSpec{Cluster: "memgraph", Roles: []string{"readwrite", "reporting"},
			Privileges: []MemgraphPrivilege{"MATCH", "CREATE"}, Databases: []string{"memgraph", "sales"}, MainDatabase: "sales"}}
}

func TestUserViolations(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(u *MemgraphUser)
		want []string
	}{
		{"a valid user", func(*MemgraphUser) {}, nil},
		{"the least: a cluster", func(u *MemgraphUser) { u.Spec = MemgraphUserSpec{Cluster: "memgraph"} }, nil},
		{"every database, another main", func(u *MemgraphUser) { u.Spec.Databases = []string{"*"}; u.Spec.MainDatabase = "hr" }, nil},
		{"ALL alone", func(u *MemgraphUser) { u.Spec.Privileges = []MemgraphPrivilege{PrivilegeAll} }, nil},
		{"ALL and more", func(u *MemgraphUser) { u.Spec.Privileges = []MemgraphPrivilege{PrivilegeAll, "DUMP"} },
			[]string{"spec.privileges: " + MsgPrivilegesAll}},
		{"an upper-case username", func(u *MemgraphUser) { u.Spec.Username = "App" }, []string{"spec.username: " + MsgUsername}},
		{"a username of 129 characters", func(u *MemgraphUser) { u.Spec.Username = strings.Repeat("a", 129) },
			[]string{"spec.username: " + MsgUsername}},
		{"a role with a space", func(u *MemgraphUser) { u.Spec.Roles = []string{"read only"} }, []string{"spec.roles: " + MsgUserRoles}},
		{"a database with a slash", func(u *MemgraphUser) { u.Spec.Databases = []string{"a/b"}; u.Spec.MainDatabase = "" },
			[]string{"spec.databases: " + MsgDatabases}},
		{"a main database not listed", func(u *MemgraphUser) { u.Spec.MainDatabase = "hr" }, []string{"spec: " + MsgUserMainDatabase}},
		{"a main database other than memgraph without databases", func(u *MemgraphUser) { u.Spec.Databases = nil },
			[]string{"spec: " + MsgUserMainDatabase}},
		{"no cluster", func(u *MemgraphUser) { u.Spec.Cluster = "" }, []string{"spec.cluster: " + MsgUserCluster}},
		{"a password Secret that is no name", func(u *MemgraphUser) { u.Spec.PasswordSecret = &SecretReference{Name: "App_Pw"} },
			[]string{"spec.passwordSecret.name: " + MsgSecretReference}},
		{"a name of 129 characters", func(u *MemgraphUser) { u.Name = strings.Repeat("a", 129) },
			[]string{"metadata.name: " + MsgUserObjectName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := appUser()
			tc.edit(&u)
			if diff := cmp.Diff(tc.want, violationMessages(UserViolations(&u))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterRolesAreValidated(t *testing.T) {
	for _, tc := range []struct {
		name string
		role ClusterRole
		want []string
	}{
		{"a role", ClusterRole{Name: "reporting", Privileges: []MemgraphPrivilege{"MATCH"}, Databases: []string{"sales"}}, nil},
		{"a built-in role's name", ClusterRole{Name: "readonly"}, []string{MsgRoleBuiltin}},
		{"an upper-case name", ClusterRole{Name: "Reporting"}, []string{MsgRoleName}},
		{"ALL and more", ClusterRole{Name: "r", Privileges: []MemgraphPrivilege{"DUMP", PrivilegeAll}}, []string{MsgPrivilegesAll}},
		{"a database with a space", ClusterRole{Name: "r", Databases: []string{"my db"}}, []string{MsgDatabases}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := minimalCluster()
			mc.Spec.Roles = []ClusterRole{tc.role}
			if diff := cmp.Diff(tc.want, messagesOf(t, mc.Validate())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The MemgraphUser CRD carries exactly the CEL messages user_validate.go mirrors, with its
// patterns.
func TestUserCRDRulesMatchGoValidation(t *testing.T) {
	rules, got := celRules(loadCRDSchemaAt(t, "../manifests/crd/memgraph.com_memgraphusers.yaml"))
	want := []string{MsgUserObjectName, MsgUsernameImmutable, MsgUserMainDatabase, MsgUserCluster, MsgUserClusterImmutable,
		MsgUsername, MsgUserRoles, MsgPrivilegesAll, MsgDatabases, MsgMainDatabaseName, MsgSecretReference}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CEL messages differ from user_validate.go (-go +crd):\n%s", diff)
	}
	for _, pattern := range []string{authNamePattern, databaseNamePattern, clusterNamePattern} {
		if !strings.Contains(strings.Join(rules, "\n"), pattern) {
			t.Errorf("no CEL rule uses %q, which UserViolations uses", pattern)
		}
	}
}

// The privilege enum of both CRDs is Privileges.
func TestPrivilegeEnumIsPrivileges(t *testing.T) {
	var want []string
	for _, p := range Privileges {
		want = append(want, string(p))
	}
	for file, path := range map[string][]string{
		"memgraph.com_memgraphusers.yaml":    {"spec", "privileges"},
		"memgraph.com_memgraphclusters.yaml": {"spec", "roles", "[]", "privileges"},
	} {
		raw, err := os.ReadFile(filepath.Join("..", "manifests", "crd", file))
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

//go:build e2e

package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// The MemgraphCluster's spec.roles rules join the cluster's CEL cases.
func init() {
	celCases = append(celCases,
		celCase{name: "role of a built-in name", field: "spec.roles[]",
			invalid: "roles: [{name: readonly}]", valid: "roles: [{name: readers}]"},
		celCase{name: "role name in upper case", field: "spec.roles[].name",
			invalid: "roles: [{name: Readers}]", valid: "roles: [{name: readers}]"},
		celCase{name: "role privileges ALL beside another", field: "spec.roles[].privileges",
			invalid: "roles: [{name: r, privileges: [ALL, DUMP]}]", valid: "roles: [{name: r, privileges: [ALL]}]"},
		celCase{name: "role database with a space", field: "spec.roles[].databases",
			invalid: "roles: [{name: r, databases: ['my db']}]", valid: "roles: [{name: r, databases: [sales, '*']}]"},
	)
}

// userCELCases reject one MemgraphUser and accept a neighbour (name, spec).
var userCELCases = []struct{ name, invalidName, invalid, validName, valid string }{
	{"name longer than 128", strings.Repeat("a", 129), "{cluster: memgraph}", strings.Repeat("a", 128), "{cluster: memgraph}"},
	{"cluster not a name", "u", "{cluster: Mem_graph}", "u", "{cluster: memgraph}"},
	{"username in upper case", "u", "{cluster: memgraph, username: App}", "u", "{cluster: memgraph, username: app.reader@example.com}"},
	{"roles with a space", "u", "{cluster: memgraph, roles: ['read only']}", "u", "{cluster: memgraph, roles: [readonly, reporting]}"},
	{"ALL beside another", "u", "{cluster: memgraph, privileges: [ALL, DUMP]}", "u", "{cluster: memgraph, privileges: [ALL]}"},
	{"a database with a slash", "u", "{cluster: memgraph, databases: [a/b]}", "u", "{cluster: memgraph, databases: ['*']}"},
	{"main database not a name", "u", "{cluster: memgraph, databases: ['*'], mainDatabase: 'a b'}", "u", "{cluster: memgraph, databases: ['*'], mainDatabase: hr}"},
	{"main database not declared", "u", "{cluster: memgraph, databases: [sales], mainDatabase: hr}", "u", "{cluster: memgraph, databases: [sales, hr], mainDatabase: hr}"},
	{"password Secret not a name", "u", "{cluster: memgraph, passwordSecret: {name: App_Pw}}", "u", "{cluster: memgraph, passwordSecret: {name: app-pw}}"},
}

// userTransitionCases are the MemgraphUser's rules on updates.
var userTransitionCases = []struct{ name, base, invalid, valid string }{
	{"cluster fixed", "{cluster: memgraph}", "{cluster: other}", "{cluster: memgraph, roles: [readonly]}"},
	{"username fixed", "{cluster: memgraph, username: app}", "{cluster: memgraph, username: other}", "{cluster: memgraph, username: app, privileges: [MATCH]}"},
}

// Every CEL rule of the MemgraphUser CRD rejects a user with its message, and accepts a valid
// neighbour; an unknown privilege is refused by the CRD's enum.
func TestUserAdmissionCELRules(t *testing.T) {
	installUserCRD(t)
	ns := newNamespace(t, "user-admission")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	object := func(name, spec string) *unstructured.Unstructured {
		return fromYAML(t, "apiVersion: "+v1alpha1.APIVersion+"\nkind: "+v1alpha1.UserKind+"\nmetadata: {name: "+name+", namespace: "+ns+"}\nspec: "+spec)
	}
	var rejections []string
	for _, tc := range userCELCases {
		_, err := userClient(ns).Create(ctx, object(tc.invalidName, tc.invalid), dryRun)
		if err == nil {
			t.Errorf("%s: admission accepted %s", tc.name, tc.invalid)
			continue
		}
		rejections = append(rejections, squash(err.Error()))
		if _, err := userClient(ns).Create(ctx, object(tc.validName, tc.valid), dryRun); err != nil {
			t.Errorf("%s: admission refused the valid neighbour %s: %v", tc.name, tc.valid, err)
		}
	}
	for i, tc := range userTransitionCases {
		name := "transition-" + string(rune('a'+i))
		created, err := userClient(ns).Create(ctx, object(name, tc.base), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		update := func(spec string) error {
			u := object(name, spec)
			u.SetResourceVersion(created.GetResourceVersion())
			_, err := userClient(ns).Update(ctx, u, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
		if err := update(tc.invalid); err == nil {
			t.Errorf("%s: admission accepted the update to %s", tc.name, tc.invalid)
		} else {
			rejections = append(rejections, squash(err.Error()))
		}
		if err := update(tc.valid); err != nil {
			t.Errorf("%s: admission refused the valid update %s: %v", tc.name, tc.valid, err)
		}
	}
	for _, rule := range crdRulesAt(t, repoPath("manifests", "crd", "memgraph.com_memgraphusers.yaml")) {
		found := false
		for _, r := range rejections {
			found = found || strings.Contains(r, rule.message)
		}
		if !found {
			t.Errorf("CEL rule at %s (%q) has no case here that it rejects with its message %q", rule.path, rule.rule, rule.message)
		}
	}
	if _, err := userClient(ns).Create(ctx, object("u", "{cluster: memgraph, privileges: [READ]}"), dryRun); err == nil ||
		!strings.Contains(err.Error(), "Unsupported value: \"READ\"") {
		t.Errorf("an unknown privilege: %v", err)
	}
}

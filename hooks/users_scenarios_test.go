package hooks_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// notAuthorized is Memgraph 3.12's CheckAuthorized text (src/query/interpreter.cpp 10400–10419).
const notAuthorized = `You are not authorized to execute this query on database "memgraph"! Please contact your database ` +
	"administrator. This issue comes from the user having not enough role-based access privileges to execute this " +
	"query. If you want this issue to be resolved, ask your database administrator to grant you a specific " +
	"privilege for query execution."

const authFailure = "Authentication failure"

// A user without spec.passwordSecret: the first pass only generates its Secret; once the Secret
// exists the user is created with its password (as a bcrypt hash) and its role, connects, writes;
// a resync sends nothing. A rotation generates a new password, sets it within one sync, and the
// old one is refused. No password or hash reaches a response's status, a dry-run plan or a log.
func TestAGeneratedUserConnectsWritesAndRotates(t *testing.T) {
	r := newUserRig(t, true)
	r.declare("app", map[string]any{"roles": []any{"readwrite"}})
	r.h.world.ResetLog()
	first := r.sync("app")
	r.assertPhase(first, v1alpha1.UserPending, planner.ReasonCredentialsPending)
	if got := r.sentStatements(); len(got) != 0 {
		t.Fatalf("statements before the Secret exists: %q", got)
	}
	password := r.secretValue("app", "password")
	for key, want := range map[string]string{"username": "app", "password": "generated-password-1",
		"uri": "bolt://memgraph-rw.default.svc.cluster.local:7687", "routingUri": "neo4j://memgraph.default.svc.cluster.local:7687"} {
		if got := r.secretValue("app", key); got != want {
			t.Errorf("generated Secret %s = %q, want %q", key, got, want)
		}
	}

	plan := r.call("app", "?dryRun=true", false)
	if want := []string{"CREATE USER `app` IDENTIFIED BY '<redacted>'", "SET ROLE FOR `app` TO `readwrite`"}; !cmp.Equal(plan.Plan, want) {
		t.Errorf("dry run plan %q, want %q", plan.Plan, want)
	}
	if got := r.sentStatements(); len(got) != 0 {
		t.Fatalf("a dry run sent %q", got)
	}

	ready := r.sync("app")
	r.assertPhase(ready, v1alpha1.UserReady, planner.ReasonUserInForce)
	sent := r.sentStatements()
	if want := []string{"CREATE USER `app` IDENTIFIED BY '<redacted>'", "SET ROLE FOR `app` TO `readwrite`"}; !cmp.Equal(redacted(sent), want) {
		t.Errorf("statements %q, want %q", sent, want)
	}
	if strings.Contains(strings.Join(sent, " "), password) {
		t.Errorf("a statement carries the password itself: %q", sent)
	}
	st := ready.Status
	if st.Username != "app" || st.Secret != "app-credentials" || st.AppliedPasswordVersion != "app-credentials/1" ||
		!cmp.Equal(st.Roles, []string{"readwrite"}) || !slices.Contains(st.Privileges, "CREATE") || !cmp.Equal(st.Databases, []string{"memgraph"}) {
		t.Errorf("status %+v", st)
	}
	if msg := r.run("app", password, "CREATE (n)"); msg != "" {
		t.Fatalf("a write with the generated credentials: %s", msg)
	}

	r.h.world.ResetLog()
	r.assertPhase(r.sync("app"), v1alpha1.UserReady, planner.ReasonUserInForce)
	if got := r.sentStatements(); len(got) != 0 {
		t.Errorf("a converged user sent %q", got)
	}

	r.users["app"].annotations = map[string]any{v1alpha1.AnnotationRotatePassword: "2026-01-02T00:00:00Z"}
	r.assertPhase(r.sync("app"), v1alpha1.UserPending, planner.ReasonCredentialsPending)
	rotated := r.secretValue("app", "password")
	if rotated == password {
		t.Fatal("the rotation kept the password")
	}
	r.h.world.ResetLog()
	after := r.sync("app")
	r.assertPhase(after, v1alpha1.UserReady, planner.ReasonUserInForce)
	if got := redacted(r.sentStatements()); !cmp.Equal(got, []string{"SET PASSWORD FOR `app` TO '<redacted>'"}) {
		t.Errorf("rotation sent %q", got)
	}
	if after.Status.AppliedPasswordVersion == st.AppliedPasswordVersion {
		t.Errorf("appliedPasswordVersion stayed %s", st.AppliedPasswordVersion)
	}
	if msg := r.run("app", password, "MATCH (n) RETURN n"); !strings.Contains(msg, authFailure) {
		t.Errorf("the old password after the rotation: %q, want %s", msg, authFailure)
	}
	if msg := r.run("app", rotated, "CREATE (n)"); msg != "" {
		t.Errorf("the rotated password: %s", msg)
	}
	r.h.sync()
	r.h.assertConverged()
	r.assertSecretsKept(password, rotated, authPassword)
}

// A read-only user is refused a write with Memgraph's own text; a privilege granted or a role
// removed by hand is put back on the next sync; deleting the MemgraphUser drops the user, whose
// login is then refused.
func TestAReadOnlyUserDriftAndDeletion(t *testing.T) {
	r := newUserRig(t, true)
	r.passwords["default/reader-password"] = passwordSecret("reader-password", "reader-s3cret", "7")
	r.declare("reader", map[string]any{"roles": []any{"readonly", reportingRole}, "passwordSecret": map[string]any{"name": "reader-password"}})
	r.h.world.ResetLog()
	r.assertPhase(r.sync("reader"), v1alpha1.UserReady, planner.ReasonUserInForce)
	want := []string{"CREATE ROLE IF NOT EXISTS `reporting`", "GRANT MATCH, STATS TO ROLE `reporting`",
		"CREATE USER `reader` IDENTIFIED BY '<redacted>'", "SET ROLE FOR `reader` TO `readonly`, `reporting`"}
	if got := redacted(r.sentStatements()); !cmp.Equal(got, want) {
		t.Errorf("statements %q, want %q", got, want)
	}
	if msg := r.run("reader", "reader-s3cret", "MATCH (n) RETURN n"); msg != "" {
		t.Errorf("a read: %s", msg)
	}
	if msg := r.run("reader", "reader-s3cret", "CREATE (n)"); msg != notAuthorized {
		t.Errorf("a write by the read-only user: %q, want Memgraph's refusal", msg)
	}

	r.asHook("GRANT CREATE TO USER `reader`", "CLEAR ROLE FOR `reader`", "REVOKE STATS FROM ROLE `reporting`")
	r.h.world.ResetLog()
	r.assertPhase(r.sync("reader"), v1alpha1.UserReady, planner.ReasonUserInForce)
	want = []string{"GRANT STATS TO ROLE `reporting`", "SET ROLE FOR `reader` TO `readonly`, `reporting`", "REVOKE CREATE FROM USER `reader`"}
	if got := r.sentStatements(); !cmp.Equal(got, want) {
		t.Errorf("drift repair %q, want %q", got, want)
	}
	if msg := r.run("reader", "reader-s3cret", "CREATE (n)"); msg != notAuthorized {
		t.Errorf("a write after the repair: %q", msg)
	}

	r.passwords["default/reader-password"] = passwordSecret("reader-password", "reader-n3w", "8")
	r.h.world.ResetLog()
	r.sync("reader")
	if got := redacted(r.sentStatements()); !cmp.Equal(got, []string{"SET PASSWORD FOR `reader` TO '<redacted>'"}) {
		t.Errorf("a changed password Secret sent %q", got)
	}
	if msg := r.run("reader", "reader-s3cret", "RETURN 1"); !strings.Contains(msg, authFailure) {
		t.Errorf("the old password: %q", msg)
	}

	fin := r.call("reader", "", true)
	if !fin.Finalized {
		t.Fatalf("finalize: %+v", fin.Status)
	}
	if msg := r.run("reader", "reader-n3w", "RETURN 1"); !strings.Contains(msg, authFailure) {
		t.Errorf("the login of a deleted user: %q", msg)
	}
	if again := r.call("reader", "", true); !again.Finalized {
		t.Error("a second finalize of a dropped user is not finalized")
	}
	r.assertSecretsKept("reader-s3cret", "reader-n3w", authPassword)
}

func passwordSecret(name, password, version string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": name, "namespace": "default", "resourceVersion": version},
		"data":     map[string]any{"password": b64(password)}}
}

// asHook runs statements on the MAIN as the hook's user, as an operator changing users by hand.
func (r *userRig) asHook(statements ...string) {
	r.t.Helper()
	for _, s := range statements {
		if msg := r.run(authUser, authPassword, s); msg != "" {
			r.t.Fatalf("%s: %s", s, msg)
		}
	}
}

// Each bad declaration is a condition, and nothing reaches a data instance.
func TestBadUserDeclarationsSendNothing(t *testing.T) {
	r := newUserRig(t, true)
	r.passwords["default/pw"] = passwordSecret("pw", "p", "1")
	long := strings.Repeat("x", 73)
	r.passwords["default/long"] = passwordSecret("long", long, "1")
	for _, tc := range []struct {
		name   string
		spec   map[string]any
		phase  v1alpha1.UserPhase
		reason string
		says   string
	}{
		{"no such cluster", map[string]any{"cluster": "nowhere"}, v1alpha1.UserPending, planner.ReasonUserClusterNotFound, "MemgraphCluster nowhere does not exist"},
		{"an undeclared role", map[string]any{"roles": []any{"auditors"}}, v1alpha1.UserFailed, planner.ReasonUnknownRole, "role auditors"},
		{"the hook's own user", map[string]any{"username": authUser}, v1alpha1.UserFailed, planner.ReasonReservedUser, "spec.auth user"},
		{"a privilege Memgraph does not have", map[string]any{"privileges": []any{"READ"}}, v1alpha1.UserFailed, planner.ReasonUserSpecInvalid,
			v1alpha1.MsgUnknownPrivilege},
		{"ALL beside another", map[string]any{"privileges": []any{"ALL", "DUMP"}}, v1alpha1.UserFailed, planner.ReasonUserSpecInvalid,
			v1alpha1.MsgPrivilegesAll},
		{"a password Secret that does not exist", map[string]any{"passwordSecret": map[string]any{"name": "absent"}}, v1alpha1.UserPending,
			planner.ReasonPasswordSecret, "Secret default/absent (spec.passwordSecret) does not exist"},
		{"a password bcrypt cannot hold", map[string]any{"passwordSecret": map[string]any{"name": "long"}}, v1alpha1.UserPending,
			planner.ReasonPasswordSecret, "73 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := tc.spec["passwordSecret"]; !ok {
				tc.spec["passwordSecret"] = map[string]any{"name": "pw"}
			}
			r.declare(tc.name, tc.spec)
			r.h.world.ResetLog()
			msg := r.assertPhase(r.sync(tc.name), tc.phase, tc.reason)
			if !strings.Contains(msg, tc.says) {
				t.Errorf("message %q does not say %q", msg, tc.says)
			}
			if q := r.h.world.Queries(); slices.ContainsFunc(q, func(q sim.Query) bool { return strings.Contains(q.Host, "data") }) {
				t.Errorf("queries reached a data instance: %+v", q)
			}
		})
	}
	delete(r.h.spec, "auth")
	r.declare("no-auth", map[string]any{"passwordSecret": map[string]any{"name": "pw"}})
	r.assertPhase(r.sync("no-auth"), v1alpha1.UserFailed, planner.ReasonClusterWithoutAuth)
	r.assertSecretsKept(long, "73 bytes of x")
}

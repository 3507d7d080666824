package hooks_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// On a MAIN without any user the first pass creates the cluster's spec.auth user first —
// Memgraph makes the first user an admin, and creates the built-in roles with it — so that the
// hook never locks itself out, then the declared user with a built-in role; the cluster's own
// sync goes on logging in as spec.auth's user, and a handover, which needs SHOW REPLICAS on the
// MAIN, still happens.
func TestTheFirstPassCreatesTheHooksOwnUserFirst(t *testing.T) {
	r := newUserRig(t, false)
	r.passwords["default/pw"] = passwordSecret("pw", "app-pw", "1")
	r.declare("app", map[string]any{"passwordSecret": map[string]any{"name": "pw"}, "privileges": []any{"MATCH"}, "roles": []any{"readonly"}})
	r.h.world.ResetLog()
	r.assertPhase(r.sync("app"), v1alpha1.UserReady, planner.ReasonUserInForce)
	want := []string{"CREATE USER `" + authUser + "` IDENTIFIED BY '<redacted>'", "CREATE USER `app` IDENTIFIED BY '<redacted>'",
		"SET ROLE FOR `app` TO `readonly`", "GRANT MATCH TO USER `app`"}
	if got := redacted(r.sentStatements()); !cmp.Equal(got, want) {
		t.Errorf("statements %q, want %q", got, want)
	}
	if msg := r.run(authUser, authPassword, "SHOW ROLES FOR USER `"+authUser+"`"); msg != "" {
		t.Errorf("the hook's user: %s", msg)
	}
	if msg := r.run("app", "app-pw", "CREATE (n)"); msg != notAuthorized {
		t.Errorf("a write by a user with readonly and MATCH: %q", msg)
	}
	r.h.spec["preferredMain"] = "instance_1"
	r.h.sync()
	r.h.sync()
	r.h.assertMains("instance_1")
	r.h.assertConverged()
	r.assertSecretsKept("app-pw", authPassword)
}

// A refusal is a condition with Memgraph's own words and the statement, its password hidden.
func TestARefusalIsMemgraphsOwnText(t *testing.T) {
	r := newUserRig(t, true)
	r.passwords["default/pw"] = passwordSecret("pw", "app-pw", "1")
	r.declare("app", map[string]any{"passwordSecret": map[string]any{"name": "pw"}, "databases": []any{"sales"}, "mainDatabase": "sales"})
	msg := r.assertPhase(r.sync("app"), v1alpha1.UserFailed, planner.ReasonMemgraphRefused)
	if want := "GRANT DATABASE `sales` TO USER `app`: Tried to retrieve an unknown database \"sales\"."; msg != want {
		t.Errorf("condition %q, want %q", msg, want)
	}
	r.asHook("CREATE DATABASE sales")
	r.h.world.ResetLog()
	st := r.sync("app").Status
	if got := r.sentStatements(); !cmp.Equal(got, []string{"GRANT DATABASE `sales` TO USER `app`", "REVOKE DATABASE `memgraph` FROM USER `app`",
		"SET MAIN DATABASE `sales` FOR USER `app`"}) {
		t.Errorf("statements %q", got)
	}
	if st.Phase != v1alpha1.UserReady || !cmp.Equal(st.Databases, []string{"sales"}) || st.MainDatabase != "sales" {
		t.Errorf("status %+v", st)
	}
	r.h.world.ResetLog()
	r.sync("app")
	if got := r.sentStatements(); len(got) != 0 {
		t.Errorf("converged on its own database, sent %q", got)
	}
}

// Users live on every data instance: after Memgraph fails over, the new MAIN has the user and
// nothing needs sending. A new cluster restored from a snapshot has none (a snapshot holds no
// users): its first pass creates the user with the Secret's password — the status's record of an
// earlier one notwithstanding — and the user connects to the restored data.
func TestUsersSurviveAFailoverAndComeBackAfterARestore(t *testing.T) {
	r := newUserRig(t, true)
	r.declare("app", map[string]any{"roles": []any{"readwrite"}})
	r.sync("app")
	r.assertPhase(r.sync("app"), v1alpha1.UserReady, planner.ReasonUserInForce)
	password := r.secretValue("app", "password")
	for range 3 {
		if msg := r.run("app", password, "CREATE (n)"); msg != "" {
			t.Fatal(msg)
		}
	}

	old := r.h.mains()[0]
	var ord int
	fmt.Sscanf(old, "instance_%d", &ord)
	r.h.kill(r.h.network().DataInstance(ord).Host)
	r.h.advance(6 * time.Second)
	r.h.sync()
	if now := r.h.mains(); len(now) != 1 || now[0] == old {
		t.Fatalf("no failover: MAINs %v (was %s)", now, old)
	}
	r.h.world.ResetLog()
	r.assertPhase(r.sync("app"), v1alpha1.UserReady, planner.ReasonUserInForce)
	if got := r.sentStatements(); len(got) != 0 {
		t.Errorf("after a failover the hook sent %q", got)
	}
	if msg := r.run("app", password, "MATCH (n) RETURN count(n)"); msg != "" {
		t.Fatalf("a read on the new MAIN: %s", msg)
	}

	snapshot := r.snapshotOnMain()
	restored := newUserRig(t, true)
	restored.users["app"] = r.users["app"] // the same MemgraphUser, its status and its Secret
	restored.asHook("RECOVER SNAPSHOT '" + snapshot + "'")
	restored.h.world.ResetLog()
	restored.assertPhase(restored.sync("app"), v1alpha1.UserReady, planner.ReasonUserInForce)
	if got := redacted(restored.sentStatements()); !cmp.Equal(got, []string{"CREATE USER `app` IDENTIFIED BY '<redacted>'", "SET ROLE FOR `app` TO `readwrite`"}) {
		t.Errorf("the restored cluster's first pass sent %q", got)
	}
	if msg := restored.run("app", password, "MATCH (n) DELETE n"); msg != "" {
		t.Errorf("the user on the restored cluster: %s", msg)
	}
}

// snapshotOnMain takes a snapshot on the MAIN as the hook's user and returns its file's path.
func (r *userRig) snapshotOnMain() string {
	r.t.Helper()
	records, msg := r.query(authUser, authPassword, "CREATE SNAPSHOT")
	if msg != "" || len(records) != 1 {
		r.t.Fatalf("CREATE SNAPSHOT: %d records, %q", len(records), msg)
	}
	path, _ := records[0].Get("path")
	return fmt.Sprint(path)
}

func (r *userRig) mainBolt() string {
	var ord int
	fmt.Sscanf(r.h.mains()[0], "instance_%d", &ord)
	return r.h.network().DataInstance(ord).BoltServer
}

// Two calls of the hook at once for a new user both end with the user in force and created
// once: the one whose CREATE USER finds it created sets its password instead.
func TestTwoPassesAtOnceCreateTheUserOnce(t *testing.T) {
	r := newUserRig(t, true)
	r.passwords["default/pw"] = passwordSecret("pw", "app-pw", "1")
	r.declare("app", map[string]any{"passwordSecret": map[string]any{"name": "pw"}, "roles": []any{reportingRole}})
	req := r.request("app", false)
	var wg sync.WaitGroup
	bodies := make([]string, 2)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := r.h.post("/user/sync", req)
			bodies[i] = fmt.Sprint(code, " ", string(body))
		}()
	}
	wg.Wait()
	for _, b := range bodies {
		if !strings.HasPrefix(b, "200 ") || !strings.Contains(b, `"phase":"Ready"`) {
			t.Errorf("a concurrent pass: %s", b)
		}
	}
	creates := 0
	for _, q := range r.h.world.Queries() {
		if strings.HasPrefix(q.Text, "CREATE USER `app`") && !q.Failed {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("CREATE USER app succeeded %d times", creates)
	}
	if msg := r.run("app", "app-pw", "MATCH (n) RETURN n"); msg != "" {
		t.Errorf("login after the concurrent passes: %s", msg)
	}
}

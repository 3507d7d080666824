package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"golang.org/x/crypto/bcrypt"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// bcryptLiteral is "bcrypt:" and a hash of password, as Memgraph takes a user-defined hash.
func bcryptLiteral(t testing.TB, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return "bcrypt:" + string(h)
}

// failed is the message of a failed query, "" when it succeeded.
func failed(out outcome) string {
	if out.err == nil {
		return ""
	}
	return out.err.Msg
}

func names(rows []map[string]any, key string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprint(r[key]))
	}
	return out
}

// The first user of an instance turns authentication on and, with Memgraph 3.12 Enterprise,
// brings the built-in roles and becomes an admin (interpreter.cpp 1076–1153, auth.cpp 798–823,
// 1092–1150); a user created later has no privilege until granted, and logs in with the password a
// bcrypt hash was made of (crypto.cpp 262–299).
func TestUsersRolesAndPrivilegesAsMemgraph312(t *testing.T) {
	w := startWorld(t, 0, 1)
	anon := dial(t, w, dataBolt(1))
	first := anon.must("CREATE USER hooks IDENTIFIED BY 'pw'")
	if want := []string{"User 'hooks' created. Built-in roles created: 'admin', 'readwrite', 'readonly'. User 'hooks' assigned built-in role 'admin', with full access to all data and privileges."}; !cmp.Equal(first.notes, want) {
		t.Errorf("first user's notification %q, want %q", first.notes, want)
	}
	if got := failed(anon.run("SHOW USERS", nil)); got != msgNotAuthorized("memgraph") {
		t.Errorf("a session opened before the first user: %q, want the refusal", got)
	}
	if got := loginOutcome(t, w, dataBolt(1), neo4j.BasicAuth("hooks", "wrong", "")); got != "Memgraph.ClientError.Security.Unauthenticated: Authentication failure" {
		t.Errorf("a wrong password: %q", got)
	}
	admin := dialAs(t, w, dataBolt(1), "hooks", "pw")
	roles := admin.must("SHOW ROLES")
	if got := fmt.Sprint(names(roles.rows, "role"), names(roles.rows, "builtin")); got != "[admin readonly readwrite] [true true true]" {
		t.Errorf("SHOW ROLES %s", got)
	}
	later := admin.must("CREATE USER `app` IDENTIFIED BY '" + bcryptLiteral(t, "app-pw") + "'")
	if want := []string{"User 'app' created. No roles or privileges assigned."}; !cmp.Equal(later.notes, want) {
		t.Errorf("second user's notification %q", later.notes)
	}
	app := dialAs(t, w, dataBolt(1), "app", "app-pw")
	if got := failed(app.run("MATCH (n) RETURN n", nil)); got != msgNotAuthorized("memgraph") {
		t.Errorf("MATCH by a user without privileges: %q", got)
	}
	admin.must("GRANT MATCH, CREATE TO USER `app`")
	if got := failed(app.run("CREATE (n)", nil)); got != "" {
		t.Errorf("CREATE after GRANT CREATE: %q", got)
	}
	if got := failed(app.run("MATCH (n) DELETE n", nil)); got != msgNotAuthorized("memgraph") {
		t.Errorf("DELETE without DELETE: %q", got)
	}
	admin.must("CREATE ROLE IF NOT EXISTS `writers`")
	if got := admin.must("CREATE ROLE IF NOT EXISTS `writers`").notes; !cmp.Equal(got, []string{"Role 'writers' already exists."}) {
		t.Errorf("CREATE ROLE IF NOT EXISTS again: %q", got)
	}
	admin.must("GRANT DELETE, MATCH TO ROLE `writers`")
	admin.must("DENY MATCH TO USER `app`")
	admin.must("SET ROLE FOR `app` TO `writers`, `readonly`")
	privs := admin.must("SHOW PRIVILEGES FOR USER `app` ON DATABASE `memgraph`")
	var got []string
	for _, r := range privs.rows {
		got = append(got, fmt.Sprintf("%s|%s|%s", r["privilege"], r["effective"], r["description"]))
	}
	want := []string{"CREATE|GRANT|GRANTED TO USER", "DELETE|GRANT|GRANTED TO ROLE", "MATCH|DENY|DENIED TO USER, GRANTED TO ROLE",
		"STATS|GRANT|GRANTED TO ROLE", "READ ON ALL LABELS|GRANT|GLOBAL LABEL PERMISSION GRANTED TO ROLE",
		"READ ON ALL EDGE_TYPES|GRANT|GLOBAL EDGE_TYPE PERMISSION GRANTED TO ROLE"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SHOW PRIVILEGES FOR USER app (-want +got):\n%s", diff)
	}
	if got := names(admin.must("SHOW ROLES FOR USER `app`").rows, "role"); !cmp.Equal(got, []string{"readonly", "writers"}) {
		t.Errorf("SHOW ROLES FOR USER app %v", got)
	}
	dbs := admin.must("SHOW DATABASE PRIVILEGES FOR USER `app`").rows[0]
	if fmt.Sprint(dbs["grants"], dbs["denies"]) != "[memgraph] []" {
		t.Errorf("SHOW DATABASE PRIVILEGES FOR USER app: %v", dbs)
	}
	admin.must("CREATE DATABASE sales")
	admin.must("GRANT DATABASE `sales` TO USER `app`")
	admin.must("SET MAIN DATABASE `sales` FOR USER `app`")
	admin.must("GRANT DATABASE * TO ROLE `writers`")
	if dbs := admin.must("SHOW DATABASE PRIVILEGES FOR USER `app`").rows[0]; fmt.Sprint(dbs["grants"]) != "*" {
		t.Errorf("a role granting every database: grants %v, want *", dbs["grants"])
	}

	for query, want := range map[string]string{
		"CREATE USER `app` IDENTIFIED BY 'x'":           msgUserExists("app"),
		"SET PASSWORD FOR `nobody` TO 'x'":              msgNoUser("nobody"),
		"DROP USER `nobody`":                            msgDropNoUser("nobody"),
		"GRANT MATCH TO USER `nobody`":                  msgNoUserOrRole("nobody"),
		"SET ROLE FOR `app` TO `nothing`":               msgNoRole("nothing"),
		"GRANT DATABASE `nowhere` TO USER `app`":        msgUnknownDatabase("nowhere"),
		"GRANT DATABASE `sales` TO USER `nobody`":       msgNoUserNorRole("nobody"),
		"SET MAIN DATABASE `sales` FOR ROLE `readonly`": msgSetMainDatabase("sales", "readonly"),
		"SHOW PRIVILEGES FOR USER `app`":                msgShowPrivilegesMT,
		"SHOW ROLES FOR USER `nobody`":                  msgNoUser("nobody"),
		"SHOW DATABASE PRIVILEGES FOR USER `nobody`":    "Missing user 'nobody'.",
		"DROP ROLE `writers`":                           msgRoleAssigned("writers"),
		"CREATE USER `a b` IDENTIFIED BY 'x'":           msgInvalidUserName,
		"CREATE USER `x` IDENTIFIED BY 42":              msgPasswordLiteral,
	} {
		if got := failed(admin.run(query, nil)); got != want {
			t.Errorf("%s: %q, want %q", query, got, want)
		}
	}
	if out := admin.run("CREATE USER `p` IDENTIFIED BY $password", map[string]any{"password": "x"}); out.err == nil || out.phase != "RUN" {
		t.Errorf("a password as a parameter: %+v, want a syntax error at RUN (the grammar takes a literal)", out.err)
	}
}

// A password changes with SET PASSWORD, and a dropped user can no longer log in; its open
// session is refused the next query (QueryUserOrRole::IsAuthorized re-reads the user:
// glue/query_user.cpp 19–43).
func TestPasswordChangesAndDroppedUsers(t *testing.T) {
	w := startWorld(t, 0, 1)
	anon := dial(t, w, dataBolt(1))
	anon.must("CREATE USER hooks IDENTIFIED BY 'pw'")
	admin := dialAs(t, w, dataBolt(1), "hooks", "pw")
	admin.must("CREATE USER `app` IDENTIFIED BY '" + bcryptLiteral(t, "old") + "'")
	admin.must("SET ROLE FOR `app` TO `readwrite`")
	open := dialAs(t, w, dataBolt(1), "app", "old")
	open.must("CREATE (n)")
	admin.must("SET PASSWORD FOR `app` TO '" + bcryptLiteral(t, "new") + "'")
	refused := "Memgraph.ClientError.Security.Unauthenticated: Authentication failure"
	if got := loginOutcome(t, w, dataBolt(1), neo4j.BasicAuth("app", "old", "")); got != refused {
		t.Errorf("the old password after SET PASSWORD: %q", got)
	}
	dialAs(t, w, dataBolt(1), "APP", "new").must("MATCH (n) RETURN count(n)")
	admin.must("DROP USER `app`")
	if got := loginOutcome(t, w, dataBolt(1), neo4j.BasicAuth("app", "new", "")); got != refused {
		t.Errorf("a dropped user's login: %q", got)
	}
	if got := failed(open.run("CREATE (n)", nil)); got != msgNotAuthorized("memgraph") {
		t.Errorf("a dropped user's open session: %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s := admin.drv.NewSession(ctx, neo4j.SessionConfig{})
	defer s.Close(ctx)
	tx, err := s.BeginTransaction(ctx)
	must(t, err)
	if _, err = tx.Run(ctx, "SHOW USERS", nil); asNeo4j(t, err).Msg != msgUserModificationTx {
		t.Errorf("SHOW USERS in a transaction: %v", err)
	}
}

// The MAIN replicates its users and roles to its replicas, which refuse to change them but show
// them and authenticate them (interpreter.cpp 1045–1063; auth.cpp 123–190); a replica that was
// down gets them when it returns (SystemRecoveryRpc), and the MAIN a failover makes has them. A
// snapshot holds no users: RECOVER SNAPSHOT leaves them as they are.
func TestUsersReachTheReplicasAndSurviveAFailover(t *testing.T) {
	w, c1 := setupCluster(t, 1, 3)
	main := dial(t, w, dataBolt(1))
	main.must("CREATE USER hooks IDENTIFIED BY 'pw'")
	admin := dialAs(t, w, dataBolt(1), "hooks", "pw")
	must(t, w.Kill("data-3.mg.svc"))
	admin.must("CREATE USER `app` IDENTIFIED BY '" + bcryptLiteral(t, "app-pw") + "'")
	admin.must("SET ROLE FOR `app` TO `readonly`")
	replica := dialAs(t, w, dataBolt(2), "app", "app-pw")
	if got := failed(replica.run("CREATE USER `x` IDENTIFIED BY 'y'", nil)); got != msgAuthOnReplica {
		t.Errorf("CREATE USER on a replica by a user without AUTH: %q", got)
	}
	r2 := dialAs(t, w, dataBolt(2), "hooks", "pw")
	if got := names(r2.must("SHOW USERS").rows, "user"); !cmp.Equal(got, []string{"app", "hooks"}) {
		t.Errorf("SHOW USERS on a replica: %v", got)
	}
	if got := failed(r2.run("DROP USER `app`", nil)); got != msgAuthOnReplica {
		t.Errorf("DROP USER on a replica: %q, want %q", got, msgAuthOnReplica)
	}
	must(t, w.Restart("data-3.mg.svc"))
	dialAs(t, w, dataBolt(3), "app", "app-pw").must("MATCH (n) RETURN n")

	must(t, w.Kill("data-1.mg.svc"))
	advance(t, w, 6*time.Second)
	if got := row(t, c1.must("SHOW INSTANCES").rows, "instance_1")[4]; got != "down" {
		t.Fatalf("instance_1 is %s after its death", got)
	}
	newMain := ""
	for _, r := range table(c1.must("SHOW INSTANCES").rows) {
		if r[5] == "main" {
			newMain = r[0]
		}
	}
	n := map[string]int{"instance_2": 2, "instance_3": 3}[newMain]
	if n == 0 {
		t.Fatalf("no failover: %v", table(c1.must("SHOW INSTANCES").rows))
	}
	fresh := dialAs(t, w, dataBolt(n), "hooks", "pw")
	fresh.must("GRANT CREATE TO USER `app`")
	if got := names(fresh.must("SHOW USERS").rows, "user"); !cmp.Equal(got, []string{"app", "hooks"}) {
		t.Errorf("SHOW USERS on the new MAIN: %v", got)
	}

	path := fmt.Sprint(fresh.must("CREATE SNAPSHOT").rows[0]["path"])
	must(t, w.StartData(dataSpec(9)))
	empty := dial(t, w, dataBolt(9))
	empty.must("RECOVER SNAPSHOT '" + path + "'")
	if got := empty.must("SHOW USERS").rows; len(got) != 0 {
		t.Errorf("users after RECOVER SNAPSHOT on an instance without any: %v", got)
	}
}

// The hook names Memgraph 3.12's privileges as the simulator, which read them in Memgraph's
// source, does.
func TestTheHookNamesMemgraphsPrivileges(t *testing.T) {
	var sims []string
	for _, p := range privilegesAll {
		sims = append(sims, string(p))
	}
	if diff := cmp.Diff(sims, memgraph.Privileges); diff != "" {
		t.Errorf("privileges (-simulator +memgraph):\n%s", diff)
	}
	for _, p := range privilegesAll {
		if grantablePrivilege(string(p)) != memgraph.Grantable(string(p)) {
			t.Errorf("%s: GRANT takes it in the simulator %v, in the hook's vocabulary %v", p, grantablePrivilege(string(p)), memgraph.Grantable(string(p)))
		}
	}
	builtin := sortedNames(builtinRoles())
	if diff := cmp.Diff(builtin, []string{"admin", "readonly", "readwrite"}); diff != "" || len(memgraph.BuiltinRoles) != 3 {
		t.Errorf("built-in roles: %v, the hook knows %v", builtin, memgraph.BuiltinRoles)
	}
}

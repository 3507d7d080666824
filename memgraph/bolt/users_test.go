package bolt_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

func passwordHash(t testing.TB, password string) memgraph.Password {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return memgraph.PasswordHash("bcrypt:" + string(h))
}

// The auth reads and statements over Bolt against the simulated MAIN: what they read back is what
// they wrote, the password travels only inside the statement as a bcrypt hash (the plain
// password never leaves the client), and neither the debug log nor an error shows the hash.
func TestUserClientOnTheMain(t *testing.T) {
	w := newWorld(t)
	admin := sim.Auth{Username: "hooks", Password: "hooks-pw"}
	spec := sim.DataSpec{Host: dataHost("us", 0), BoltPort: boltPort, ManagementPort: managementPort, Auth: &admin}
	if err := w.StartData(spec); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	pool := newPool(t, w, func(o *bolt.PoolOptions) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ctx := testContext(t)
	c := pool.WithAuth(memgraph.Credentials{Username: admin.Username, Password: admin.Password}).Client(dataAddr("us", 0)).(memgraph.UserClient)
	app := memgraph.UserTarget("app")
	pw := passwordHash(t, "app-secret")
	for _, s := range []memgraph.AuthStatement{
		{Kind: memgraph.AuthCreateUser, Target: app, Password: pw},
		{Kind: memgraph.AuthCreateRole, Target: memgraph.RoleTarget("writers")},
		{Kind: memgraph.AuthGrant, Target: memgraph.RoleTarget("writers"), Privileges: []string{"CREATE", "MATCH"}},
		{Kind: memgraph.AuthSetRoles, Target: app, Roles: []string{"writers"}},
		{Kind: memgraph.AuthGrant, Target: app, Privileges: []string{"DUMP"}},
	} {
		if err := c.RunAuth(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	users, err := c.ShowUsers(ctx)
	if err != nil || !cmp.Equal(users, []string{"app", "hooks"}) {
		t.Errorf("ShowUsers = %v, %v", users, err)
	}
	roles, err := c.ShowRoles(ctx)
	if want := []memgraph.RoleInfo{{Name: "admin", Builtin: true}, {Name: "readonly", Builtin: true}, {Name: "readwrite", Builtin: true}, {Name: "writers", Builtin: false}}; err != nil || !cmp.Equal(roles, want) {
		t.Errorf("ShowRoles = %v, %v", roles, err)
	}
	privs, err := c.ShowPrivileges(ctx, app, memgraph.DefaultDatabase)
	want := []memgraph.PrivilegeRow{{Privilege: "CREATE", Effective: "GRANT", Description: "GRANTED TO ROLE"}, {Privilege: "MATCH", Effective: "GRANT", Description: "GRANTED TO ROLE"}, {Privilege: "DUMP", Effective: "GRANT", Description: "GRANTED TO USER"}}
	if diff := cmp.Diff(want, privs); err != nil || diff != "" {
		t.Errorf("ShowPrivileges (-want +got): %v\n%s", err, diff)
	}
	of, err := c.ShowRolesForUser(ctx, "app")
	if err != nil || !cmp.Equal(of, []string{"writers"}) {
		t.Errorf("ShowRolesForUser = %v, %v", of, err)
	}
	dbs, err := c.ShowDatabasePrivileges(ctx, app)
	if want := (memgraph.DatabaseAccess{Granted: []string{"memgraph"}, Denied: []string{}}); err != nil || !cmp.Equal(dbs, want) {
		t.Errorf("ShowDatabasePrivileges = %+v, %v", dbs, err)
	}
	if _, err := pool.WithAuth(memgraph.Credentials{Username: "app", Password: "app-secret"}).Client(dataAddr("us", 0)).ShowReplicas(ctx); memgraph.KindOf(err) == memgraph.KindUnauthenticated {
		t.Errorf("app's login with the password the hash was made of: %v", err)
	}

	err = c.RunAuth(ctx, memgraph.AuthStatement{Kind: memgraph.AuthCreateUser, Target: app, Password: pw})
	var e *memgraph.Error
	if !errors.As(err, &e) || e.Query != "CREATE USER `app` IDENTIFIED BY '<redacted>'" || !strings.Contains(e.Message, "already exists") {
		t.Errorf("CREATE USER of an existing user: %v", err)
	}
	secret := strings.TrimPrefix(memgraph.AuthStatement{Kind: memgraph.AuthSetPassword, Target: app, Password: pw}.Query(), "SET PASSWORD FOR `app` TO 'bcrypt:")
	for what, text := range map[string]string{"log": logs.String(), "error": err.Error()} {
		if strings.Contains(text, strings.TrimSuffix(secret, "'")) || strings.Contains(text, "app-secret") {
			t.Errorf("the %s shows the password or its hash:\n%s", what, text)
		}
	}
	if !bytes.Contains([]byte(logs.String()), []byte("IDENTIFIED BY '<redacted>'")) {
		t.Errorf("the debug log does not show the statements' redacted text:\n%s", logs.String())
	}
}

package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// loginOutcome connects with auth and runs one query: "" on success, else the error's code.
func loginOutcome(t *testing.T, w *World, address string, auth neo4j.AuthToken) string {
	t.Helper()
	drv, err := neo4j.NewDriverWithContext("bolt://"+w.Resolve(address), auth, func(c *neo4j.Config) {
		c.SocketConnectTimeout = 2 * time.Second
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	defer drv.Close(ctx)
	s := drv.NewSession(ctx, neo4j.SessionConfig{})
	defer s.Close(ctx)
	res, err := s.Run(ctx, "SHOW INSTANCE", nil)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	if err == nil {
		return ""
	}
	if ne := asNeo4j(t, err); ne.Code != "" {
		return ne.Code + ": " + ne.Msg
	}
	return err.Error()
}

// TestDataInstanceLoginFollowsItsUser follows Memgraph v3.12.0 glue/SessionHL.cpp 286–316 (with
// a user, only its credentials authenticate; without one, anything does) and
// communication/bolt/v1/states/init.hpp 34–42 and 119–124 (the refusal text; coordinators
// ignore auth).
func TestDataInstanceLoginFollowsItsUser(t *testing.T) {
	w := startWorld(t, 1, 1)
	locked := dataSpec(2)
	locked.Auth = &Auth{Username: "admin", Password: "s3cret"}
	must(t, w.StartData(locked))
	refused := "Memgraph.ClientError.Security.Unauthenticated: Authentication failure"
	onlyCoordinator := "Memgraph.ClientError.MemgraphError.MemgraphError: Only coordinator can run SHOW INSTANCE query."
	cases := []struct {
		name, to string
		auth     neo4j.AuthToken
		want     string
	}{
		{"user, right credentials", dataBolt(2), neo4j.BasicAuth("admin", "s3cret", ""), onlyCoordinator},
		{"user, wrong password", dataBolt(2), neo4j.BasicAuth("admin", "nope", ""), refused},
		{"user, no credentials", dataBolt(2), neo4j.NoAuth(), refused},
		{"no user, any credentials", dataBolt(1), neo4j.BasicAuth("who", "ever", ""), onlyCoordinator},
		{"no user, no credentials", dataBolt(1), neo4j.NoAuth(), onlyCoordinator},
		{"coordinator ignores auth", coordBolt(1), neo4j.BasicAuth("admin", "nope", ""), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := loginOutcome(t, w, tc.to, tc.auth); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCredentialsAreNeverPrinted: a DataSpec in an error or a log shows no credentials.
func TestCredentialsAreNeverPrinted(t *testing.T) {
	spec := DataSpec{Host: "h", Auth: &Auth{Username: "admin", Password: "s3cret"}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, spec); strings.Contains(s, "s3cret") || strings.Contains(s, "admin") {
			t.Errorf("%s prints the credentials: %s", verb, s)
		}
	}
	w := startWorld(t, 0, 0)
	if err := w.StartData(spec); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("StartData of an incomplete spec: %v", err)
	}
}

// TestDataQueriesNeedTheirPrivileges follows Memgraph v3.12.0: each query the hook sends to a
// data instance needs one privilege (src/query/frontend/semantic/required_privileges.cpp 121–137,
// 196), which Interpreter::CheckAuthorized checks once the query is prepared
// (glue/SessionHL.cpp 450–453), naming the database Prepare settled on (interpreter.cpp
// 10365–10419). A user denied that privilege gets the refusal at RUN; one denied any other runs
// the query (each answer below is the query's own); Prepare's refusals come first.
func TestDataQueriesNeedTheirPrivileges(t *testing.T) {
	w := startWorld(t, 0, 0)
	cases := []struct {
		query  string
		needs  Privilege
		answer string // what a user with the privilege gets ("" for success)
	}{
		{"SHOW REPLICAS", PrivilegeReplication, ""},
		{"SHOW REPLICATION ROLE", PrivilegeReplication, ""},
		{"CREATE SNAPSHOT", PrivilegeDurability, ""},
		{"SHOW SNAPSHOTS", PrivilegeDurability, ""},
		{"RECOVER SNAPSHOT '/nowhere/snapshot'", PrivilegeDurability, msgRecoverMissing},
		{"RELOAD BOLT_SERVER TLS", PrivilegeReloadTLS, msgReloadBoltUnset},
		{"RELOAD INTRA_CLUSTER TLS", PrivilegeReloadTLS, "cluster server TLS: Cluster server TLS: key or certificate file is empty."},
	}
	for i, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			for j, denied := range []Privilege{tc.needs, otherPrivilege(tc.needs)} {
				spec := dataSpec(10*i + j + 1)
				spec.Auth = &Auth{Username: "hooks", Password: "pw", Denied: []Privilege{denied}}
				must(t, w.StartData(spec))
				out := dialAs(t, w, spec.Host+":7687", "hooks", "pw").run(tc.query, nil)
				got := ""
				if out.err != nil {
					got = out.err.Msg
				}
				want := tc.answer
				if denied == tc.needs {
					want = msgNotAuthorized("memgraph")
					if out.phase != "RUN" {
						t.Errorf("refused at %s, want RUN", out.phase)
					}
				}
				if got != want {
					t.Errorf("user denied %s: %q, want %q", denied, got, want)
				}
			}
		})
	}

	spec := dataSpec(100)
	spec.Auth = &Auth{Username: "hooks", Password: "pw", Denied: []Privilege{PrivilegeDurability}}
	must(t, w.StartData(spec))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s := dialAs(t, w, spec.Host+":7687", "hooks", "pw").drv.NewSession(ctx, neo4j.SessionConfig{})
	defer s.Close(ctx)
	tx, err := s.BeginTransaction(ctx)
	must(t, err)
	_, err = tx.Run(ctx, "CREATE SNAPSHOT", nil)
	if ne := asNeo4j(t, err); ne.Msg != msgMulticommand("Creating snapshots") {
		t.Errorf("CREATE SNAPSHOT in a transaction by a user without DURABILITY: %q, want Prepare's refusal first", ne.Msg)
	}
}

func otherPrivilege(p Privilege) Privilege {
	if p == PrivilegeReplication {
		return PrivilegeDurability
	}
	return PrivilegeReplication
}

// dialAs is dial with basic credentials.
func dialAs(t testing.TB, w *World, address, user, password string) *client {
	t.Helper()
	drv, err := neo4j.NewDriverWithContext("bolt://"+w.Resolve(address), neo4j.BasicAuth(user, password, ""), func(c *neo4j.Config) {
		c.SocketConnectTimeout = 2 * time.Second
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close(context.Background()) })
	return &client{t: t, drv: drv}
}

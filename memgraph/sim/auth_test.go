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

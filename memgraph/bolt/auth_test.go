package bolt_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
)

// Credentials of two clusters and of the pool; each string is unique, so finding it in the bytes
// a connection sent tells whose credentials went out.
var (
	credsA = memgraph.Credentials{Username: "user-a-7f3", Password: "pass-a-91c"}
	credsB = memgraph.Credentials{Username: "user-b-2d8", Password: "pass-b-44e"}
)

const poolUser, poolPassword = "user-pool-5e1", "pass-pool-0b7"

// Every Connector's Clients send their own credentials, on connections of their own: one driver
// per set of credentials, shared by equal ones, and the pool-wide credentials only for the Pool's
// own Clients. Neither the log nor the stats show a username or password.
func TestConnectionsAreKeyedByCredentials(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "au", 1, 0)
	addr := coordAddr("au", 1)
	proxy := startProxy(t, func() string { return w.Resolve(addr) })
	var logs syncBuffer
	pool := newPool(t, proxiedResolver(w, addr, proxy), func(o *bolt.PoolOptions) {
		o.Username, o.Password = poolUser, poolPassword
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ctx := testContext(t)

	// In order: credsA, the pool's, credsA again (a new Connector), credsB, a password that
	// differs from credsA's only in where the username ends.
	shifted := memgraph.Credentials{Username: credsA.Username + "p", Password: strings.TrimPrefix(credsA.Password, "p")}
	for i, c := range []memgraph.Connector{pool.WithAuth(credsA), pool, pool.WithAuth(credsA), pool.WithAuth(credsB), pool.WithAuth(shifted)} {
		if _, err := c.Client(addr).ShowInstances(ctx); err != nil {
			t.Fatalf("connector %d: %v", i, err)
		}
	}
	if s := pool.Stats(); s.Opened != 4 || proxy.accepted.Load() != 4 {
		t.Errorf("opened %d drivers and %d connections, want 4 each (credsA shared)", s.Opened, proxy.accepted.Load())
	}

	// What each connection sent: its own credentials and no other.
	secrets := []string{credsA.Username, credsA.Password, poolUser, poolPassword, credsB.Username, credsB.Password}
	sent := func(i int) []string {
		var found []string
		for _, s := range secrets {
			if bytes.Contains(proxy.Sent(i), []byte(s)) {
				found = append(found, s)
			}
		}
		return found
	}
	want := [][]string{{credsA.Username, credsA.Password}, {poolUser, poolPassword}, {credsB.Username, credsB.Password}}
	for i, w := range want {
		if diff := cmp.Diff(w, sent(i)); diff != "" {
			t.Errorf("credentials sent on connection %d (-want +got)\n%s", i, diff)
		}
	}

	shown := logs.String() + fmt.Sprintf("%+v", pool.Stats())
	if !strings.Contains(shown, "own_credentials=true") {
		t.Errorf("the log does not say a driver has credentials of its own:\n%s", shown)
	}
	for _, s := range secrets {
		if strings.Contains(shown, s) {
			t.Errorf("the log or stats show %q:\n%s", s, shown)
		}
	}
}

// Zero Credentials are none of a Connector's own: the pool-wide ones apply.
func TestZeroCredentialsAreThePools(t *testing.T) {
	pool := newPool(t, memgraph.IdentityResolver{})
	if pool.WithAuth(memgraph.Credentials{}) != memgraph.Connector(pool) {
		t.Error("WithAuth(zero) is not the Pool")
	}
	if pool.WithAuth(memgraph.Credentials{Password: "no user"}) != memgraph.Connector(pool) {
		t.Error("WithAuth without a username is not the Pool")
	}
	back := pool.WithAuth(credsA).(memgraph.AuthConnector).WithAuth(memgraph.Credentials{})
	if back != memgraph.Connector(pool) {
		t.Error("WithAuth(credsA).WithAuth(zero) is not the Pool")
	}
}

// The hook's use: SHOW REPLICAS on the MAIN with the cluster's credentials.
func TestShowReplicasWithCredentials(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "ar", 1, 2)
	pool := newPool(t, w)
	ctx := testContext(t)
	bootstrap(t, ctx, pool, "ar", 1, 2)
	got, err := pool.WithAuth(credsA).Client(dataAddr("ar", 0)).ShowReplicas(ctx)
	if err != nil {
		t.Fatalf("SHOW REPLICAS with credentials: %v", err)
	}
	if len(got) != 1 || got[0].Name != instanceName(1) {
		t.Errorf("SHOW REPLICAS = %+v, want instance_2 alone", got)
	}
}

// TLS and credentials compose in either order into Connectors that share one driver; each
// With* replaces its own setting only.
func TestTLSAndCredentialsCompose(t *testing.T) {
	const secure, plain = "ta", "tp"
	ca := newBoltCA(t, wildcard(secure))
	w := newWorld(t)
	startTLSProcesses(t, w, secure, 1, 0, ca.server)
	startProcesses(t, w, plain, 1, 0)
	secureAddr, plainAddr := coordAddr(secure, 1), coordAddr(plain, 1)
	proxy := startProxy(t, func() string { return w.Resolve(plainAddr) })
	pool := newPool(t, proxiedResolver(w, plainAddr, proxy))
	ctx := testContext(t)

	tlsThenAuth := pool.WithTLS(ca.trust).(memgraph.AuthConnector).WithAuth(credsA)
	authThenTLS := pool.WithAuth(credsA).(memgraph.TLSConnector).WithTLS(ca.trust)
	for name, c := range map[string]memgraph.Connector{"TLS then auth": tlsThenAuth, "auth then TLS": authThenTLS} {
		if _, err := c.Client(secureAddr).ShowInstances(ctx); err != nil {
			t.Errorf("%s against a TLS-only coordinator: %v", name, err)
		}
	}
	if s := pool.Stats(); s.Opened != 1 {
		t.Errorf("opened %d drivers, want 1 shared by both orders", s.Opened)
	}

	// Dropping TLS keeps the credentials: they go out in plaintext to the plaintext coordinator.
	if _, err := tlsThenAuth.(memgraph.TLSConnector).WithTLS(nil).Client(plainAddr).ShowInstances(ctx); err != nil {
		t.Fatalf("WithTLS(nil) against a plaintext coordinator: %v", err)
	}
	if !bytes.Contains(proxy.Sent(0), []byte(credsA.Password)) {
		t.Error("WithTLS(nil) lost the credentials")
	}
	// Dropping the credentials keeps TLS (a TLS-only coordinator answers), on a driver of its own.
	poolCreds := authThenTLS.(memgraph.AuthConnector).WithAuth(memgraph.Credentials{})
	if _, err := poolCreds.Client(secureAddr).ShowInstances(ctx); err != nil {
		t.Errorf("WithAuth(zero) against a TLS-only coordinator: %v", err)
	}
	if s := pool.Stats(); s.Opened != 3 {
		t.Errorf("opened %d drivers, want 3 (TLS with credsA, plaintext with credsA, TLS with the pool's)", s.Opened)
	}
}

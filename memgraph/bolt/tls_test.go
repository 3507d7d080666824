package bolt_test

import (
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// boltCA is a test CA with a Bolt serving certificate for every host of one cluster
// (*.<cluster>.svc), as a cluster's spec.tls Secret holds them.
type boltCA struct {
	ca     *pki.Authority
	server *tls.Config
	trust  *memgraph.BoltTLS
}

func newBoltCA(t testing.TB, dnsNames ...string) boltCA {
	t.Helper()
	ca, err := pki.NewAuthority("bolt test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Issue(pki.Leaf{CommonName: "memgraph", DNSNames: dnsNames, Server: true, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	trust, err := memgraph.NewBoltTLS(ca.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	return boltCA{ca: ca, server: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, trust: trust}
}

// startTLSProcesses is startProcesses with every instance serving Bolt only over TLS.
func startTLSProcesses(t testing.TB, w *sim.World, cluster string, coords, data int, server *tls.Config) {
	t.Helper()
	for id := 1; id <= coords; id++ {
		spec := coordSpec(cluster, id)
		spec.TLS = server
		if err := w.StartCoordinator(spec); err != nil {
			t.Fatal(err)
		}
	}
	for i := range data {
		spec := sim.DataSpec{Host: dataHost(cluster, i), BoltPort: boltPort, ManagementPort: managementPort, TLS: server}
		if err := w.StartData(spec); err != nil {
			t.Fatal(err)
		}
	}
}

func wildcard(cluster string) string { return fmt.Sprintf("*.%s.svc", cluster) }

// The real neo4j driver speaks Bolt over TLS to the simulator: a whole bootstrap and reads go
// through, verified for the coordinator's advertised FQDN although the pool dials 127.0.0.1.
func TestBoltOverTLSEndToEnd(t *testing.T) {
	const cluster = "tls"
	ca := newBoltCA(t, wildcard(cluster))
	w := newWorld(t)
	startTLSProcesses(t, w, cluster, 3, 2, ca.server)
	pool := newPool(t, w)
	secure := pool.WithTLS(ca.trust)
	ctx := testContext(t)

	c := secure.Client(coordAddr(cluster, 1))
	for id := 1; id <= 3; id++ {
		if err := c.AddCoordinator(ctx, id, coordConfig(cluster, id)); err != nil {
			t.Fatalf("ADD COORDINATOR %d over TLS: %v", id, err)
		}
	}
	for i := range 2 {
		if err := c.RegisterInstance(ctx, instanceName(i), instanceConfig(cluster, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SetInstanceToMain(ctx, instanceName(0)); err != nil {
		t.Fatal(err)
	}
	rows, err := secure.Client(coordAddr(cluster, 2)).ShowInstances(ctx)
	if err != nil {
		t.Fatalf("SHOW INSTANCES on a follower over TLS: %v", err)
	}
	if len(rows) != 5 {
		t.Errorf("SHOW INSTANCES returned %d rows, want 5", len(rows))
	}
	assertNoMisuse(t, w)
}

// Nothing falls back to plaintext: a plaintext client cannot reach a TLS coordinator, and a TLS
// client refuses a plaintext one; neither gets a query through.
func TestNoPlaintextFallback(t *testing.T) {
	ca := newBoltCA(t, wildcard("secure"), wildcard("plain"))
	w := newWorld(t)
	startTLSProcesses(t, w, "secure", 1, 0, ca.server)
	startProcesses(t, w, "plain", 1, 0)
	pool := newPool(t, w)
	ctx := testContext(t)

	_, err := pool.Client(coordAddr("secure", 1)).ShowInstances(ctx)
	if memgraph.KindOf(err) != memgraph.KindUnreachable {
		t.Errorf("plaintext client against a TLS coordinator: %v, want KindUnreachable", err)
	}
	_, err = pool.WithTLS(ca.trust).Client(coordAddr("plain", 1)).ShowInstances(ctx)
	if memgraph.KindOf(err) != memgraph.KindUnreachable {
		t.Errorf("TLS client against a plaintext coordinator: %v, want KindUnreachable", err)
	}
	if q := w.Queries(); len(q) != 0 {
		t.Errorf("queries reached a coordinator across a TLS mismatch: %+v", q)
	}
}

// A certificate that does not chain to the cluster's CA, or does not name the advertised host,
// fails the handshake: the error says why and no query is sent.
func TestCoordinatorCertificateIsVerified(t *testing.T) {
	for _, tc := range []struct {
		name    string
		served  []string // DNS names on the served certificate
		trusted bool     // whether the client trusts the CA that signed it
		want    string
	}{
		{"signed by another CA", []string{wildcard("c")}, false, "unknown authority"},
		{"for another host", []string{"*.elsewhere.svc"}, true, "not coord-1.c.svc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			served := newBoltCA(t, tc.served...)
			trust := served.trust
			if !tc.trusted {
				trust = newBoltCA(t, wildcard("c")).trust
			}
			w := newWorld(t)
			startTLSProcesses(t, w, "c", 1, 0, served.server)
			pool := newPool(t, w)
			_, err := pool.WithTLS(trust).Client(coordAddr("c", 1)).ShowInstances(testContext(t))
			if memgraph.KindOf(err) != memgraph.KindUnreachable || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want KindUnreachable mentioning %q", err, tc.want)
			}
			if q := w.Queries(); len(q) != 0 {
				t.Errorf("queries sent over an unverified connection: %+v", q)
			}
		})
	}
}

// Pooled connections are keyed by address and trust: a connection verified with one CA is never
// handed to a Client that trusts another, and plaintext and TLS never share one.
func TestPoolKeysConnectionsByAddressAndTrust(t *testing.T) {
	const cluster = "keyed"
	right := newBoltCA(t, wildcard(cluster))
	wrong := newBoltCA(t, wildcard(cluster))
	w := newWorld(t)
	startTLSProcesses(t, w, cluster, 1, 0, right.server)
	pool := newPool(t, w)
	ctx := testContext(t)
	addr := coordAddr(cluster, 1)

	if _, err := pool.WithTLS(right.trust).Client(addr).ShowInstances(ctx); err != nil {
		t.Fatalf("with the right CA: %v", err)
	}
	if _, err := pool.WithTLS(wrong.trust).Client(addr).ShowInstances(ctx); memgraph.KindOf(err) != memgraph.KindUnreachable {
		t.Errorf("a Client trusting another CA got %v: it reused a connection verified for someone else", err)
	}
	if _, err := pool.Client(addr).ShowInstances(ctx); memgraph.KindOf(err) != memgraph.KindUnreachable {
		t.Errorf("a plaintext Client got %v: it reused a TLS connection", err)
	}
	if _, err := pool.WithTLS(right.trust).Client(addr).ShowInstances(ctx); err != nil {
		t.Fatalf("with the right CA again: %v", err)
	}
	if s := pool.Stats(); s.Opened != 3 {
		t.Errorf("opened %d drivers, want 3 (right CA, wrong CA, plaintext), the right one reused", s.Opened)
	}
	if pool.WithTLS(nil) != memgraph.Connector(pool) {
		t.Error("WithTLS(nil) is not the plaintext pool")
	}
}

func TestNewBoltTLSNamesWhatIsWrong(t *testing.T) {
	ca := newBoltCA(t, "x")
	for _, tc := range []struct {
		name, bundle, want string
	}{
		{"empty", "", "no PEM-encoded certificate"},
		{"not PEM", "certificate please", "no PEM-encoded certificate"},
		{"a key, not a certificate", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "no PEM-encoded certificate"},
		{"corrupt certificate", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "certificate 1 of the CA bundle does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := memgraph.NewBoltTLS([]byte(tc.bundle))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	bundle := append(append([]byte{}, ca.ca.CertPEM...), newBoltCA(t, "y").ca.CertPEM...)
	if _, err := memgraph.NewBoltTLS(bundle); err != nil {
		t.Errorf("a bundle of two CAs: %v", err)
	}
}

package sim

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
)

// issue is a pair for every host of the fixture from ca, for server and client use.
func issue(t *testing.T, ca *pki.Authority) pki.Pair {
	t.Helper()
	p, err := ca.Issue(pki.Leaf{CommonName: "memgraph", DNSNames: []string{"*.mg.svc"}, Server: true, Client: true, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func authority(t *testing.T, name string) *pki.Authority {
	t.Helper()
	ca, err := pki.NewAuthority(name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// project writes cert, key and ca as the kubelet projects a Secret into dir.
func project(t *testing.T, dir string, cert, key, ca []byte) TLSFiles {
	t.Helper()
	f := TLSFiles{BoltCert: filepath.Join(dir, "tls.crt"), BoltKey: filepath.Join(dir, "tls.key"),
		ClusterCert: filepath.Join(dir, "tls.crt"), ClusterKey: filepath.Join(dir, "tls.key"), ClusterCA: filepath.Join(dir, "ca.crt")}
	for path, data := range map[string][]byte{f.BoltCert: cert, f.BoltKey: key, f.ClusterCA: ca} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// served is the serial of the certificate a new TLS handshake with the instance at address sees.
func served(t *testing.T, w *World, address string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", w.Resolve(address), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only reads the served certificate
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

func dialTLS(t *testing.T, w *World, address string) *client {
	t.Helper()
	drv, err := neo4j.NewDriverWithContext("bolt+ssc://"+w.Resolve(address), neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close(context.Background()) })
	return &client{t: t, drv: drv}
}

// RELOAD BOLT_SERVER TLS re-reads the files: new handshakes see the new certificate only after
// it, a key that does not match its certificate is refused with OpenSSL's reason and the
// previous pair stays served, and an instance without Bolt TLS refuses it.
func TestReloadBoltTLSServesTheFilesOnlyAfterTheQuery(t *testing.T) {
	ca := authority(t, "ca")
	a, b := issue(t, ca), issue(t, ca)
	dir := t.TempDir()
	files := project(t, dir, a.CertPEM, a.KeyPEM, ca.CertPEM)
	w := NewWorld(WithClock(NewManualClock(epoch)))
	t.Cleanup(w.Close)
	spec := dataSpec(1)
	spec.Files = TLSFiles{BoltCert: files.BoltCert, BoltKey: files.BoltKey}
	if err := w.StartData(spec); err != nil {
		t.Fatal(err)
	}
	if err := w.StartData(dataSpec(2)); err != nil {
		t.Fatal(err)
	}
	if got := served(t, w, dataBolt(1)); got != a.Cert.SerialNumber.String() {
		t.Fatalf("served %s at start, want the projected certificate", got)
	}
	project(t, dir, b.CertPEM, b.KeyPEM, ca.CertPEM)
	if got := served(t, w, dataBolt(1)); got != a.Cert.SerialNumber.String() {
		t.Fatal("the instance served the new files before RELOAD BOLT_SERVER TLS")
	}
	c := dialTLS(t, w, dataBolt(1))
	c.must("RELOAD BOLT_SERVER TLS")
	if got := served(t, w, dataBolt(1)); got != b.Cert.SerialNumber.String() {
		t.Fatal("RELOAD BOLT_SERVER TLS left the old certificate served")
	}

	project(t, dir, a.CertPEM, b.KeyPEM, ca.CertPEM) // a key of another certificate
	out := c.run("RELOAD BOLT_SERVER TLS", nil)
	want := "Couldn't load server private key from file " + files.BoltKey + ". Error: key values mismatch"
	if out.err == nil || out.err.Msg != want || out.phase != "PULL" {
		t.Fatalf("got %+v (%s), want %q at PULL", out.err, out.phase, want)
	}
	if got := served(t, w, dataBolt(1)); got != b.Cert.SerialNumber.String() {
		t.Fatal("a refused reload changed the served certificate")
	}

	plain := dial(t, w, dataBolt(2))
	for q, msg := range map[string]string{
		"RELOAD BOLT_SERVER TLS":   msgReloadBoltUnset,
		"RELOAD INTRA_CLUSTER TLS": "cluster server TLS: Cluster server TLS: key or certificate file is empty.",
	} {
		if out := plain.run(q, nil); out.err == nil || out.err.Msg != msg {
			t.Errorf("%s without TLS flags: got %+v, want %q", q, out.err, msg)
		}
	}
}

// An instance whose intra-cluster certificate comes from a CA its peers do not trust is
// refused: the MAIN's SYNC replication to it fails and the leader sees it down. A CA rotation
// done Memgraph's way — every instance trusts both CAs first — keeps every channel up.
func TestIntraClusterTLSRefusesAPeerOfAnUnknownCA(t *testing.T) {
	old, next := authority(t, "old"), authority(t, "next")
	w := NewWorld(WithClock(NewManualClock(epoch)))
	t.Cleanup(w.Close)
	dirs := map[string]string{}
	start := func(host string, coord bool, n int) {
		dir := t.TempDir()
		dirs[host] = dir
		p := issue(t, old)
		f := project(t, dir, p.CertPEM, p.KeyPEM, old.CertPEM)
		f.BoltCert, f.BoltKey = "", ""
		var err error
		if coord {
			s := coordSpec(n)
			s.Files = f
			err = w.StartCoordinator(s)
		} else {
			s := dataSpec(n)
			s.Files = f
			err = w.StartData(s)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	start("coord-1.mg.svc", true, 1)
	start("data-1.mg.svc", false, 1)
	start("data-2.mg.svc", false, 2)
	coord := dial(t, w, coordBolt(1))
	coord.must(addQuery(1))
	coord.must(registerQuery(1))
	coord.must(registerQuery(2))
	coord.must("SET INSTANCE instance_1 TO MAIN")
	main, replica := dial(t, w, dataBolt(1)), dial(t, w, dataBolt(2))
	main.must("CREATE ()")

	stranger := issue(t, next)
	project(t, dirs["data-2.mg.svc"], stranger.CertPEM, stranger.KeyPEM, next.CertPEM)
	replica.must("RELOAD INTRA_CLUSTER TLS")
	if out := main.run("CREATE ()", nil); out.err == nil {
		t.Fatal("the MAIN replicated to a replica whose certificate its CA does not sign")
	}
	advance(t, w, 30*time.Second)
	if r := row(t, coord.must("SHOW INSTANCES").rows, "instance_2"); r[4] != "down" {
		t.Fatalf("the leader reaches a data instance of an unknown CA: %v", r)
	}

	bundle := append(append([]byte{}, old.CertPEM...), next.CertPEM...)
	for host, dir := range dirs {
		p := issue(t, old)
		if host == "data-2.mg.svc" {
			p = stranger
		}
		project(t, dir, p.CertPEM, p.KeyPEM, bundle)
	}
	for _, c := range []*client{coord, main, replica} {
		c.must("RELOAD INTRA_CLUSTER TLS")
	}
	main.must("CREATE ()")
	if r := row(t, coord.must("SHOW INSTANCES").rows, "instance_2"); r[4] != "up" {
		t.Fatalf("trusting both CAs did not bring the replica back: %v", r)
	}
}

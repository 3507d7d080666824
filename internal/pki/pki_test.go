package pki

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"testing"
	"time"
)

func TestIssuedServerCertificateVerifiesForItsNamesOnly(t *testing.T) {
	ca, err := NewAuthority("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Issue(Leaf{CommonName: "hook", DNSNames: []string{"hook.ns.svc"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM); err != nil {
		t.Fatalf("the pair does not load as a TLS certificate: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca.CertPEM) {
		t.Fatal("CA PEM does not parse")
	}
	verify := func(name string, usage x509.ExtKeyUsage) error {
		_, err := pair.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	for _, name := range []string{"hook.ns.svc", "127.0.0.1"} {
		if err := verify(name, x509.ExtKeyUsageServerAuth); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := verify("other.ns.svc", x509.ExtKeyUsageServerAuth); err == nil {
		t.Error("verified for a name it does not carry")
	}
	if err := verify("hook.ns.svc", x509.ExtKeyUsageClientAuth); err == nil {
		t.Error("a server certificate verified as a client certificate")
	}
	other, _ := NewAuthority("other CA", time.Hour)
	otherRoots := x509.NewCertPool()
	otherRoots.AppendCertsFromPEM(other.CertPEM)
	if _, err := pair.Cert.Verify(x509.VerifyOptions{Roots: otherRoots, DNSName: "hook.ns.svc"}); err == nil {
		t.Error("verified against a CA that did not sign it")
	}
}

func TestLeafNeverOutlivesItsAuthority(t *testing.T) {
	ca, err := NewAuthority("short CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Issue(Leaf{CommonName: "c", Client: true, Validity: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if pair.Cert.NotAfter.After(ca.Cert.NotAfter) {
		t.Errorf("leaf valid until %s, CA until %s", pair.Cert.NotAfter, ca.Cert.NotAfter)
	}
	if !strings.Contains(string(pair.KeyPEM), "BEGIN PRIVATE KEY") {
		t.Errorf("key is not PKCS #8 PEM")
	}
}

func TestIssueRefusesACertificateWithoutAUse(t *testing.T) {
	ca, err := NewAuthority("CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Issue(Leaf{CommonName: "x", Validity: time.Hour}); err == nil {
		t.Error("issued a certificate that is neither for a server nor a client")
	}
	if _, err := NewAuthority("CA", 0); err == nil {
		t.Error("created a CA with no validity")
	}
}

package env

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
)

func TestPKIChainsAndNames(t *testing.T) {
	p, err := newPKI()
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CA.CertPEM) {
		t.Fatal("CA certificate does not parse")
	}
	serving, err := tls.X509KeyPair(p.Serving.CertPEM, p.Serving.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(serving.Certificate[0])
	for _, name := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc", firstServiceIP} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	clients := map[string]keyPair{"admin": p.Admin, "kcm": p.KCM, "scheduler": p.Scheduler, "kwok": p.Kwok}
	for name, kp := range clients {
		c, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cert, _ := x509.ParseCertificate(c.Certificate[0])
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s client certificate: %v", name, err)
		}
	}
	if p.Admin.cert.Subject.Organization[0] != "system:masters" || p.KCM.cert.Subject.CommonName != "system:kube-controller-manager" {
		t.Errorf("identities: admin %v, kcm %v", p.Admin.cert.Subject, p.KCM.cert.Subject)
	}
}

package env

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// keyPair is a certificate and its private key, both PEM-encoded.
type keyPair struct {
	CertPEM []byte
	KeyPEM  []byte
	cert    *x509.Certificate
	key     crypto.Signer
}

// pki is the throwaway public-key infrastructure of one environment: a CA that signs the API
// server's serving certificate and every client certificate, and the service-account key pair.
type pki struct {
	CA        keyPair
	Serving   keyPair
	Admin     keyPair
	KCM       keyPair
	Scheduler keyPair
	Kwok      keyPair
	SAKeyPEM  []byte
	SAPubPEM  []byte
}

// servingSANs are the names a client may use for the API server: loopback for the test's own
// clients, the in-cluster names and the first service IP for the controllers' in-cluster view.
var servingSANs = struct {
	DNS []string
	IPs []net.IP
}{
	DNS: []string{
		"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local",
	},
	IPs: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(firstServiceIP)},
}

func newPKI() (*pki, error) {
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	p := &pki{CA: ca}
	leaves := []struct {
		dst     *keyPair
		subject pkix.Name
		server  bool
	}{
		{&p.Serving, pkix.Name{CommonName: "kube-apiserver"}, true},
		{&p.Admin, pkix.Name{CommonName: "e2e-admin", Organization: []string{"system:masters"}}, false},
		{&p.KCM, pkix.Name{CommonName: "system:kube-controller-manager"}, false},
		{&p.Scheduler, pkix.Name{CommonName: "system:kube-scheduler"}, false},
		// kwok patches Node and Pod status and binds volumes cluster-wide.
		{&p.Kwok, pkix.Name{CommonName: "kwok", Organization: []string{"system:masters"}}, false},
	}
	for _, l := range leaves {
		if *l.dst, err = ca.sign(l.subject, l.server); err != nil {
			return nil, err
		}
	}
	// Service-account tokens are signed with RSA, the algorithm every component accepts.
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("service-account key: %w", err)
	}
	p.SAKeyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)})
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("service-account public key: %w", err)
	}
	p.SAPubPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	return p, nil
}

func newCA() (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "memgraph-hooks-e2e-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return keyPair{}, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return keyPair{}, err
	}
	return encodePair(cert, key)
}

func (ca keyPair) sign(subject pkix.Name, server bool) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return keyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = servingSANs.DNS
		tmpl.IPAddresses = servingSANs.IPs
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return keyPair{}, fmt.Errorf("certificate for %s: %w", subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return keyPair{}, err
	}
	return encodePair(cert, key)
}

func encodePair(cert *x509.Certificate, key *ecdsa.PrivateKey) (keyPair, error) {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		cert:    cert,
		key:     key,
	}, nil
}

// writeFiles stores the material the control-plane binaries read from disk and returns the
// paths by name.
func (p *pki) writeFiles(dir string) (map[string]string, error) {
	files := map[string][]byte{
		"ca.crt":      p.CA.CertPEM,
		"ca.key":      p.CA.KeyPEM,
		"serving.crt": p.Serving.CertPEM,
		"serving.key": p.Serving.KeyPEM,
		"sa.key":      p.SAKeyPEM,
		"sa.pub":      p.SAPubPEM,
	}
	paths := make(map[string]string, len(files))
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
		paths[name] = path
	}
	return paths, nil
}

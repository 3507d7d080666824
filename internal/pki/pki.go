// Package pki issues the X.509 material memgraph-hooks needs: a certificate authority held only
// in memory, and certificates it signs for a server (the hook's HTTPS endpoint, Memgraph's Bolt
// listener in tests) or a client. Keys are ECDSA P-256, encoded as PKCS #8, which Go, OpenSSL
// (Memgraph) and every Kubernetes component read.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// backdate absorbs clock skew between the machine that issues and the ones that verify.
const backdate = 5 * time.Minute

// Authority is a certificate authority. Its private key never leaves the process: once the
// Authority is dropped, nothing more can be signed with it, so rotating means a new Authority.
type Authority struct {
	Cert    *x509.Certificate
	CertPEM []byte
	key     *ecdsa.PrivateKey
}

// Pair is a signed certificate and its private key, both PEM-encoded.
type Pair struct {
	CertPEM []byte
	KeyPEM  []byte
	Cert    *x509.Certificate
}

// Leaf describes a certificate to issue. At least one of Server and Client must be set.
type Leaf struct {
	CommonName string
	DNSNames   []string
	IPs        []net.IP
	Server     bool // usable as a TLS server certificate
	Client     bool // usable as a TLS client certificate
	Validity   time.Duration
}

// NewAuthority creates a self-signed CA valid for validity from now.
func NewAuthority(commonName string, validity time.Duration) (*Authority, error) {
	if validity <= 0 {
		return nil, errors.New("pki: validity must be positive")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("pki: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{Cert: cert, CertPEM: encodeCert(der), key: key}, nil
}

// Issue signs a new key pair for l. The certificate never outlives the Authority.
func (a *Authority) Issue(l Leaf) (Pair, error) {
	if !l.Server && !l.Client {
		return Pair{}, errors.New("pki: a certificate must be for a server, a client or both")
	}
	if l.Validity <= 0 {
		return Pair{}, errors.New("pki: validity must be positive")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("pki: key for %s: %w", l.CommonName, err)
	}
	serial, err := newSerial()
	if err != nil {
		return Pair{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: l.CommonName},
		NotBefore:    now.Add(-backdate),
		NotAfter:     minTime(now.Add(l.Validity), a.Cert.NotAfter),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		DNSNames:     l.DNSNames,
		IPAddresses:  l.IPs,
	}
	if l.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if l.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.Cert, &key.PublicKey, a.key)
	if err != nil {
		return Pair{}, fmt.Errorf("pki: certificate for %s: %w", l.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Pair{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, err
	}
	return Pair{
		CertPEM: encodeCert(der),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Cert:    cert,
	}, nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("pki: serial number: %w", err)
	}
	return serial, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

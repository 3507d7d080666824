package backup

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"time"
)

// AgentTLSValidity is how long the agents' CA and serving certificate are valid: ten years. The
// Secret holding them is generated once per cluster and never rotated by the hook (the agent is
// reached only by the hook, which trusts exactly this CA); delete the Secret to have a new pair
// generated, which rolls the data pods once.
const AgentTLSValidity = 10 * 365 * 24 * time.Hour

// AgentTLS is the material of a cluster's backup-agent Secret, PEM-encoded.
type AgentTLS struct {
	CA, Cert, Key []byte
}

// NewAgentTLS generates a CA and an ECDSA P-256 serving certificate signed by it, valid from
// now for AgentTLSValidity for every name in dnsNames (the data members' FQDNs).
func NewAgentTLS(dnsNames []string, now time.Time) (AgentTLS, error) {
	if len(dnsNames) == 0 {
		return AgentTLS{}, errors.New("the agent certificate needs at least one DNS name")
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return AgentTLS{}, err
	}
	notBefore, notAfter := now.Add(-time.Hour), now.Add(AgentTLSValidity)
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "memgraph-hooks backup-agent CA"},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return AgentTLS{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return AgentTLS{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return AgentTLS{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: dnsNames[0]}, DNSNames: dnsNames,
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return AgentTLS{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return AgentTLS{}, err
	}
	return AgentTLS{
		CA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

// NewToken returns a random bearer token for the agents (128 bits, base32).
func NewToken() string {
	return rand.Text()
}

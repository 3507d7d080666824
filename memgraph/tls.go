package memgraph

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// BoltTLS is how to trust coordinators that serve Bolt over TLS (Memgraph started with
// --bolt-cert-file and --bolt-key-file): the CA certificates their serving certificates must
// chain to. A connection made with it is encrypted and verified, never plaintext.
//
// The name verified is always the host of the advertised address (the coordinator's FQDN, as
// declared or as SHOW INSTANCES reports it), whatever address a Resolver makes the pool dial: a
// port-forward or a simulator on 127.0.0.1 still has to present the coordinator's certificate.
type BoltTLS struct {
	roots *x509.CertPool
	id    [sha256.Size]byte // identifies the CA set, so pooled connections never mix trusts
}

// NewBoltTLS parses a PEM bundle of one or more CA certificates (a Secret's ca.crt). Errors
// describe the bundle's shape and never quote its content.
func NewBoltTLS(caPEM []byte) (*BoltTLS, error) {
	roots := x509.NewCertPool()
	h := sha256.New()
	rest := caPEM
	certs := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d of the CA bundle does not parse: %w", certs+1, err)
		}
		certs++
		roots.AddCert(cert)
		h.Write(cert.Raw)
	}
	if certs == 0 {
		return nil, errors.New("the CA bundle holds no PEM-encoded certificate")
	}
	t := &BoltTLS{roots: roots}
	copy(t.id[:], h.Sum(nil))
	return t, nil
}

// Verify checks a serving certificate chain (leaf first) against the CA bundle for host.
func (t *BoltTLS) Verify(chain []*x509.Certificate, host string) error {
	if len(chain) == 0 {
		return errors.New("no certificate presented")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{
		Roots:         t.roots,
		Intermediates: inter,
		DNSName:       host,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return err
}

// Fingerprint identifies the CA set, so that a pool never shares a connection between trusts.
func (t *BoltTLS) Fingerprint() [sha256.Size]byte { return t.id }

// TLSConnector is a Connector that can also reach coordinators serving Bolt over TLS.
type TLSConnector interface {
	Connector
	// WithTLS returns a Connector whose Clients dial with t; nil means plaintext. It keeps the
	// connector's other settings (an AuthConnector's credentials). Connections are pooled per
	// dialed address, advertised host and CA bundle, so they are never shared between trusts or
	// with plaintext Clients.
	WithTLS(t *BoltTLS) Connector
}

package memgraph

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
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

// clientConfig is the driver's TLS configuration for the coordinator advertised at address.
//
// The driver derives ServerName from the address it dials and, for the bolt+ssc scheme the pool
// uses with TLS, sets InsecureSkipVerify; so the standard verification is replaced, not skipped:
// VerifyConnection runs on every handshake and checks the whole chain against the CA bundle for
// the advertised host. A handshake it refuses never carries a Bolt message.
func (t *BoltTLS) clientConfig(address string) *tls.Config {
	host := hostOf(address)
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if err := t.Verify(cs.PeerCertificates, host); err != nil {
				return fmt.Errorf("the Bolt certificate of %s does not verify against the cluster's CA: %w", host, err)
			}
			return nil
		},
	}
}

func hostOf(address string) string {
	if host, _, err := net.SplitHostPort(address); err == nil {
		return host
	}
	return address
}

// TLSConnector is a Connector that can also reach coordinators serving Bolt over TLS.
type TLSConnector interface {
	Connector
	// WithTLS returns a Connector whose Clients dial with t. Connections are pooled per
	// dialed address, advertised host and CA bundle, so they are never shared between trusts or
	// with plaintext Clients.
	WithTLS(t *BoltTLS) Connector
}

var _ TLSConnector = (*Pool)(nil)

// WithTLS returns a Connector that dials every coordinator over TLS verified with t; nil means
// the Pool itself (plaintext).
func (p *Pool) WithTLS(t *BoltTLS) Connector {
	if t == nil {
		return p
	}
	return tlsConnector{pool: p, tls: t}
}

type tlsConnector struct {
	pool *Pool
	tls  *BoltTLS
}

func (c tlsConnector) Client(address string) Client {
	return &boltClient{pool: c.pool, address: address, tls: c.tls}
}

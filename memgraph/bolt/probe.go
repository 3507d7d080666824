package bolt

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

var (
	_ memgraph.CertificateProbe = connector{}
	_ memgraph.TLSReloader      = (*client)(nil)
)

// ReloadTLS sends RELOAD BOLT_SERVER TLS or RELOAD INTRA_CLUSTER TLS as a write: never retried.
func (c *client) ReloadTLS(ctx context.Context, query string) error {
	if query != memgraph.ReloadBoltTLSQuery && query != memgraph.ReloadClusterTLSQuery {
		return fmt.Errorf("not a reload query: %q", query)
	}
	return c.write(ctx, query)
}

// ServedCertificate opens a TLS connection of its own to the instance advertised at address
// (never a pooled one, whose handshake predates any reload), verified against the connector's
// CA bundle for the advertised host as a Bolt connection is, and returns the leaf it presented.
func (c connector) ServedCertificate(ctx context.Context, address string) (*x509.Certificate, error) {
	if c.tls == nil {
		return nil, errors.New("no TLS trust: the instance serves plaintext Bolt")
	}
	cfg := clientConfig(c.tls, address)
	cfg.InsecureSkipVerify = true //nolint:gosec // VerifyConnection checks the chain for the advertised host
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: c.pool.opts.DialTimeout}, Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", c.pool.opts.Resolver.Resolve(address))
	if err != nil {
		return nil, fmt.Errorf("TLS handshake with %s: %w", address, err)
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
}

package bolt

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// clientConfig is the driver's TLS configuration for the instance advertised at address.
//
// The driver derives ServerName from the address it dials and, for the bolt+ssc scheme the pool
// uses with TLS, sets InsecureSkipVerify; so the standard verification is replaced, not skipped:
// VerifyConnection runs on every handshake and checks the whole chain against the CA bundle for
// the advertised host (memgraph.BoltTLS.Verify). A handshake it refuses never carries a Bolt
// message.
func clientConfig(t *memgraph.BoltTLS, address string) *tls.Config {
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

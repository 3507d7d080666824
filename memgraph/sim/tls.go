package sim

import (
	"crypto/tls"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// boltTLS is the instance's Bolt TLS configuration from its spec; nil serves plaintext.
func (i *instance) boltTLS() *tls.Config {
	if i.coord {
		return i.cspec.TLS
	}
	return i.dspec.TLS
}

// listenBolt opens a Bolt listener, TLS-only when cfg is set (Memgraph then refuses plaintext).
func listenBolt(addr string, h bolt.Handler, cfg *tls.Config) (*bolt.Server, error) {
	if cfg != nil {
		return bolt.ListenTLS(addr, h, cfg)
	}
	return bolt.Listen(addr, h)
}

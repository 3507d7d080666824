package bolt

import "github.com/memgraph-hooks/memgraph-hooks/memgraph"

var (
	_ memgraph.TLSConnector  = (*Pool)(nil)
	_ memgraph.AuthConnector = (*Pool)(nil)
	_ memgraph.TLSConnector  = connector{}
	_ memgraph.AuthConnector = connector{}
)

// connector is a Pool's Connector with a TLS trust, credentials of its own, or both. Each With*
// replaces one setting and keeps the other, so TLS and auth compose in either order; with
// neither set it is the Pool itself.
type connector struct {
	pool *Pool
	tls  *memgraph.BoltTLS
	auth *credentials
}

func (c connector) Client(address string) memgraph.Client {
	return &client{pool: c.pool, address: address, tls: c.tls, auth: c.auth}
}

// WithTLS dials over TLS verified with t (nil: plaintext), with the same credentials.
func (c connector) WithTLS(t *memgraph.BoltTLS) memgraph.Connector {
	c.tls = t
	return c.simplest()
}

// WithAuth authenticates with cred (zero: the PoolOptions' credentials), with the same trust.
func (c connector) WithAuth(cred memgraph.Credentials) memgraph.Connector {
	c.auth = newCredentials(cred)
	return c.simplest()
}

func (c connector) simplest() memgraph.Connector {
	if c.tls == nil && c.auth == nil {
		return c.pool
	}
	return c
}

// WithTLS returns a Connector that dials every address over TLS verified with t; nil means
// the Pool itself (plaintext).
func (p *Pool) WithTLS(t *memgraph.BoltTLS) memgraph.Connector { return connector{pool: p}.WithTLS(t) }

// WithAuth returns a Connector whose Clients send cred as basic auth instead of
// PoolOptions.Username and Password; zero Credentials mean the Pool itself.
func (p *Pool) WithAuth(cred memgraph.Credentials) memgraph.Connector {
	return connector{pool: p}.WithAuth(cred)
}

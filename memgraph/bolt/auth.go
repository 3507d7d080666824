package bolt

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// credentials are a Connector's own Bolt credentials with their fingerprint, computed once. The
// fingerprint, not the password, goes into the pool key; neither is ever logged.
type credentials struct {
	token neo4j.AuthToken
	id    [sha256.Size]byte
}

// newCredentials returns nil for zero Credentials: the pool-wide ones apply.
func newCredentials(c memgraph.Credentials) *credentials {
	if c.IsZero() {
		return nil
	}
	return &credentials{token: neo4j.BasicAuth(c.Username, c.Password, ""), id: fingerprint(c)}
}

// fingerprint is SHA-256 over the username's length, the username and the password: the length
// separates the two unambiguously ("ab"+"c" and "a"+"bc" differ), whatever bytes they hold.
func fingerprint(c memgraph.Credentials) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(c.Username)))
	h.Write(n[:])
	h.Write([]byte(c.Username))
	h.Write([]byte(c.Password))
	var id [sha256.Size]byte
	copy(id[:], h.Sum(nil))
	return id
}

// authFor is the token a driver for auth sends: a Connector's own credentials, else the
// PoolOptions' basic auth when Username is set, else none.
func (p *Pool) authFor(auth *credentials) neo4j.AuthToken {
	switch {
	case auth != nil:
		return auth.token
	case p.opts.Username != "":
		return neo4j.BasicAuth(p.opts.Username, p.opts.Password, "")
	default:
		return neo4j.NoAuth()
	}
}

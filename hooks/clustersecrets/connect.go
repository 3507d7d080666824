package clustersecrets

import (
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Connector is how a pass reaches the coordinators: base (the hook's Bolt connector), over TLS
// when spec.tls asks for it (t.Config). A connector that cannot do TLS is a problem, never a
// plaintext fallback.
func (t Trust) Connector(base memgraph.Connector) (memgraph.Connector, string) {
	if t.Problem != "" {
		return nil, t.Problem
	}
	if t.Config == nil {
		return base, ""
	}
	secure, ok := base.(memgraph.TLSConnector)
	if !ok {
		return nil, "spec.tls is set but this hook's Bolt connector cannot dial TLS"
	}
	return secure.WithTLS(t.Config), ""
}

// Connector is conn with spec.auth's credentials, for a data instance's own queries (SHOW
// REPLICAS on the MAIN, RELOAD … TLS, the users' statements), or why there is none.
func (a Auth) Connector(conn memgraph.Connector) (memgraph.Connector, string) {
	switch {
	case a.Problem != "":
		return nil, a.Problem
	case a.Creds == nil:
		return conn, ""
	}
	authed, ok := conn.(memgraph.AuthConnector)
	if !ok {
		return nil, "spec.auth is set but this hook's Bolt connector cannot send credentials"
	}
	return authed.WithAuth(*a.Creds), ""
}

// TrustOf is spec.tls's trust for a controller that reaches cluster c with a copy of its CA
// (caPEM, from the user-access or backup-agent Secret): none without spec.tls, and a problem
// naming the Secret when the copy does not parse.
func TrustOf(c *topology.Cluster, caPEM []byte) Trust {
	if c.TLSSecretName() == "" {
		return Trust{}
	}
	config, err := memgraph.NewBoltTLS(caPEM)
	if err != nil {
		return Trust{Problem: fmt.Sprintf("the CA of Secret %s/%s (spec.tls.secretName): %v", c.Namespace(), c.TLSSecretName(), err)}
	}
	return Trust{Config: config, CAPEM: caPEM}
}

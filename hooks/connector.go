package hooks

import (
	"github.com/memgraph-hooks/memgraph-hooks/hooks/clustersecrets"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// connector is how this pass reaches the coordinators: the configured Connector, over TLS when
// spec.tls asks for it. A Connector that cannot do TLS is a problem, never a plaintext fallback.
func (h *handler) connector(t clustersecrets.Trust) (memgraph.Connector, string) {
	if t.Problem != "" {
		return nil, t.Problem
	}
	if t.Config == nil {
		return h.cfg.Connector, ""
	}
	secure, ok := h.cfg.Connector.(memgraph.TLSConnector)
	if !ok {
		return nil, "spec.tls is set but this hook's Bolt connector cannot dial TLS"
	}
	return secure.WithTLS(t.Config), ""
}

// withAuth is conn with spec.auth's credentials, for a data instance's own queries (SHOW
// REPLICAS on the MAIN, RELOAD … TLS), or why there is none.
func withAuth(conn memgraph.Connector, auth clustersecrets.Auth) (memgraph.Connector, string) {
	switch {
	case auth.Problem != "":
		return nil, auth.Problem
	case auth.Creds == nil:
		return conn, ""
	}
	authed, ok := conn.(memgraph.AuthConnector)
	if !ok {
		return nil, "spec.auth is set but this hook's Bolt connector cannot send credentials"
	}
	return authed.WithAuth(*auth.Creds), ""
}

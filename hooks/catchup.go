package hooks

import (
	"context"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/clustersecrets"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// catchUpReader reads the second proof a MAIN handover needs besides SHOW REPLICATION LAG:
// SHOW REPLICAS on the MAIN data instance itself (planner.MainReplicas), over the pass's
// connector (TLS when spec.tls asks for it) with spec.auth's credentials when it names any.
type catchUpReader struct {
	conn memgraph.Connector
	auth clustersecrets.Auth
	// declared gives the MAIN's in-cluster address (planner.CatchUpSource).
	declared topology.Declared
}

// read asks the MAIN of rows for SHOW REPLICAS; nil when no row reports a MAIN. A read that
// cannot be made or fails is recorded with its reason, which every handover's waiting message
// then names.
func (r catchUpReader) read(ctx context.Context, rows []memgraph.Instance) *planner.MainReplicas {
	main, bolt, ok := planner.CatchUpSource(r.declared, rows)
	if !ok {
		return nil
	}
	conn, problem := r.connector()
	if problem != "" {
		return &planner.MainReplicas{Main: main, Problem: problem}
	}
	replicas, err := conn.Client(bolt).ShowReplicas(ctx)
	if err != nil {
		return &planner.MainReplicas{Main: main, Problem: planner.Explain(err)}
	}
	return &planner.MainReplicas{Main: main, Rows: replicas}
}

// connector is the pass's connector with spec.auth's credentials, or why there is none.
func (r catchUpReader) connector() (memgraph.Connector, string) {
	switch {
	case r.auth.Problem != "":
		return nil, r.auth.Problem
	case r.auth.Creds == nil:
		return r.conn, ""
	}
	authed, ok := r.conn.(memgraph.AuthConnector)
	if !ok {
		return nil, "spec.auth is set but this hook's Bolt connector cannot send credentials"
	}
	return authed.WithAuth(*r.auth.Creds), ""
}

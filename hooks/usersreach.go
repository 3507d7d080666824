package hooks

import (
	"context"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/clustersecrets"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// What the user controller (package users) takes from the shell: how a cluster's Memgraph is
// reached and its MAIN found.

// reachUsers is how the user controller reaches c's coordinators (over spec.tls's trust) and
// data instances (with spec.auth's credentials too), from the Secrets the cluster names; problems
// say what is missing.
func (h *handler) reachUsers(c *topology.Cluster, secrets map[string]*wire.Object) (coordinators, data memgraph.Connector, problems []string) {
	coordinators, problem := h.connector(clustersecrets.ReadBoltTLS(secrets[c.TLSSecretName()], c))
	if problem != "" {
		return nil, nil, []string{problem}
	}
	auth := clustersecrets.ReadAuth(secrets[c.AuthSecretName()], c)
	if data, problem = withAuth(coordinators, auth); problem != "" {
		problems = append(problems, problem)
	}
	return coordinators, data, problems
}

// findMain performs the steps planner.NextMain asks for until it has found the MAIN the leader
// of c names, which must be up.
func findMain(ctx context.Context, conn memgraph.Connector, c *topology.Cluster) (topology.DataInstance, error) {
	found := performUntil[planner.MainFound](ctx, &performer{conn: conn, now: time.Now}, func(record []planner.Result) planner.Step {
		return planner.NextMain(c, record)
	})
	return found.Main, found.Err
}

package hooks

import (
	"context"
	"fmt"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/clustersecrets"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/users"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// What the user controller (package users) takes from the shell: how a cluster's Memgraph is
// reached and its MAIN found.

// reachUsers is how the user controller reaches c's coordinators (over spec.tls's CA) and data
// instances (with spec.auth's credentials too), from what c's user-access Secret carries
// (users.Reach); problems say what is wrong.
func (h *handler) reachUsers(c *topology.Cluster, r users.Reach) (coordinators, data memgraph.Connector, problems []string) {
	var trust clustersecrets.Trust
	if c.TLSSecretName() != "" {
		config, err := memgraph.NewBoltTLS(r.CAPEM)
		if err != nil {
			return nil, nil, []string{fmt.Sprintf("the CA of Secret %s/%s (spec.tls.secretName): %v", c.Namespace(), c.TLSSecretName(), err)}
		}
		trust = clustersecrets.Trust{Config: config, CAPEM: r.CAPEM}
	}
	coordinators, problem := trust.Connector(h.cfg.Connector)
	if problem != "" {
		return nil, nil, []string{problem}
	}
	if data, problem = r.Auth.Connector(coordinators); problem != "" {
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

package hooks

import (
	"context"
	"fmt"
	"strings"

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
	coordinators, problem := h.connector(trust)
	if problem != "" {
		return nil, nil, []string{problem}
	}
	if data, problem = (catchUpReader{conn: coordinators, auth: r.Auth}).connector(); problem != "" {
		problems = append(problems, problem)
	}
	return coordinators, data, problems
}

// findMain asks the coordinators for the leader's SHOW INSTANCES and returns the MAIN it names,
// which must be up.
func findMain(ctx context.Context, conn memgraph.Connector, c *topology.Cluster) (topology.DataInstance, error) {
	d := c.Declare(c.Replicas())
	disc := discover(ctx, conn, d)
	if !disc.Found() {
		return topology.DataInstance{}, fmt.Errorf("no coordinator of cluster %s named a ready leader: %s", c.Name(), strings.Join(disc.Problems, "; "))
	}
	view, err := leaderView(ctx, conn, d, disc.View)
	if err != nil {
		return topology.DataInstance{}, fmt.Errorf("the leader of cluster %s: %s", c.Name(), planner.Explain(err))
	}
	for _, row := range view.Instances {
		if row.Role != memgraph.RoleMain || row.IsCoordinator() {
			continue
		}
		ordinal, ok := topology.ParseDataInstanceName(row.Name)
		if !ok || row.Health != memgraph.HealthUp {
			return topology.DataInstance{}, fmt.Errorf("the MAIN of cluster %s, %s, is %s", c.Name(), row.Name, row.Health)
		}
		return c.Network().DataInstance(ordinal), nil
	}
	return topology.DataInstance{}, fmt.Errorf("cluster %s has no MAIN: the leader %s names none", c.Name(), view.Leader)
}

package hooks

import (
	"context"
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backups"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/clustersecrets"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// What the backup controllers (package backups) take from the shell: how a cluster's Memgraph
// is reached and its MAIN found, and the agents' clients.

// reach is how the hook reaches c's coordinators (over spec.tls's CA) and data instances (with
// spec.auth's credentials too), and how an agent reaches its own pod's Memgraph, from what c's
// backup-agent Secret carries (backups.Access); problems say what is wrong.
func (h *handler) reach(c *topology.Cluster, a backups.Access) backups.Reached {
	var trust clustersecrets.Trust
	if c.TLSSecretName() != "" {
		config, err := memgraph.NewBoltTLS(a.BoltCA)
		if err != nil {
			return backups.Reached{Problems: []string{fmt.Sprintf("the CA of Secret %s/%s (spec.tls.secretName): %v", c.Namespace(), c.TLSSecretName(), err)}}
		}
		trust = clustersecrets.Trust{Config: config, CAPEM: a.BoltCA}
	}
	coordinators, problem := h.connector(trust)
	if problem != "" {
		return backups.Reached{Problems: []string{problem}}
	}
	auth := clustersecrets.Auth{Creds: a.Memgraph}
	r := backups.Reached{Coordinators: coordinators, Agent: backup.MemgraphTarget{CAPEM: trust.CAPEM}}
	if r.Data, problem = (catchUpReader{conn: coordinators, auth: auth}).connector(); problem != "" {
		r.Problems = append(r.Problems, problem)
	}
	if auth.Creds != nil {
		r.Agent.Username, r.Agent.Password = auth.Creds.Username, auth.Creds.Password
	}
	return r
}

// chooseBackupInstance reads what planner.ChooseBackupInstance needs: the leader's SHOW
// INSTANCES and, for spec.backup.target PreferReplica, its SHOW REPLICATION LAG and the MAIN's
// SHOW REPLICAS (the catch-up proofs of a handover). A read that fails is a wait (NoMain), or a
// missing proof, which makes the MAIN the choice.
func chooseBackupInstance(ctx context.Context, r backups.Reached, c *topology.Cluster) (planner.BackupChoice, planner.Wait) {
	d := c.Declare(c.Replicas())
	disc := discover(ctx, r.Coordinators, d)
	if !disc.Found() {
		return planner.BackupChoice{}, planner.Wait{Reason: planner.ReasonNoMain,
			Message: fmt.Sprintf("no coordinator of cluster %s named a ready leader: %s", c.Name(), strings.Join(disc.Problems, "; "))}
	}
	view, err := leaderView(ctx, r.Coordinators, d, disc.View)
	if err != nil {
		return planner.BackupChoice{}, planner.Wait{Reason: planner.ReasonNoMain, Message: fmt.Sprintf("the leader of cluster %s: %s", c.Name(), planner.Explain(err))}
	}
	o := planner.Observed{Instances: view.Instances, Leader: view.Leader}
	if c.BackupTarget() == topology.BackupPreferReplica {
		if o.Lag, err = r.Coordinators.Client(view.Coordinator.BoltServer).ShowReplicationLag(ctx); err == nil {
			o.Replicas = catchUpReader{conn: r.Data, declared: d}.read(ctx, view.Instances)
		}
	}
	return planner.ChooseBackupInstance(d, c.BackupTarget(), o)
}

// agentClients makes the clients of one cluster's agents, dialing through resolver when set.
func agentClients(resolver memgraph.Resolver) func(backup.AgentClientConfig) (backups.Agents, error) {
	return func(cfg backup.AgentClientConfig) (backups.Agents, error) {
		if resolver != nil {
			cfg.Resolve = resolver.Resolve
		}
		return backup.NewAgentClient(cfg)
	}
}

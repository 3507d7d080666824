package hooks

import (
	"context"
	"fmt"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/clustersecrets"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// What the backup controller (package backupcontroller) takes from the shell: how a cluster's
// Memgraph is reached and an instance chosen, both through the shell's connections and steps.

// reach is how the hook reaches c's coordinators (over spec.tls's CA) and data instances (with
// spec.auth's credentials too), and how an agent reaches its own pod's Memgraph, from what c's
// backup-agent Secret carries (backupcontroller.Access); problems say what is wrong.
func (h *handler) reach(c *topology.Cluster, a backupcontroller.Access) backupcontroller.Reached {
	var trust clustersecrets.Trust
	if c.TLSSecretName() != "" {
		config, err := memgraph.NewBoltTLS(a.BoltCA)
		if err != nil {
			return backupcontroller.Reached{Problems: []string{fmt.Sprintf("the CA of Secret %s/%s (spec.tls.secretName): %v", c.Namespace(), c.TLSSecretName(), err)}}
		}
		trust = clustersecrets.Trust{Config: config, CAPEM: a.BoltCA}
	}
	coordinators, problem := trust.Connector(h.cfg.Connector)
	if problem != "" {
		return backupcontroller.Reached{Problems: []string{problem}}
	}
	auth := clustersecrets.Auth{Creds: a.Memgraph}
	r := backupcontroller.Reached{Coordinators: coordinators, Agent: backup.MemgraphTarget{CAPEM: trust.CAPEM}}
	if r.Data, problem = auth.Connector(coordinators); problem != "" {
		r.Problems = append(r.Problems, problem)
	}
	if auth.Creds != nil {
		r.Agent.Username, r.Agent.Password = auth.Creds.Username, auth.Creds.Password
	}
	return r
}

// chooseBackupInstance performs the steps planner.NextBackupChoice asks for — the leader's SHOW
// INSTANCES and, for spec.backup.target PreferReplica, the catch-up proofs — until it has chosen
// the instance a backup of c is taken on, or says why it waits.
func chooseBackupInstance(ctx context.Context, r backupcontroller.Reached, c *topology.Cluster) (planner.BackupChoice, planner.Wait) {
	x := &performer{conn: r.Coordinators, data: r.Data, dataMade: true, now: time.Now}
	chosen := performUntil[planner.BackupChosen](ctx, x, func(record []planner.Result) planner.Step {
		return planner.NextBackupChoice(c, record)
	})
	return chosen.Choice, chosen.Wait
}

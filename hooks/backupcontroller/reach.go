package backupcontroller

import (
	"context"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/clustersecrets"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// How a backup's pass reaches its cluster: the hook's Bolt connector (Config.Connector) over
// spec.tls's CA to the coordinators, with spec.auth's credentials too to the data instances, and
// an agent to its own instance with the same CA and user — all as the cluster's backup-agent
// Secret carries them (access.go).

// Reach reaches the cluster for a start, from the backup-agent Secret, and makes the agents'
// client; problems say what the Secret lacks or why the cluster cannot be reached, problem why
// the agents' client cannot be made.
func (p *pass) Reach() (problems []string, problem string) {
	a, c := p.secret(), p.in.Cluster
	if len(a.Problems) > 0 {
		return a.Problems, ""
	}
	trust := clustersecrets.TrustOf(c, a.BoltCA)
	if p.coordinators, problem = trust.Connector(p.ctl.cfg.Connector); problem != "" {
		return []string{problem}, ""
	}
	auth := clustersecrets.Auth{Creds: a.Memgraph}
	p.target.CAPEM = trust.CAPEM
	if auth.Creds != nil {
		p.target.Username, p.target.Password = auth.Creds.Username, auth.Creds.Password
	}
	if p.data, problem = auth.Connector(p.coordinators); problem != "" {
		return []string{problem}, ""
	}
	if _, err := p.agentClient(); err != nil {
		return nil, err.Error()
	}
	return nil, ""
}

// ShowInstances is SHOW INSTANCES on a coordinator, within 1/(share+1) of the time left when
// share > 0.
func (p *pass) ShowInstances(ctx context.Context, coordinator string, share int) ([]memgraph.Instance, error) {
	if deadline, ok := ctx.Deadline(); ok && share > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)/time.Duration(share+1))
		defer cancel()
	}
	return p.coordinators.Client(coordinator).ShowInstances(ctx)
}

// ShowReplicationLag is SHOW REPLICATION LAG on a coordinator.
func (p *pass) ShowReplicationLag(ctx context.Context, coordinator string) ([]memgraph.InstanceLag, error) {
	return p.coordinators.Client(coordinator).ShowReplicationLag(ctx)
}

// ShowReplicas is SHOW REPLICAS on a data instance, with spec.auth's credentials.
func (p *pass) ShowReplicas(ctx context.Context, instance string) ([]memgraph.Replica, error) {
	return p.data.Client(instance).ShowReplicas(ctx)
}

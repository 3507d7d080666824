package hooks_test

import (
	"context"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// unreachable is a Connector whose every coordinator refuses connections.
type unreachable struct{}

func (unreachable) Client(address string) memgraph.Client { return deadClient{address} }

type deadClient struct{ address string }

func (d deadClient) err() error {
	return &memgraph.Error{Kind: memgraph.KindUnreachable, Address: d.address, Message: "connection refused"}
}

func (d deadClient) ShowInstances(context.Context) ([]memgraph.Instance, error) { return nil, d.err() }
func (d deadClient) ShowReplicationLag(context.Context) ([]memgraph.InstanceLag, error) {
	return nil, d.err()
}
func (d deadClient) ShowReplicas(context.Context) ([]memgraph.Replica, error) { return nil, d.err() }
func (d deadClient) AddCoordinator(context.Context, int, memgraph.CoordinatorConfig) error {
	return d.err()
}
func (d deadClient) RegisterInstance(context.Context, string, memgraph.InstanceConfig) error {
	return d.err()
}
func (d deadClient) SetInstanceToMain(context.Context, string) error            { return d.err() }
func (d deadClient) DemoteInstance(context.Context, string) error               { return d.err() }
func (d deadClient) UnregisterInstance(context.Context, string) error           { return d.err() }
func (d deadClient) RemoveCoordinator(context.Context, int) error               { return d.err() }
func (d deadClient) UpdateInstanceConfig(context.Context, string, string) error { return d.err() }
func (d deadClient) UpdateCoordinatorConfig(context.Context, int, string) error { return d.err() }
func (d deadClient) YieldLeadership(context.Context) error                      { return d.err() }
func (d deadClient) ForceResetClusterState(context.Context) error               { return d.err() }
func (d deadClient) ShowCoordinatorSettings(context.Context) ([]memgraph.Setting, error) {
	return nil, d.err()
}
func (d deadClient) SetCoordinatorSetting(context.Context, string, string) error { return d.err() }

// tapConnector wraps a Connector and runs afterLag once, right after the first SHOW
// REPLICATION LAG it serves, and afterDemote once, right after the first DEMOTE INSTANCE: a
// test's way to change the cluster between a plan and its steps.
type tapConnector struct {
	inner       memgraph.Connector
	afterLag    func()
	afterDemote func()
}

func (t *tapConnector) Client(address string) memgraph.Client {
	return tapClient{Client: t.inner.Client(address), tap: t}
}

type tapClient struct {
	memgraph.Client
	tap *tapConnector
}

func (c tapClient) ShowReplicationLag(ctx context.Context) ([]memgraph.InstanceLag, error) {
	lag, err := c.Client.ShowReplicationLag(ctx)
	if f := c.tap.afterLag; f != nil {
		c.tap.afterLag = nil
		f()
	}
	return lag, err
}

func (c tapClient) DemoteInstance(ctx context.Context, name string) error {
	err := c.Client.DemoteInstance(ctx, name)
	if f := c.tap.afterDemote; f != nil {
		c.tap.afterDemote = nil
		f()
	}
	return err
}

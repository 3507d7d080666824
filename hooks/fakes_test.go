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
func (d deadClient) AddCoordinator(context.Context, int, memgraph.CoordinatorConfig) error {
	return d.err()
}
func (d deadClient) RegisterInstance(context.Context, string, memgraph.InstanceConfig) error {
	return d.err()
}
func (d deadClient) SetInstanceToMain(context.Context, string) error  { return d.err() }
func (d deadClient) DemoteInstance(context.Context, string) error     { return d.err() }
func (d deadClient) UnregisterInstance(context.Context, string) error { return d.err() }
func (d deadClient) RemoveCoordinator(context.Context, int) error     { return d.err() }
func (d deadClient) YieldLeadership(context.Context) error            { return d.err() }
func (d deadClient) ForceResetClusterState(context.Context) error     { return d.err() }

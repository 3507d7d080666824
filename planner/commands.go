package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Command is one step of a plan: a small value that knows the exact query it runs and how to
// run it on the leader's connection. The hook runs a plan's commands in order and stops at the
// first error: later commands were planned on the assumption that earlier ones succeeded (an
// UNREGISTER behind a Handover would otherwise be aimed at a MAIN).
type Command interface {
	// String is the exact query the command runs, or for a composite step its queries in the
	// order they may run (see Handover.String).
	String() string
	Run(ctx context.Context, c memgraph.Client) error
}

// AddCoordinator adds a declared coordinator to the Raft cluster with exactly its declared
// identity. For the coordinator we are connected to, that identity is its own
// --coordinator-hostname and ports, which Memgraph compares as strings.
type AddCoordinator struct {
	ID     int
	Config memgraph.CoordinatorConfig
}

func (a AddCoordinator) String() string { return memgraph.AddCoordinatorQuery(a.ID, a.Config) }

// Run adds the coordinator. "Such id already exists" answers both for a member registered
// meanwhile (by another hook replica: done) and for a half-joined one (not done, and never
// doable by ADD), so Run reads SHOW INSTANCES to tell them apart.
func (a AddCoordinator) Run(ctx context.Context, c memgraph.Client) error {
	err := c.AddCoordinator(ctx, a.ID, a.Config)
	var mgErr *memgraph.Error
	if !errors.As(err, &mgErr) || mgErr.Kind != memgraph.KindAlreadyExists || !strings.Contains(mgErr.Message, "such id") {
		return err
	}
	rows, readErr := c.ShowInstances(ctx)
	if readErr != nil {
		return err
	}
	name := topology.CoordinatorName(a.ID)
	for _, r := range rows {
		if r.IsCoordinator() && r.Name == name {
			if r.BoltServer != "" {
				return nil
			}
			return &HalfJoinedError{Coordinator: name, Err: err}
		}
	}
	return err
}

// HalfJoinedError is ADD COORDINATOR refused because NuRaft already has the coordinator while
// the leader's application log does not (SHOW INSTANCES lists it with an empty bolt_server): a
// member whose earlier ADD timed out and whose join completed later.
type HalfJoinedError struct {
	Coordinator string
	Err         error // Memgraph's refusal
}

func (e *HalfJoinedError) Error() string {
	return fmt.Sprintf("%s is half-joined (a Raft member without a bolt_server): %s", e.Coordinator, message(e.Err))
}

func (e *HalfJoinedError) Unwrap() error { return e.Err }

// RegisterInstance registers a declared data instance (SYNC) with its declared identity.
type RegisterInstance struct {
	Name   string
	Config memgraph.InstanceConfig
}

func (r RegisterInstance) String() string { return memgraph.RegisterInstanceQuery(r.Name, r.Config) }
func (r RegisterInstance) Run(ctx context.Context, c memgraph.Client) error {
	return c.RegisterInstance(ctx, r.Name, r.Config)
}

// SetInstanceToMain promotes a declared instance in a cluster proven to have no MAIN.
type SetInstanceToMain struct{ Name string }

func (s SetInstanceToMain) String() string { return memgraph.SetInstanceToMainQuery(s.Name) }
func (s SetInstanceToMain) Run(ctx context.Context, c memgraph.Client) error {
	return c.SetInstanceToMain(ctx, s.Name)
}

// UnregisterInstance removes a retiring data instance that is not the MAIN.
type UnregisterInstance struct{ Name string }

func (u UnregisterInstance) String() string { return memgraph.UnregisterInstanceQuery(u.Name) }
func (u UnregisterInstance) Run(ctx context.Context, c memgraph.Client) error {
	return c.UnregisterInstance(ctx, u.Name)
}

// RemoveCoordinator removes a retiring coordinator that is not the leader from Raft.
type RemoveCoordinator struct{ ID int }

func (r RemoveCoordinator) String() string { return memgraph.RemoveCoordinatorQuery(r.ID) }
func (r RemoveCoordinator) Run(ctx context.Context, c memgraph.Client) error {
	return c.RemoveCoordinator(ctx, r.ID)
}

// ForceResetClusterState has the leader fail over to the most up-to-date alive replica; Memgraph
// chooses, from each instance's committed transactions, which the hook cannot see while no
// MAIN exists (SHOW REPLICATION LAG needs one). The query blocks until the leader's
// reconciliation succeeds or its leadership is lost, and the client cuts it off at its own
// deadline (memgraph.PoolOptions.ForceResetTimeout): see JudgeStep for what each ending means.
type ForceResetClusterState struct{}

func (ForceResetClusterState) String() string { return memgraph.ForceResetClusterStateQuery }
func (ForceResetClusterState) Run(ctx context.Context, c memgraph.Client) error {
	return c.ForceResetClusterState(ctx)
}

// YieldLeadership asks the leader we are connected to, which is retiring, to hand leadership to
// another member. Raft picks the successor, so it is always a plan's last command.
type YieldLeadership struct{}

func (YieldLeadership) String() string { return memgraph.YieldLeadershipQuery }
func (YieldLeadership) Run(ctx context.Context, c memgraph.Client) error {
	return c.YieldLeadership(ctx)
}

package planner

import (
	"context"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// Command is one step of a plan: a plain value that says what to do, never how. The hook's
// executor runs a plan's commands in order on the leader and stops at the first one that does
// not succeed: later commands were planned on the assumption that earlier ones succeeded (an
// UNREGISTER behind a Handover would otherwise be aimed at a MAIN). What to check right before a
// step (Precondition) and what its error means (JudgeStep) are decided here, not by the executor.
// A command that is one Bolt query sends it itself (Send, beside its String, on the client
// Write.Perform gives it): the query it prints is the query it runs.
type Command interface {
	// String is the exact query the command runs, or for a composite step its queries in the
	// order they may run (see Handover.String).
	String() string
	// Kind is the command's kind, a bounded label (the hook's commands metric).
	Kind() CommandKind
	command() // only this package's commands
}

// CommandKind names a kind of command by the query verb it starts with.
type CommandKind string

const (
	KindAddCoordinator         CommandKind = "ADD COORDINATOR"
	KindRegisterInstance       CommandKind = "REGISTER INSTANCE"
	KindSetInstanceToMain      CommandKind = "SET INSTANCE TO MAIN"
	KindHandover               CommandKind = "DEMOTE INSTANCE" // a handover starts with DEMOTE
	KindUnregisterInstance     CommandKind = "UNREGISTER INSTANCE"
	KindRemoveCoordinator      CommandKind = "REMOVE COORDINATOR"
	KindForceResetClusterState CommandKind = "FORCE RESET"
	KindYieldLeadership        CommandKind = "YIELD LEADERSHIP"
	KindUpdateConfig           CommandKind = "UPDATE CONFIG"
)

// AddCoordinator adds a declared coordinator to the Raft cluster with exactly its declared
// identity. For the coordinator we are connected to, that identity is its own
// --coordinator-hostname and ports, which Memgraph compares as strings. Memgraph answers
// KindIDExists both for a member registered meanwhile (done) and for a half-joined one (not
// done, and never doable by ADD): JudgeStep asks for a fresh read to tell them apart.
type AddCoordinator struct {
	ID     int
	Config memgraph.CoordinatorConfig
}

func (a AddCoordinator) String() string  { return memgraph.AddCoordinatorQuery(a.ID, a.Config) }
func (AddCoordinator) Kind() CommandKind { return KindAddCoordinator }
func (AddCoordinator) command()          {}
func (a AddCoordinator) Send(ctx context.Context, c memgraph.Client) error {
	return c.AddCoordinator(ctx, a.ID, a.Config)
}

// RegisterInstance registers a declared data instance with its declared identity and mode.
type RegisterInstance struct {
	Name   string
	Config memgraph.InstanceConfig
}

func (r RegisterInstance) String() string  { return memgraph.RegisterInstanceQuery(r.Name, r.Config) }
func (RegisterInstance) Kind() CommandKind { return KindRegisterInstance }
func (RegisterInstance) command()          {}
func (r RegisterInstance) Send(ctx context.Context, c memgraph.Client) error {
	return c.RegisterInstance(ctx, r.Name, r.Config)
}

// SetInstanceToMain promotes a declared instance in a cluster proven to have no MAIN.
type SetInstanceToMain struct{ Name string }

func (s SetInstanceToMain) String() string  { return memgraph.SetInstanceToMainQuery(s.Name) }
func (SetInstanceToMain) Kind() CommandKind { return KindSetInstanceToMain }
func (SetInstanceToMain) command()          {}
func (s SetInstanceToMain) Send(ctx context.Context, c memgraph.Client) error {
	return c.SetInstanceToMain(ctx, s.Name)
}

// UnregisterInstance removes a data instance that is not the MAIN: a retiring one, or, with
// Rebuild, the one the memgraph.com/rebuild annotation names (planRebuild), which a fresh read
// must prove still safe to unregister right before the step (Precondition).
type UnregisterInstance struct {
	Name    string
	Rebuild bool
}

func (u UnregisterInstance) String() string  { return memgraph.UnregisterInstanceQuery(u.Name) }
func (UnregisterInstance) Kind() CommandKind { return KindUnregisterInstance }
func (UnregisterInstance) command()          {}
func (u UnregisterInstance) Send(ctx context.Context, c memgraph.Client) error {
	return c.UnregisterInstance(ctx, u.Name)
}

// RemoveCoordinator removes a retiring coordinator that is not the leader from Raft.
type RemoveCoordinator struct{ ID int }

func (r RemoveCoordinator) String() string  { return memgraph.RemoveCoordinatorQuery(r.ID) }
func (RemoveCoordinator) Kind() CommandKind { return KindRemoveCoordinator }
func (RemoveCoordinator) command()          {}
func (r RemoveCoordinator) Send(ctx context.Context, c memgraph.Client) error {
	return c.RemoveCoordinator(ctx, r.ID)
}

// ForceResetClusterState has the leader fail over to the most up-to-date alive replica; Memgraph
// chooses, from each instance's committed transactions, which the hook cannot see while no
// MAIN exists (SHOW REPLICATION LAG needs one). The query blocks until the leader's
// reconciliation succeeds or its leadership is lost, and the Bolt client cuts it off at its own
// deadline (bolt.PoolOptions.ForceResetTimeout): see JudgeStep for what each ending means.
type ForceResetClusterState struct{}

func (ForceResetClusterState) String() string    { return memgraph.ForceResetClusterStateQuery }
func (ForceResetClusterState) Kind() CommandKind { return KindForceResetClusterState }
func (ForceResetClusterState) command()          {}
func (ForceResetClusterState) Send(ctx context.Context, c memgraph.Client) error {
	return c.ForceResetClusterState(ctx)
}

// YieldLeadership asks the leader we are connected to, which is retiring, to hand leadership to
// another member. Raft picks the successor, so it is always a plan's last command.
type YieldLeadership struct{}

func (YieldLeadership) String() string    { return memgraph.YieldLeadershipQuery }
func (YieldLeadership) Kind() CommandKind { return KindYieldLeadership }
func (YieldLeadership) command()          {}
func (YieldLeadership) Send(ctx context.Context, c memgraph.Client) error {
	return c.YieldLeadership(ctx)
}

// UpdateInstanceConfig changes a registered declared data instance's bolt_server in place to the
// address clients are to be given (topology.Member.Advertised). It touches nothing else: the
// instance stays up and keeps its role, and Memgraph only appends the change to Raft.
type UpdateInstanceConfig struct {
	Name       string
	BoltServer string
}

func (u UpdateInstanceConfig) String() string {
	return memgraph.UpdateInstanceConfigQuery(u.Name, u.BoltServer)
}
func (UpdateInstanceConfig) Kind() CommandKind { return KindUpdateConfig }
func (UpdateInstanceConfig) command()          {}
func (u UpdateInstanceConfig) Send(ctx context.Context, c memgraph.Client) error {
	return c.UpdateInstanceConfig(ctx, u.Name, u.BoltServer)
}

// UpdateCoordinatorConfig is UpdateInstanceConfig for a registered declared coordinator.
type UpdateCoordinatorConfig struct {
	ID         int
	BoltServer string
}

func (u UpdateCoordinatorConfig) String() string {
	return memgraph.UpdateCoordinatorConfigQuery(u.ID, u.BoltServer)
}
func (UpdateCoordinatorConfig) Kind() CommandKind { return KindUpdateConfig }
func (UpdateCoordinatorConfig) command()          {}
func (u UpdateCoordinatorConfig) Send(ctx context.Context, c memgraph.Client) error {
	return c.UpdateCoordinatorConfig(ctx, u.ID, u.BoltServer)
}

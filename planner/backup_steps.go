package planner

import (
	"context"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The steps of a MemgraphBackup's pass and what performing one takes of the shell
// (BackupEffects): each step performs itself — reaching the cluster, one Memgraph query, one
// call to an agent or to the store — and decides nothing.

// BackupStep is what a MemgraphBackup's pass does next; BackupDone ends it and performs nothing.
type BackupStep interface {
	Perform(ctx context.Context, e BackupEffects) BackupResult
}

// BackupEffects is what the shell provides a MemgraphBackup's steps: the cluster's Memgraph and
// agents, reached with what the cluster's backup-agent Secret carries, and the store. The shell
// reads that Secret once a pass and makes one agents' client; the planner never holds a
// credential.
type BackupEffects interface {
	// Reach reaches the cluster for a start: its Memgraph (spec.tls's CA, spec.auth's user) and
	// its agents, as the backup-agent Secret says. Problems say what the Secret lacks or what
	// keeps the cluster from being reached; problem why the agents' client cannot be made.
	Reach() (problems []string, problem string)
	// ShowInstances is SHOW INSTANCES on the coordinator at address, within 1/(share+1) of the
	// time left when share > 0 (a coordinator that does not answer leaves time for the others).
	ShowInstances(ctx context.Context, coordinator string, share int) ([]memgraph.Instance, error)
	// ShowReplicationLag is SHOW REPLICATION LAG on the coordinator at address.
	ShowReplicationLag(ctx context.Context, coordinator string) ([]memgraph.InstanceLag, error)
	// ShowReplicas is SHOW REPLICAS on the data instance at address, with spec.auth's
	// credentials.
	ShowReplicas(ctx context.Context, instance string) ([]memgraph.Replica, error)
	// Jobs asks each agent, at once, for the job id: the answers in the agents' order.
	Jobs(ctx context.Context, agents []string, id string) []AgentAnswer
	// Job asks the agent at address for the job id.
	Job(ctx context.Context, agent, id string) AgentAnswer
	// StartJob asks the agent of s.Agent to start the job s names, with the store's credentials
	// and how the agent reaches its Memgraph.
	StartJob(ctx context.Context, s BackupStartJob) AgentAnswer
	// ReadStore reads the credentials of the store the backup's objects are in, for the removals
	// that follow; problem says why they cannot be had.
	ReadStore() (problem string)
	// RemoveObject removes the object key from the cluster's spec.backup.destination (absent
	// counts as removed).
	RemoveObject(ctx context.Context, key string) error
}

// AgentAnswer is an agent's answer to one call about a job, as the shell got it: the job, or
// why there is none (Err, in words that name the agent). An agent that refused the call answered
// with an HTTP status (Status; 0 when no answer came) and what it said (Message); Unknown: it
// answered that it knows no such job.
type AgentAnswer struct {
	Job     AgentJob
	Err     string
	Status  int
	Message string
	Unknown bool
}

// AgentJob is what an agent says of a backup job (the backup package's JobStatus, as the
// planner reads it).
type AgentJob struct {
	// Completed or Failed: how it ended; neither while it runs.
	Completed, Failed bool
	// Uploading or CheckingStore: what it does now, or did when it failed; neither while it
	// snapshots.
	Uploading, CheckingStore bool
	// ChosenRole and Reason as the start asked; Role the role the instance held when it began.
	ChosenRole, Reason, Role string
	StartedAt, FinishedAt    time.Time
	Deadline                 time.Time
	BytesDone, BytesTotal    int64
	SnapshotWaits            int32
	Databases                []v1alpha1.BackupDatabase
	Error, Retrying          string
}

// BackupResult is what performing one step gave, in the pass's record in the order performed.
type BackupResult struct {
	// Problems (BackupReach) are what the backup-agent Secret or reaching the cluster lack;
	// Problem (BackupReach, BackupReadStore) why the agents' client or the store's credentials
	// cannot be made.
	Problems []string
	Problem  string
	// Agents (BackupFindJob) are every agent's answer, by ordinal; Agent the one agent's
	// (BackupStartJob, BackupPollJob).
	Agents []AgentAnswer
	Agent  AgentAnswer
	// Err (BackupRemove) is why the object could not be removed.
	Err string
	// What a read of the choice gave: the coordinator's table, the leader's lag, the MAIN's
	// replicas, or Memgraph's error; Expired that the pass's budget had run out by its end.
	Instances []memgraph.Instance
	Lag       []memgraph.InstanceLag
	Replicas  []memgraph.Replica
	QueryErr  error
	Expired   bool
}

// BackupReach reaches the cluster for a backup that starts (BackupEffects.Reach).
type BackupReach struct{}

func (BackupReach) Perform(_ context.Context, e BackupEffects) BackupResult {
	var got BackupResult
	got.Problems, got.Problem = e.Reach()
	return got
}

// BackupAgent is one data instance's backup agent: the instance and the agent's address.
type BackupAgent struct {
	Instance topology.DataInstance
	Address  string
}

// BackupFindJob asks every agent, at once, for the job ID: one that has it was started by a call
// whose answer was lost.
type BackupFindJob struct {
	ID     string
	Agents []BackupAgent
}

func (s BackupFindJob) Perform(ctx context.Context, e BackupEffects) BackupResult {
	addresses := make([]string, len(s.Agents))
	for i, a := range s.Agents {
		addresses[i] = a.Address
	}
	return BackupResult{Agents: e.Jobs(ctx, addresses, s.ID)}
}

// BackupStartJob asks the agent of Agent to start the backup's job ID, taken as the instance's
// Role (chosen for Reason) into the objects under KeyPrefix, stopping at Deadline.
type BackupStartJob struct {
	Agent        BackupAgent
	ID           string
	Role, Reason string
	Deadline     time.Time
	KeyPrefix    string
}

func (s BackupStartJob) Perform(ctx context.Context, e BackupEffects) BackupResult {
	return BackupResult{Agent: e.StartJob(ctx, s)}
}

// BackupPollJob asks the agent at Address for the job ID.
type BackupPollJob struct {
	Address, ID string
}

func (s BackupPollJob) Perform(ctx context.Context, e BackupEffects) BackupResult {
	return BackupResult{Agent: e.Job(ctx, s.Address, s.ID)}
}

// BackupReadStore reads the credentials of the store the backup's objects are in, for the
// removals that follow.
type BackupReadStore struct{}

func (BackupReadStore) Perform(_ context.Context, e BackupEffects) BackupResult {
	return BackupResult{Problem: e.ReadStore()}
}

// BackupRemove removes one object from the store (absent counts as removed).
type BackupRemove struct{ Key string }

func (s BackupRemove) Perform(ctx context.Context, e BackupEffects) BackupResult {
	var got BackupResult
	if err := e.RemoveObject(ctx, s.Key); err != nil {
		got.Err = err.Error()
	}
	return got
}

// backupShowInstances, backupShowLag and backupShowReplicas are the reads that choose the
// instance a backup is taken on (backuptarget.go): the cluster pass's own reads of the leader's
// table and the catch-up proofs, performed one a step by the backup's shell.
type (
	backupShowInstances struct {
		from  string
		share int
	}
	backupShowLag      struct{ from string }
	backupShowReplicas struct{ from string }
)

func (r backupShowInstances) Perform(ctx context.Context, e BackupEffects) BackupResult {
	rows, err := e.ShowInstances(ctx, r.from, r.share)
	return BackupResult{Instances: rows, QueryErr: err, Expired: ctx.Err() != nil}
}

func (r backupShowLag) Perform(ctx context.Context, e BackupEffects) BackupResult {
	lag, err := e.ShowReplicationLag(ctx, r.from)
	return BackupResult{Lag: lag, QueryErr: err, Expired: ctx.Err() != nil}
}

func (r backupShowReplicas) Perform(ctx context.Context, e BackupEffects) BackupResult {
	replicas, err := e.ShowReplicas(ctx, r.from)
	return BackupResult{Replicas: replicas, QueryErr: err, Expired: ctx.Err() != nil}
}

// BackupDone ends the pass: the status, when to be called again, and for the finalize hook
// whether the MemgraphBackup may go.
type BackupDone struct {
	Status      v1alpha1.MemgraphBackupStatus
	ResyncAfter time.Duration
	Finalized   bool
	// Events are the pass's lines for the hook's log.
	Events []Event
}

// Perform performs nothing: the pass is over.
func (BackupDone) Perform(context.Context, BackupEffects) BackupResult { return BackupResult{} }

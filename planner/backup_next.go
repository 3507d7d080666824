package planner

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A MemgraphBackup's pass is a step machine in the shape of a MemgraphUser's (NextUser): the
// shell gathers what the request shows into a BackupPass, asks NextBackup what to do, performs
// the step it names (reach the cluster, ask the agents for the job, choose the instance, start or
// poll the job, read the store's Secret, remove an object), appends the BackupResult to the
// pass's record, and asks again until NextBackup says BackupDone. Every decision — the gates,
// the deadline, adopting a job, what the agent's answer means, which objects go on deletion, the
// status and when to be called again — is NextBackup's (backup_pass.go). No step lasts longer
// than the data is big: the agent does that, and a step starts or polls its job.

// The polling intervals of a backup, as resyncAfterSeconds: while its job runs, and while its
// objects cannot be removed.
const (
	BackupJobPoll    = 2 * time.Second
	BackupDeletePoll = 10 * time.Second
)

// BackupStep is what a MemgraphBackup's pass does next.
type BackupStep interface{ isBackupStep() }

// BackupReach asks the shell to read the cluster's backup-agent Secret for a backup that
// starts, reach the cluster's Memgraph with it (Config.Reach) and make the client of its agents.
type BackupReach struct{}

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

// BackupChoose asks the shell to read the cluster's leader (and, for PreferReplica, the catch-up
// proofs) and choose the instance (ChooseBackupInstance).
type BackupChoose struct{}

// BackupStartJob asks the agent of Agent to start the backup's job ID, taken as the instance's
// Role (chosen for Reason) into the objects under KeyPrefix, stopping at Deadline.
type BackupStartJob struct {
	Agent        BackupAgent
	ID           string
	Role, Reason string
	Deadline     time.Time
	KeyPrefix    string
}

// BackupPollJob asks the agent at Address for the job ID.
type BackupPollJob struct {
	Address, ID string
}

// BackupReadStore asks the shell to read the credentials of the store the backup's objects are in
// from the cluster's backup-agent Secret, for the removals that follow.
type BackupReadStore struct{}

// BackupRemove asks the shell to remove one object from the store (absent counts as removed).
type BackupRemove struct{ Key string }

// BackupDone ends the pass: the status, when to be called again, and for the finalize hook
// whether the MemgraphBackup may go.
type BackupDone struct {
	Status      v1alpha1.MemgraphBackupStatus
	ResyncAfter time.Duration
	Finalized   bool
	// Events are the pass's lines for the hook's log.
	Events []Event
}

func (BackupReach) isBackupStep()     {}
func (BackupFindJob) isBackupStep()   {}
func (BackupChoose) isBackupStep()    {}
func (BackupStartJob) isBackupStep()  {}
func (BackupPollJob) isBackupStep()   {}
func (BackupReadStore) isBackupStep() {}
func (BackupRemove) isBackupStep()    {}
func (BackupDone) isBackupStep()      {}

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
	// Found (BackupFindJob) is the index of the first agent that has the job, -1 when none.
	Found int
	// Job is the agent's answer (BackupFindJob found, BackupStartJob, BackupPollJob).
	Job AgentJob
	// Choice and Held answer BackupChoose.
	Choice BackupChoice
	Held   Wait
	// Err is why the step failed; Refused (BackupStartJob) that the agent refused the job,
	// Lost (BackupPollJob) that it knows no such job.
	Err           string
	Refused, Lost bool
}

// BackupPass is what a MemgraphBackup's request shows, gathered once by the shell before the
// pass's first step. Its status is the backup's record: a backup is taken once, so the phase it
// recorded (and where it is taken) is what the pass continues from.
type BackupPass struct {
	Backup *v1alpha1.MemgraphBackup
	// Cluster is the backup's MemgraphCluster; nil when the request has none, or one whose spec
	// the hook refuses (ClusterProblem says why).
	Cluster        *topology.Cluster
	ClusterProblem string
	// Others are the other MemgraphBackups of the cluster in the backup's namespace.
	Others []v1alpha1.MemgraphBackup
	// ScheduleName is the MemgraphScheduledBackup that controls the backup ("" when none does),
	// Schedule that schedule as observed (nil when it is gone).
	ScheduleName string
	Schedule     *v1alpha1.MemgraphScheduledBackup
	// PodImages are the Memgraph container's image of each of the cluster's pods seen, by name.
	PodImages map[string]string
	// Finalizing: the finalize hook asks (the MemgraphBackup is being deleted).
	Finalizing bool
	Now        time.Time
}

// NextBackup decides a MemgraphBackup's pass's next step from what the request shows (in) and
// everything the pass's steps gave so far (record, in the order performed). It is
// deterministic: the same input and record give the same step.
func NextBackup(in *BackupPass, record []BackupResult) BackupStep {
	w := &backupWalk{in: in, b: in.Backup, stepRecord: stepRecord[BackupStep, BackupResult]{record: record}}
	return next(&w.stepRecord, in.Finalizing, w.finalize, w.sync, func(d BackupDone) BackupStep { return d })
}

// backupWalk replays a MemgraphBackup's pass from its start on every NextBackup: each step it
// needs is answered from the record in order and, past its end, becomes the pending step.
type backupWalk struct {
	in *BackupPass
	b  *v1alpha1.MemgraphBackup
	stepRecord[BackupStep, BackupResult]
	events []Event
}

// stamp is t as a status records it: UTC, to the second.
func stamp(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t.UTC().Truncate(time.Second))
	return &mt
}

// deletion is what deleting the backup reads: its deletionPolicy, and the state of the schedule
// that controls it (ObjectsOnDeletion).
func (in *BackupPass) deletion() BackupDeletion {
	d := BackupDeletion{Policy: in.Backup.Spec.DeletionPolicy, Schedule: in.ScheduleName, State: NotScheduled}
	switch sb := in.Schedule; {
	case in.ScheduleName == "":
	case sb == nil:
		d.State = ScheduleGone
	default:
		d.State, d.OwnerReference = ScheduleLive, sb.Spec.BackupOwnerReference
		if d.OwnerReference == "" {
			d.OwnerReference = v1alpha1.BackupOwnerNone
		}
		if sb.DeletionTimestamp != nil {
			d.State = ScheduleDeleting
		}
	}
	return d
}

// others are the other backups of the cluster as BackupWaits weighs them: which are older (by
// creation, then name), and when each gives up — status.deadline as recorded, else its creation
// plus its spec.timeout.
func (in *BackupPass) others() []OtherBackup {
	b := in.Backup
	var out []OtherBackup
	for _, o := range in.Others {
		older := o.CreationTimestamp.Before(&b.CreationTimestamp) ||
			(o.CreationTimestamp.Equal(&b.CreationTimestamp) && o.Name < b.Name)
		deadline := o.CreationTimestamp.Add(o.Spec.TimeoutDuration()).UTC()
		if o.Status.Deadline != nil {
			deadline = o.Status.Deadline.UTC()
		}
		out = append(out, OtherBackup{Name: o.Name, Phase: o.Status.Phase, Older: older, Deadline: deadline})
	}
	return out
}

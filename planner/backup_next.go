package planner

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A MemgraphBackup's pass is a step machine in the shape of a MemgraphUser's (NextUser): the
// shell gathers what the request shows into a BackupPass, asks NextBackup what to do, performs
// the step it names (backup_steps.go: reach the cluster, ask the agents for the job, read the
// leader to choose the instance, start or poll the job, read the store's Secret, remove an
// object), appends the BackupResult to the pass's record, and asks again until NextBackup says
// BackupDone. Every decision — the gates, the deadline, adopting a job, the instance, what the
// agent's answer means, which objects go on deletion, the status and when to be called again —
// is NextBackup's (backup_pass.go, backuptarget.go). No step lasts longer than the data is big:
// the agent does that, and a step starts or polls its job.

// The polling intervals of a backup, as resyncAfterSeconds: while its job runs, and while its
// objects cannot be removed.
const (
	BackupJobPoll    = 2 * time.Second
	BackupDeletePoll = 10 * time.Second
)

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

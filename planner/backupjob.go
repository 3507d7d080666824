package planner

import (
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// BackupJob is what a backup's agent job says of itself when it failed: the role the instance
// held when the job began ("" when it could not be read), whether it failed talking to the store
// (checking the bucket or uploading), and when it ended against its deadline.
type BackupJob struct {
	Role                 string
	Store                bool
	FinishedAt, Deadline time.Time
}

// BackupFailure is the reason a backup whose job failed records: RoleChanged when the instance no
// longer held the role it was chosen in, DeadlineExceeded when the job ran out of time,
// UploadFailed when the store refused (checking the bucket or uploading) or the upload broke off,
// else SnapshotFailed (Memgraph refused a query).
func BackupFailure(j BackupJob, chosenRole string) string {
	switch {
	case j.Role != "" && j.Role != chosenRole:
		return ReasonRoleChanged
	case !j.Deadline.IsZero() && !j.FinishedAt.Before(j.Deadline):
		return ReasonDeadlineExceeded
	case j.Store:
		return ReasonUploadFailed
	}
	return ReasonSnapshotFailed
}

// RestoreTimeout is how long a restore job may run once started; RestoreRetryAfter how long a
// restore job that failed for a reason trying again may mend (the store did not answer, the
// deadline passed) rests before it is started again.
const (
	RestoreTimeout    = 6 * time.Hour
	RestoreRetryAfter = 30 * time.Second
)

// RestoreJob is what the agent of the instance restored into says of the cluster's restore job:
// nothing (Known false: never started there, or the agent restarted since), or its state.
type RestoreJob struct {
	Known, Running, Completed, Failed bool
	// Permanent: it failed for a reason trying again does not mend (the instance holds data, the
	// object is not what the backup recorded).
	Permanent  bool
	FinishedAt time.Time
	// What status.restore shows of it: its state (Running, Completed, Failed), what it does now
	// (or did when it failed), its bytes, its databases, when it started and why it failed.
	State, Phase          string
	BytesDone, BytesTotal int64
	Databases             []v1alpha1.RestoreDatabase
	StartedAt             time.Time
	Error                 string
}

// RestoreAction is what the restore stage does with the job.
type RestoreAction int

const (
	RestoreWait  RestoreAction = iota // it runs, or failed for good: report it
	RestoreStart                      // start it (again, when it failed for a reason that may mend)
	RestoreDone                       // the backup is restored: registration may proceed
)

// NextRestore decides, at now, what the restore stage does with job. A job the agent does not
// know is started: the agent's own reads make a second start harmless (a database that holds the
// backup's snapshot is not restored again, one that holds other data is never touched). A job
// that failed for good is left as it failed until its agent restarts (its pod is replaced).
func NextRestore(job RestoreJob, now time.Time) RestoreAction {
	switch {
	case !job.Known:
		return RestoreStart
	case job.Completed:
		return RestoreDone
	case job.Running, job.Permanent, now.Sub(job.FinishedAt) < RestoreRetryAfter:
		return RestoreWait
	}
	return RestoreStart
}

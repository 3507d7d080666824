package planner

import (
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// What deleting a MemgraphBackup does to the objects it put in the store. Its deletionPolicy
// says, unless the backup is a schedule's and goes because the schedule is deleted: then the
// schedule's backupOwnerReference says, and none (the default) keeps them whatever the
// deletionPolicy. A schedule that drops a backup (keep, maxAge) while it lives, or a backup
// deleted by hand, follows the deletionPolicy.

// ScheduleState is what a backup's finalize hook observes of the MemgraphScheduledBackup that
// owns it.
type ScheduleState int

const (
	NotScheduled     ScheduleState = iota // the backup is no schedule's
	ScheduleLive                          // its schedule exists and is not being deleted
	ScheduleDeleting                      // its schedule is being deleted (a deletionTimestamp)
	ScheduleGone                          // its schedule no longer exists
)

// BackupDeletion is what a backup's finalize hook reads.
type BackupDeletion struct {
	Policy   v1alpha1.BackupDeletionPolicy
	Schedule string // the owning schedule's name, "" when NotScheduled
	State    ScheduleState
	// OwnerReference is the schedule's spec.backupOwnerReference, when it exists.
	OwnerReference v1alpha1.BackupOwnerReference
}

// ObjectsOnDeletion is whether deleting the backup removes its objects, and why in a sentence.
func ObjectsOnDeletion(d BackupDeletion) (remove bool, why string) {
	switch {
	case d.Policy != v1alpha1.BackupDelete:
		return false, "deletionPolicy is Retain: the objects stay in the store"
	case d.State == ScheduleDeleting && d.OwnerReference == v1alpha1.BackupOwnerSelf:
		return true, fmt.Sprintf("MemgraphScheduledBackup %s is being deleted with backupOwnerReference self, and deletionPolicy is Delete", d.Schedule)
	case d.State == ScheduleDeleting:
		return false, fmt.Sprintf("MemgraphScheduledBackup %s is being deleted and its backupOwnerReference is none: the objects stay "+
			"in the store, whatever the deletionPolicy (restore them by destination and key)", d.Schedule)
	case d.State == ScheduleGone:
		return false, fmt.Sprintf("MemgraphScheduledBackup %s, which owned the backup, is gone and cannot say what its backupOwnerReference "+
			"was: the objects stay in the store", d.Schedule)
	}
	return true, "deletionPolicy is Delete"
}

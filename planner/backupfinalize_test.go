package planner

import (
	"strings"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// What deleting a backup does to its objects: its deletionPolicy, unless its schedule is being
// deleted (backupOwnerReference decides, none keeping them) or is gone (kept).
func TestObjectsOnDeletion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     BackupDeletion
		remove bool
		why    string
	}{
		{"Retain keeps", BackupDeletion{Policy: v1alpha1.BackupRetain}, false, "deletionPolicy is Retain"},
		{"Delete removes", BackupDeletion{Policy: v1alpha1.BackupDelete}, true, "deletionPolicy is Delete"},
		{"dropped by its live schedule (keep, maxAge) or deleted by hand: Delete removes",
			BackupDeletion{Policy: v1alpha1.BackupDelete, Schedule: "nightly", State: ScheduleLive, OwnerReference: v1alpha1.BackupOwnerNone}, true, "deletionPolicy is Delete"},
		{"dropped by its live schedule: Retain keeps",
			BackupDeletion{Policy: v1alpha1.BackupRetain, Schedule: "nightly", State: ScheduleLive, OwnerReference: v1alpha1.BackupOwnerSelf}, false, "Retain"},
		{"its schedule deleted with none: Delete keeps",
			BackupDeletion{Policy: v1alpha1.BackupDelete, Schedule: "nightly", State: ScheduleDeleting, OwnerReference: v1alpha1.BackupOwnerNone}, false,
			"MemgraphScheduledBackup nightly is being deleted and its backupOwnerReference is none"},
		{"its schedule deleted with self: Delete removes",
			BackupDeletion{Policy: v1alpha1.BackupDelete, Schedule: "nightly", State: ScheduleDeleting, OwnerReference: v1alpha1.BackupOwnerSelf}, true, "backupOwnerReference self"},
		{"its schedule deleted with self: Retain keeps",
			BackupDeletion{Policy: v1alpha1.BackupRetain, Schedule: "nightly", State: ScheduleDeleting, OwnerReference: v1alpha1.BackupOwnerSelf}, false, "Retain"},
		{"its schedule gone: kept",
			BackupDeletion{Policy: v1alpha1.BackupDelete, Schedule: "nightly", State: ScheduleGone}, false, "is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remove, why := ObjectsOnDeletion(tc.in)
			if remove != tc.remove || !strings.Contains(why, tc.why) {
				t.Errorf("remove %v (%s), want %v saying %q", remove, why, tc.remove, tc.why)
			}
		})
	}
}

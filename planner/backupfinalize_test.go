package planner

import (
	"strings"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
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
		{"Retain keeps", BackupDeletion{Policy: topology.BackupRetain}, false, "deletionPolicy is Retain"},
		{"Delete removes", BackupDeletion{Policy: topology.BackupDelete}, true, "deletionPolicy is Delete"},
		{"dropped by its live schedule (keep, maxAge) or deleted by hand: Delete removes",
			BackupDeletion{Policy: topology.BackupDelete, Schedule: "nightly", State: ScheduleLive, OwnerReference: topology.BackupOwnerNone}, true, "deletionPolicy is Delete"},
		{"dropped by its live schedule: Retain keeps",
			BackupDeletion{Policy: topology.BackupRetain, Schedule: "nightly", State: ScheduleLive, OwnerReference: topology.BackupOwnerSelf}, false, "Retain"},
		{"its schedule deleted with none: Delete keeps",
			BackupDeletion{Policy: topology.BackupDelete, Schedule: "nightly", State: ScheduleDeleting, OwnerReference: topology.BackupOwnerNone}, false,
			"MemgraphScheduledBackup nightly is being deleted and its backupOwnerReference is none"},
		{"its schedule deleted with self: Delete removes",
			BackupDeletion{Policy: topology.BackupDelete, Schedule: "nightly", State: ScheduleDeleting, OwnerReference: topology.BackupOwnerSelf}, true, "backupOwnerReference self"},
		{"its schedule deleted with self: Retain keeps",
			BackupDeletion{Policy: topology.BackupRetain, Schedule: "nightly", State: ScheduleDeleting, OwnerReference: topology.BackupOwnerSelf}, false, "Retain"},
		{"its schedule gone: kept",
			BackupDeletion{Policy: topology.BackupDelete, Schedule: "nightly", State: ScheduleGone}, false, "is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remove, why := ObjectsOnDeletion(tc.in)
			if remove != tc.remove || !strings.Contains(why, tc.why) {
				t.Errorf("remove %v (%s), want %v saying %q", remove, why, tc.remove, tc.why)
			}
		})
	}
}

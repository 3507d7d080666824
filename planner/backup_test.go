package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A cluster that restores a backup registers and promotes no data instance while the restore
// holds (Declared.RestoreHeld), and says why; once a data instance is registered, the hold is
// behind the cluster and changes nothing.
func TestRestoreHoldsDataRegistration(t *testing.T) {
	d := declared(3, 2, 3, 2)
	d.RestoreHeld = "restoring MemgraphBackup nightly into instance_0 failed: Failed to download snapshot file from s3"
	fresh := decideOnRows(d, coords(3, 1))
	for _, c := range fresh.Commands {
		if _, ok := c.(RegisterInstance); ok {
			t.Errorf("planned %v while the restore holds", c)
		}
		if _, ok := c.(SetInstanceToMain); ok {
			t.Errorf("planned %v while the restore holds", c)
		}
	}
	if fresh.Progress.RegistrationHeld != d.RestoreHeld {
		t.Errorf("RegistrationHeld %q, want the restore's hold", fresh.Progress.RegistrationHeld)
	}
	if diff := cmp.Diff([]string{"instance_0", "instance_1"}, fresh.Progress.PendingDataInstances); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if !Restoring(coords(3, 1)) || Restoring(rows(coords(3, 1), one(mainRow(0)))) {
		t.Error("Restoring must hold exactly while no data instance is listed")
	}
	registered := decideOnRows(d, rows(coords(3, 1), one(mainRow(0))))
	if registered.Progress.RegistrationHeld == d.RestoreHeld || !cmp.Equal(registered.Progress.PendingDataInstances, []string{"instance_1"}) {
		t.Errorf("with instance_0 registered the restore's hold is behind the cluster, yet %+v", registered.Progress)
	}
	if target, ok := RestoreTarget(d); !ok || target.Name != "instance_0" {
		t.Errorf("restore target %v, want instance_0", target.Name)
	}
	d.PreferredMain = "instance_1"
	if target, _ := RestoreTarget(d); target.Name != "instance_1" {
		t.Errorf("restore target %v, want the preferred MAIN instance_1", target.Name)
	}
}

// decideOnRows decides on a leader's rows alone.
func decideOnRows(d topology.Declared, rows []memgraph.Instance) Plan {
	return Decide(d, Observe(rows, nil, topology.Replicas{Coordinators: int32(len(d.Coordinators)), DataInstances: int32(len(d.DataInstances))}))
}

// A Running backup fails at once when its cluster is gone (its agents went with it) or its
// status names no data instance; otherwise its agent is asked.
func TestJobGone(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		clusterFound, dataInstance bool
		want                       Wait
	}{
		{"the agent may answer", true, true, Wait{}},
		{"the cluster is gone", false, true, Wait{ReasonClusterNotFound,
			"cluster mg, whose instance instance_0 was taking the backup, is gone; nothing more is uploaded"}},
		{"the cluster is gone and the instance is no data instance: the cluster wins", false, false, Wait{ReasonClusterNotFound,
			"cluster mg, whose instance instance_0 was taking the backup, is gone; nothing more is uploaded"}},
		{"no data instance", true, false, Wait{ReasonAgentRestarted, `the backup's instance "instance_0" of cluster mg is gone`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, JobGone(tc.clusterFound, tc.dataInstance, "mg", "instance_0")); diff != "" {
				t.Errorf("JobGone (-want +got):\n%s", diff)
			}
		})
	}
}

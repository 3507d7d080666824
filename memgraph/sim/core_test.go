package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFreshCoordinatorLeadsItself(t *testing.T) {
	w := startWorld(t, 1, 0)
	got := table(dial(t, w, coordBolt(1)).must("SHOW INSTANCES;").rows)
	want := [][6]string{{"coordinator_1", "", "coord-1.mg.svc:12000", "coord-1.mg.svc:10000", "up", "leader"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("SHOW INSTANCES (-want +got):\n%s", d)
	}
}

func TestSetupShowsEveryInstanceOnEveryCoordinator(t *testing.T) {
	w, _ := setupCluster(t, 3, 3)
	want := [][6]string{
		{"coordinator_1", "coord-1.mg.svc:7687", "coord-1.mg.svc:12000", "coord-1.mg.svc:10000", "up", "leader"},
		{"coordinator_2", "coord-2.mg.svc:7687", "coord-2.mg.svc:12000", "coord-2.mg.svc:10000", "up", "follower"},
		{"coordinator_3", "coord-3.mg.svc:7687", "coord-3.mg.svc:12000", "coord-3.mg.svc:10000", "up", "follower"},
		{"instance_1", "data-1.mg.svc:7687", "", "data-1.mg.svc:10000", "up", "main"},
		{"instance_2", "data-2.mg.svc:7687", "", "data-2.mg.svc:10000", "up", "replica"},
		{"instance_3", "data-3.mg.svc:7687", "", "data-3.mg.svc:10000", "up", "replica"},
	}
	for id := 1; id <= 3; id++ {
		got := table(dial(t, w, coordBolt(id)).must("show instances").rows)
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("coordinator %d SHOW INSTANCES (-want +got):\n%s", id, d)
		}
	}
	if m := w.Misuses(); len(m) != 0 {
		t.Fatalf("misuses: %+v", m)
	}
}

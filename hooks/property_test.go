package hooks_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var (
	sequences = flag.Int("sequences", 300, "random grow/shrink/fault sequences TestRandomScalingNeverMisusesMemgraph runs")
	seed      = flag.Uint64("seed", 0, "seed for TestRandomScalingNeverMisusesMemgraph (0: fixed default)")
)

// TestRandomScalingNeverMisusesMemgraph drives random sequences of scaling edits, leadership
// moves, lag and MAIN moves through real syncs against the simulator and checks two
// invariants after every pass: the simulator saw no misuse (second MAIN, UNREGISTER of an alive
// MAIN, REMOVE of the leader, …), and no StatefulSet shrank while a member of the range it
// shed was still registered. Every sequence must then converge once the faults stop.
func TestRandomScalingNeverMisusesMemgraph(t *testing.T) {
	n := *sequences
	if testing.Short() {
		n = 20
	}
	base := *seed
	if base == 0 {
		base = 20261202
	}
	for i := 0; i < n; i++ {
		s := base + uint64(i)
		rng := rand.New(rand.NewPCG(s, s))
		if !t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) { runRandomSequence(t, rng) }) {
			t.Logf("reproduce with: go test ./hooks -run 'TestRandomScalingNeverMisusesMemgraph/seed=%d$' -seed=%d", s, s)
			return
		}
	}
}

var coordinatorChoices = []int{3, 5}

func runRandomSequence(t *testing.T, rng *rand.Rand) {
	h := newHarness(t, coordinatorChoices[rng.IntN(2)], 1+rng.IntN(3))
	h.bootstrap()
	for step := 0; step < 12; step++ {
		switch r := rng.IntN(10); {
		case r < 2:
			h.scale(coordinatorChoices[rng.IntN(2)], 1+rng.IntN(4))
		case r < 3:
			h.moveLeader(rng)
		case r < 4:
			h.moveMain(rng)
		case r < 5:
			// Lag only shows once the MAIN commits past it (Commit fails harmlessly with no MAIN).
			_ = h.world.SetLag(h.network().DataInstance(rng.IntN(h.dataPods())).Host, "memgraph", int64(rng.IntN(2)))
			_ = h.world.Commit("memgraph", 1+int64(rng.IntN(3)))
		}
		h.checkedSync()
	}
	for i := 0; i < h.dataPods(); i++ {
		h.world.SetLag(h.network().DataInstance(i).Host, "memgraph", 0)
	}
	for pass := 0; pass < 8; pass++ {
		h.checkedSync()
		if st, _, _ := h.condition("Converged"); st == "True" {
			return
		}
	}
	_, reason, msg := h.condition("Converged")
	t.Fatalf("did not converge within 8 passes after the faults stopped: %s: %s", reason, msg)
}

// checkedSync syncs and checks the two invariants.
func (h *harness) checkedSync() {
	h.t.Helper()
	before := h.registeredSet()
	c0, d0 := h.replicas()
	h.sync()
	h.assertNoMisuse()
	c1, d1 := h.replicas()
	n := h.network()
	for id := topology.FirstCoordinatorID + c1; id < topology.FirstCoordinatorID+c0; id++ {
		if name := topology.CoordinatorName(id); before[name] && h.registeredSet()[name] {
			h.t.Fatalf("coordinators shrank %d→%d while %s was still registered", c0, c1, name)
		}
	}
	for ord := topology.FirstDataOrdinal + d1; ord < topology.FirstDataOrdinal+d0; ord++ {
		if name := n.DataInstance(ord).Name; h.registeredSet()[name] {
			h.t.Fatalf("data instances shrank %d→%d while %s was still registered", d0, d1, name)
		}
	}
}

func (h *harness) registeredSet() map[string]bool {
	set := map[string]bool{}
	for _, name := range h.registered() {
		set[name] = true
	}
	return set
}

func (h *harness) dataPods() int {
	_, d := h.replicas()
	return d
}

// moveLeader forces leadership onto a random running coordinator.
func (h *harness) moveLeader(rng *rand.Rand) {
	c, _ := h.replicas()
	_ = h.world.ForceLeader(topology.FirstCoordinatorID + rng.IntN(c))
}

// moveMain parks MAIN on a random registered, alive data instance, as a human could.
func (h *harness) moveMain(rng *rand.Rand) {
	rows := h.showInstances()
	var main string
	var replicas []string
	for _, r := range rows {
		switch {
		case r.IsCoordinator():
		case r.Role == memgraph.RoleMain:
			main = r.Name
		case r.Role == memgraph.RoleReplica && r.Health == memgraph.HealthUp:
			replicas = append(replicas, r.Name)
		}
	}
	if main == "" || len(replicas) == 0 {
		return
	}
	leader := h.leaderClient(rows)
	ctx := context.Background()
	if leader.DemoteInstance(ctx, main) != nil {
		return
	}
	if leader.SetInstanceToMain(ctx, replicas[rng.IntN(len(replicas))]) != nil {
		_ = leader.SetInstanceToMain(ctx, main)
	}
}

func (h *harness) leaderClient(rows []memgraph.Instance) memgraph.Client {
	for _, r := range rows {
		if r.IsCoordinator() && r.Role == memgraph.RoleLeader {
			if id, ok := topology.ParseCoordinatorName(r.Name); ok {
				return h.pool.Client(h.network().Coordinator(id).BoltServer)
			}
		}
	}
	return h.pool.Client(h.network().Coordinator(1).BoltServer)
}

package hooks_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var (
	sequences = flag.Int("sequences", 300, "random grow/shrink/fault sequences TestRandomScalingNeverMisusesMemgraph runs")
	seed      = flag.Uint64("seed", 0, "seed for TestRandomScalingNeverMisusesMemgraph (0: fixed default)")
)

// TestRandomScalingNeverMisusesMemgraph drives random sequences of scaling edits, new images
// (upgrades across Memgraph versions) and restarts (rolling upgrades), leadership moves, lag and
// MAIN moves, client writes, replicas that lose their volume and recover, and Memgraph 3.12's
// timing faults — coordinators that join late
// (half-joined), leaders that lose their majority and lead on until their leadership expires,
// leaders that are not ready after an election or a FORCE RESET, elections that take time,
// yields that refuse writes while they transfer, data instances that die and
// show up until instance_down_timeout_sec, simulated time passing between syncs — through real
// syncs against the simulator, and checks after every pass: the simulator saw no misuse (second
// MAIN, UNREGISTER of an alive MAIN, REMOVE of the leader or of a half-joined member, a newer
// MAIN over an older replica, a handover to a replica behind the MAIN, …), no acknowledged
// write is missing from the MAIN, the leader never crashed, no StatefulSet shrank while a member
// of the range it shed was still a member, and no pod was replaced while its member was the
// MAIN (of several data instances) or the leader, or while another pod of the cluster was gone.
// Every sequence must then converge, its rollout done, once the faults stop.
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

var (
	coordinatorChoices = []int{3, 5}
	readyDelays        = []time.Duration{0, time.Second, 3 * time.Second}
	timeSteps          = []time.Duration{0, 0, 500 * time.Millisecond, 2 * time.Second, 6 * time.Second}
	// Memgraph 3.12's timings the simulator leaves instant by default: a replica's recovery, a
	// Raft election (2–4 s), a leadership transfer.
	recoveryTimes  = []time.Duration{0, 2 * time.Second, 8 * time.Second}
	electionDelays = []time.Duration{0, 0, 3 * time.Second}
	transferTimes  = []time.Duration{0, 0, 500 * time.Millisecond}
)

func runRandomSequence(t *testing.T, rng *rand.Rand) {
	h := newHarness(t, coordinatorChoices[rng.IntN(2)], 1+rng.IntN(3),
		withWorld(sim.WithLeaderReadyDelay(readyDelays[rng.IntN(len(readyDelays))]),
			sim.WithReplicaRecoveryTime(recoveryTimes[rng.IntN(len(recoveryTimes))]),
			sim.WithElectionTimeout(electionDelays[rng.IntN(len(electionDelays))]),
			sim.WithLeadershipTransferTime(transferTimes[rng.IntN(len(transferTimes))])),
		withForceResetTimeout(50*time.Millisecond))
	h.bootstrap()
	h.onReplace = h.replacementGuard
	for step := 0; step < 12; step++ {
		r := rng.IntN(18)
		t.Logf("step %d: fault %d (%s)", step, r, faultNames[min(r, len(faultNames)-1)])
		switch {
		case r < 3:
			h.scale(coordinatorChoices[rng.IntN(2)], 1+rng.IntN(4))
		case r < 4:
			h.moveLeader(rng)
		case r < 5:
			h.moveMain(rng)
		case r < 6:
			// Lag only shows once the MAIN commits past it (a write that a lagging replica cannot
			// confirm is committed on the MAIN but not acknowledged).
			_ = h.world.SetLag(h.network().DataInstance(rng.IntN(h.dataPods())).Host, "memgraph", int64(rng.IntN(2)))
			h.clientWrites(1 + rng.IntN(3))
		case r < 7:
			h.slowJoin(rng)
		case r < 8:
			h.loseQuorum()
		case r < 9:
			h.killData(rng)
		case r < 10:
			h.restartKilled(rng)
		case r < 11:
			h.humanForceReset()
		case r < 12:
			h.demoteMain()
		case r < 13:
			if !h.versionSplit() {
				h.upgrade(rng)
			}
		case r < 14:
			if !h.versionSplit() {
				h.annotations = map[string]any{topology.AnnotationRestartedAt: fmt.Sprint(rng.IntN(3))}
			}
		case r < 16:
			h.wipeReplica(rng)
		default:
			h.clientWrites(1 + rng.IntN(4))
		}
		h.advance(timeSteps[rng.IntN(len(timeSteps))])
		h.checkedSync()
		t.Logf("  after the sync: %s", h.dataState())
	}
	h.stopFaults()
	for pass := 0; pass < 40; pass++ {
		h.healHalfJoined()
		h.advance(10 * time.Second) // readiness, reconciliation backoff and failovers settle
		h.checkedSync()
		t.Logf("  settling, pass %d: %s", pass, h.dataState())
		if st, _, _ := h.condition("Converged"); st == "True" {
			return
		}
	}
	_, reason, msg := h.condition("Converged")
	t.Fatalf("did not converge within 40 passes after the faults stopped: %s: %s", reason, msg)
}

// faultNames name the choices of runRandomSequence's switch, for the log of a failing sequence.
var faultNames = []string{"scale", "scale", "scale", "move leader", "move MAIN", "lag and writes", "slow join", "lose quorum",
	"kill data", "restart killed", "human FORCE RESET", "demote MAIN", "upgrade", "restartedAt", "wipe replica",
	"wipe replica", "writes", "writes"}

// propertyTags are the versions a sequence upgrades through, in order: 3.13.0 is a minor upgrade,
// "3.13.0-relwithdebinfo" the same version built otherwise.
var propertyTags = []string{"3.12.0", "3.12.1", "3.12.2", "3.13.0", "3.13.0-relwithdebinfo"}

// replacementGuard fails the sequence when the StatefulSet controller replaces a pod whose member
// is the MAIN (with more than one data instance declared) or the leader, or while another of the
// cluster's pods is gone: the hook released it too early.
func (h *harness) replacementGuard(pod string) {
	h.t.Helper()
	member := memberOfPod(h.name, pod)
	_, data := h.replicas()
	for _, c := range h.world.Raft().Clusters {
		if c.Leader == 0 {
			continue
		}
		if member == topology.CoordinatorName(c.Leader) || member == c.Main && data > 1 {
			h.t.Fatalf("%s replaced while %s was MAIN (%s) or leader (coordinator_%d)", pod, member, c.Main, c.Leader)
		}
	}
	for _, sts := range h.children {
		if sts["kind"] != "StatefulSet" {
			continue
		}
		set := sts["metadata"].(map[string]any)["name"].(string)
		for i := 0; i < replicasOf(sts); i++ {
			if other := fmt.Sprintf("%s-%d", set, i+firstOrdinal(set, h.name)); other != pod && !h.pods[other] {
				h.t.Fatalf("%s replaced while %s was gone", pod, other)
			}
		}
	}
}

// checkedSync syncs and checks the invariants.
func (h *harness) checkedSync() {
	h.t.Helper()
	before := h.memberSet()
	c0, d0 := h.replicas()
	h.sync()
	h.assertNoMisuse()
	h.assertNoAcknowledgedWriteLost()
	h.assertLeaderAlive()
	c1, d1 := h.replicas()
	after := h.memberSet()
	n := h.network()
	for id := topology.FirstCoordinatorID + c1; id < topology.FirstCoordinatorID+c0; id++ {
		if name := topology.CoordinatorName(id); before[name] && after[name] {
			h.t.Fatalf("coordinators shrank %d→%d while %s was still a member", c0, c1, name)
		}
	}
	for ord := topology.FirstDataOrdinal + d1; ord < topology.FirstDataOrdinal+d0; ord++ {
		if name := n.DataInstance(ord).Name; after[name] {
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

// memberSet is every registered data instance and every Raft member (half-joined ones
// included), as the first running coordinator that answers reports them.
func (h *harness) memberSet() map[string]bool {
	h.t.Helper()
	set := map[string]bool{}
	for _, r := range h.anyView() {
		set[r.Name] = true
	}
	return set
}

// anyView is SHOW INSTANCES from the first running coordinator that answers: the leader's table
// or, without a ready leader, that coordinator's Raft copy (the same members either way).
func (h *harness) anyView() []memgraph.Instance {
	h.t.Helper()
	c, _ := h.replicas()
	for i := 0; i < c; i++ {
		coord := h.network().Coordinator(topology.FirstCoordinatorID + i)
		if !h.world.Running(coord.Host) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rows, err := h.pool.Client(coord.BoltServer).ShowInstances(ctx)
		cancel()
		if err == nil {
			return rows
		}
	}
	h.t.Fatal("no coordinator answers SHOW INSTANCES")
	return nil
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
	rows := h.anyView()
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
	replicas = h.safeTargets(main, replicas)
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

// slowJoin makes a coordinator that is not a member yet join too slowly for ADD COORDINATOR's
// wait: if the hook adds it, it half-joins.
func (h *harness) slowJoin(rng *rand.Rand) {
	members := h.memberSet()
	var outside []string
	for id := topology.FirstCoordinatorID; id < topology.FirstCoordinatorID+5; id++ {
		if !members[topology.CoordinatorName(id)] {
			outside = append(outside, h.network().Coordinator(id).Host)
		}
	}
	if len(outside) > 0 {
		host := outside[rng.IntN(len(outside))]
		h.must(h.world.SetJoinDelay(host, 3*time.Second))
		h.slowJoiners = append(h.slowJoiners, host)
	}
}

// loseQuorum kills followers until the leader has no majority: it leads on until its leadership
// expires, and writes fail meanwhile.
func (h *harness) loseQuorum() {
	leader, ok := h.world.Leader()
	if !ok {
		return
	}
	c, _ := h.replicas()
	need := c - c/2 // kills that leave at most half alive
	for i := 0; i < c && need > 0; i++ {
		coord := h.network().Coordinator(topology.FirstCoordinatorID + i)
		if coord.ID() != leader && h.world.Running(coord.Host) {
			h.kill(coord.Host)
			need--
		}
	}
}

// killData kills a random data instance's process; its pod stays (a crash the kubelet has not
// noticed yet), and the leader shows it up until instance_down_timeout_sec.
func (h *harness) killData(rng *rand.Rand) {
	host := h.network().DataInstance(rng.IntN(h.dataPods())).Host
	if h.mainOfAGroupBehind(host) || h.lastHolderOfAcknowledged(host) {
		// The failover could promote an instance lacking acknowledged writes (Memgraph's
		// max_failover_replica_lag is unlimited by default): Memgraph's doing, not the hook's.
		return
	}
	if h.world.Running(host) {
		h.kill(host)
	}
}

// restartKilled restarts one killed process whose pod still runs.
func (h *harness) restartKilled(rng *rand.Rand) {
	for _, host := range sortedKeys(h.killed) {
		if rng.IntN(2) == 0 {
			h.restartIfPod(host)
			return
		}
	}
}

func (h *harness) restartIfPod(host string) {
	if h.pods[strings.Split(host, ".")[0]] && !h.world.Running(host) {
		h.restart(host)
	}
	delete(h.killed, host)
}

// safeTargets keeps the replicas a careful human may hand MAIN to from main: those holding every
// transaction main committed (the simulator's own counts, which a human checks with SHOW
// REPLICAS), and none while the data pods run different images (a newer MAIN over an older
// replica). The simulator records any other handover as a misuse, which this test reserves for
// the hook's.
func (h *harness) safeTargets(main string, replicas []string) []string {
	if h.versionSplit() {
		return nil
	}
	committed := map[string]map[string]int64{}
	for _, c := range h.world.Raft().Clusters {
		for _, d := range c.Data {
			committed[d.Name] = d.Committed
		}
	}
	image := func(name string) string {
		n, _ := topology.ParseDataInstanceName(name)
		if st := h.podStates[h.network().DataInstance(n).Pod]; st != nil {
			return st.image
		}
		return ""
	}
	var out []string
	for _, r := range replicas {
		caughtUp := true
		for db, n := range committed[main] {
			caughtUp = caughtUp && committed[r][db] >= n
		}
		if caughtUp && image(r) == image(main) {
			out = append(out, r)
		}
	}
	return out
}

// demoteMain demotes the MAIN as an operator (or a pass killed mid-handover) would: Memgraph
// does not fail over after a demotion, so the cluster stays without a MAIN until someone acts.
func (h *harness) demoteMain() {
	if cd, ok := h.dataSnapshot(); ok && !h.everyPodCaughtUp(cd) {
		return // the election that follows picks by ordinal, not by data: keep every replica caught up
	}
	rows := h.anyView()
	for _, r := range rows {
		if !r.IsCoordinator() && r.Role == memgraph.RoleMain {
			_ = h.leaderClient(rows).DemoteInstance(context.Background(), r.Name)
			return
		}
	}
}

// humanForceReset runs FORCE RESET CLUSTER STATE on the leader as an operator would, and gives
// up once the leader answered or holds the query waiting for a reconciliation: the leader is not
// ready until it reconciles. The operator waits on the simulator, not on the wall clock, so the
// fault lands the same way however loaded the machine is.
func (h *harness) humanForceReset() {
	leader, ok := h.world.Leader()
	if !ok {
		return
	}
	operator := bolt.NewPool(bolt.PoolOptions{Resolver: h.world, ForceResetTimeout: time.Minute})
	defer func() { _ = operator.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = operator.Client(h.network().Coordinator(leader).BoltServer).ForceResetClusterState(ctx)
	}()
	h.waitFor(func() bool {
		select {
		case <-done:
			return true
		default:
			return h.world.BlockedQueries() > 0
		}
	})
	cancel()
	<-done
	h.waitFor(func() bool { return h.world.BlockedQueries() == 0 })
}

// waitFor polls cond until it holds, for at most ten seconds of wall clock.
func (h *harness) waitFor(cond func() bool) {
	h.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			h.t.Fatal("the simulator did not get there within 10s")
		}
	}
}

// stopFaults ends every fault: killed processes restart, lag and join delays go.
func (h *harness) stopFaults() {
	for _, host := range sortedKeys(h.killed) {
		h.restartIfPod(host)
	}
	for i := 0; i < h.dataPods(); i++ {
		h.must(h.world.SetLag(h.network().DataInstance(i).Host, "memgraph", 0))
	}
	for _, host := range h.slowJoiners {
		h.must(h.world.SetJoinDelay(host, 0))
	}
}

// healHalfJoined moves leadership onto a half-joined coordinator, as an operator restarting the
// leader until it wins would: leading, it is ADDed as itself. A half-joined leader is left to
// the hook.
func (h *harness) healHalfJoined() {
	var halfJoined []int
	for _, r := range h.anyView() {
		id, ok := topology.ParseCoordinatorName(r.Name)
		if !ok || !r.IsCoordinator() || r.BoltServer != "" {
			continue
		}
		if r.Role == memgraph.RoleLeader {
			return
		}
		halfJoined = append(halfJoined, id)
	}
	if len(halfJoined) > 0 {
		_ = h.world.ForceLeader(halfJoined[0])
	}
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

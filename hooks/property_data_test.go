package hooks_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Data safety in the property test: client writes, acknowledged only when every SYNC replica
// confirms them (Memgraph's ReplicationException otherwise), and the oracle that no
// acknowledged write is ever missing from the MAIN. The faults that could lose acknowledged
// writes without the hook's doing — killing the MAIN while a replica lacks some of them, wiping
// a replica while another one lacks them, a human demotion the hook must then elect after —
// are not injected in those states, so a loss is the hook's.

const propertyDB = "memgraph"

// clientWrites sends n client writes to the MAIN; failures (no MAIN, a replica that cannot confirm)
// are what a client would see, and are not acknowledged.
func (h *harness) clientWrites(n int) {
	for range n {
		_ = h.world.Write(propertyDB)
	}
}

// upgrade moves the spec to a version at or after the one it asks for now (a downgrade is its
// own scenario: the hook refuses it without memgraph.com/allow-downgrade).
func (h *harness) upgrade(rng *rand.Rand) {
	current := 0
	if image, ok := h.spec["image"].(map[string]any); ok {
		current = max(slices.Index(propertyTags, image["tag"].(string)), 0)
	}
	h.setTag(propertyTags[current+rng.IntN(len(propertyTags)-current)])
}

// versionSplit: the data pods run more than one image. A pod-template change then could leave the
// MAIN on a newer pod above an older replica that cannot replicate from it, which the partition
// cannot reach before the MAIN's pod, and no replica can be proven caught up to take MAIN over:
// the rollout stops with RolloutBlocked for a human (planner: TestAChangeSupersedingAnUpgrade…),
// so these sequences change the template only while the data pods agree.
func (h *harness) versionSplit() bool {
	images := map[string]bool{}
	for pod, st := range h.podStates {
		if strings.HasPrefix(pod, topology.DataSetName(h.name)+"-") {
			images[st.image] = true
		}
	}
	return len(images) > 1
}

// wipeReplica restarts an alive replica on an empty volume (a lost disk): it recovers from the
// MAIN over the simulator's recovery time, showing a lag of 0 meanwhile. Only while the MAIN runs
// and every other instance holds every acknowledged write.
func (h *harness) wipeReplica(rng *rand.Rand) {
	snap, ok := h.dataSnapshot()
	if !ok || !snap.mainAlive || !h.everyPodCaughtUp(snap) {
		return
	}
	var candidates []string
	for _, d := range snap.data {
		if d.Name != snap.main && d.Health == "up" && h.pods[strings.Split(d.Host, ".")[0]] {
			candidates = append(candidates, d.Host)
		}
	}
	if len(candidates) > 0 {
		h.must(h.world.Wipe(candidates[rng.IntN(len(candidates))]))
	}
}

// clusterData is the simulator's own account of the data instances of the cluster: the largest
// Raft group with a majority alive (a coordinator removed from it keeps a stale copy of the state
// it left, which is no cluster of anybody's).
type clusterData struct {
	main      string
	mainAlive bool
	mainTxns  int64
	data      []sim.DataSnapshot
}

func (h *harness) dataSnapshot() (clusterData, bool) {
	var best *sim.ClusterSnapshot
	snap := h.world.Raft()
	for i := range snap.Clusters {
		if snap.Clusters[i].Quorum && (best == nil || len(snap.Clusters[i].Members) > len(best.Members)) {
			best = &snap.Clusters[i]
		}
	}
	if best == nil {
		return clusterData{}, false
	}
	return clusterDataOf(*best), true
}

func clusterDataOf(c sim.ClusterSnapshot) clusterData {
	cd := clusterData{main: c.Main, data: c.Data}
	for _, d := range c.Data {
		if d.Name == c.Main {
			cd.mainAlive, cd.mainTxns = d.Health == "up", d.Committed[propertyDB]
		}
	}
	return cd
}

// mainOfAGroupBehind: host is the MAIN in the Raft state of some coordinator group, with or
// without its majority (a group that lost it fails over once it regains it), and some data pod
// of that group is not caught up.
func (h *harness) mainOfAGroupBehind(host string) bool {
	for _, c := range h.world.Raft().Clusters {
		if cd := clusterDataOf(c); cd.isMain(host) && !h.everyPodCaughtUp(cd) {
			return true
		}
	}
	return false
}

// lastHolderOfAcknowledged: host runs the only data instance still running that holds every
// acknowledged write (a MAIN that died before, say by a human's hand, left them there alone).
func (h *harness) lastHolderOfAcknowledged(host string) bool {
	acked := h.world.Acknowledged(propertyDB)
	holders := map[string]bool{}
	for _, c := range h.world.Raft().Clusters {
		for _, d := range c.Data {
			if d.Committed[propertyDB] >= acked && h.world.Running(d.Host) {
				holders[d.Host] = true
			}
		}
	}
	return holders[host] && len(holders) == 1
}

// anyBehind: some registered instance holds fewer transactions than the MAIN.
func (cd clusterData) anyBehind() bool {
	for _, d := range cd.data {
		if d.Committed[propertyDB] < cd.mainTxns {
			return true
		}
	}
	return false
}

// dataState describes the data instances' counts for a failing sequence's log.
func (h *harness) dataState() string {
	cd, ok := h.dataSnapshot()
	if !ok {
		return "no cluster with a majority"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "MAIN %q, %d acknowledged;", cd.main, h.world.Acknowledged(propertyDB))
	for _, d := range cd.data {
		fmt.Fprintf(&b, " %s %s %d", d.Name, d.Health, d.Committed[propertyDB])
	}
	return b.String()
}

// everyPodCaughtUp: every data pod's instance is registered and holds every transaction of the
// MAIN (a pod not registered yet will be, empty).
func (h *harness) everyPodCaughtUp(cd clusterData) bool {
	return !cd.anyBehind() && len(cd.data) >= h.dataPods()
}

// isMain: host runs the MAIN.
func (cd clusterData) isMain(host string) bool {
	for _, d := range cd.data {
		if d.Host == host {
			return d.Name == cd.main
		}
	}
	return false
}

// assertNoAcknowledgedWriteLost: the MAIN holds every write the simulator acknowledged.
func (h *harness) assertNoAcknowledgedWriteLost() {
	h.t.Helper()
	cd, ok := h.dataSnapshot()
	if !ok || cd.main == "" {
		return
	}
	if acked := h.world.Acknowledged(propertyDB); cd.mainTxns < acked {
		h.t.Fatalf("MAIN %s holds %d transactions but %d writes were acknowledged: acknowledged writes were lost (data "+
			"instances: %+v)", cd.main, cd.mainTxns, acked, cd.data)
	}
}

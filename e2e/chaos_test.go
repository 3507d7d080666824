//go:build e2e

package e2e_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var (
	chaosDuration = flag.Duration("chaos-duration", 0, "how long TestChaosSoak injects operations and faults; 0 skips it (make chaos: CHAOS_DURATION)")
	chaosSeed     = flag.Uint64("chaos-seed", 1, "the seed of TestChaosSoak's choices (make chaos: CHAOS_SEED)")
)

const (
	chaosName     = "chaos"
	chaosMaxCoord = 5
	chaosMaxData  = 4
	// chaosSettle bounds the convergence after the faults stop: a failover (instance down
	// timeout and an election), a rollout step per pod with its catch-up, and the hook's
	// restart, with room for the slow machine CI runs on.
	chaosSettle = 4 * time.Minute
)

// TestChaosSoak drives one MemgraphCluster on the real control plane through operations a user
// makes and faults a cluster meets, at moments chosen from -chaos-seed, for -chaos-duration,
// while a writer writes to the MAIN. Invariants are checked throughout (chaosWatch) and after
// the faults stop: the cluster converges within chaosSettle to what was last declared, with no
// query Memgraph refuses, no acknowledged write lost, no PVC of a declared pod missing, no pod of
// a MAIN or leader replaced while it was one (but by a fault), and no 5xx from the hook. A
// failure prints the seed and the timeline; the same seed replays the same choices.
func TestChaosSoak(t *testing.T) {
	if *chaosDuration <= 0 {
		t.Skip("set -chaos-duration (make chaos) to run the soak")
	}
	rng := rand.New(rand.NewPCG(*chaosSeed, 0x6d656d6772617068))
	const ns = "chaos"
	s := startScenarioOpts(t, ns, scenarioOptions{process: true,
		links: append(coordinatorAddressesIn(ns, chaosName, chaosMaxCoord), dataAddressesIn(ns, chaosName, chaosMaxData)...)})
	c := &chaos{s: s, rng: rng, coordinators: 3, data: 2, tag: "3.12.0", started: time.Now()}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("TestChaosSoak failed with -chaos-seed=%d; timeline:\n%s", *chaosSeed, c.timeline())
		}
	})
	s.create(chaosName, "dataInstances: 2")
	s.waitConverged(chaosName, convergeTimeout)
	s.annotate(chaosName, topology.AnnotationAllowDowngrade, "true")
	c.watch = startChaosWatch(s, c)
	writer := startChaosWriter(s)

	deadline := time.Now().Add(*chaosDuration)
	for time.Now().Before(deadline) && !t.Failed() {
		if rng.IntN(5) < 3 {
			c.operate()
		} else {
			c.fault()
		}
		time.Sleep(time.Duration(500+rng.IntN(4500)) * time.Millisecond)
	}
	c.stopFaults()
	c.note("faults stop; waiting up to %s for the cluster to converge", chaosSettle)
	c.mu.Lock()
	c.hibernateChanged = time.Now()
	c.mu.Unlock()
	c.patch(`{"hibernate": false}`)
	c.s.annotate(chaosName, topology.AnnotationPaused, "false")
	c.mu.Lock()
	c.hibernated, c.paused = false, false
	c.mu.Unlock()
	c.finishDowngrade()
	mgc := s.waitConverged(chaosName, chaosSettle)
	acked, failed := writer.stop()
	s.declaredMembers(mgc, c.coordinators, c.data)
	c.watch.stop()
	c.watch.check(t)
	c.checkEnd(t, acked)
	t.Logf("chaos: %s, seed %d: %d operations, %d faults, %d invariant samples; writer: %d acknowledged, %d refused",
		*chaosDuration, *chaosSeed, c.operations, c.faults, c.watch.samples(), acked, failed)
}

// chaos is the soak's state: what is declared now, and what happened when.
type chaos struct {
	s                     *scenario
	rng                   *rand.Rand
	watch                 *chaosWatch
	started               time.Time
	coordinators, data    int
	tag                   string
	paused, hibernated    bool
	operations, faults    int
	mu                    sync.Mutex
	events                []string
	killed                map[string]time.Time // pods the soak deleted, when
	wipedAt, mainKilledAt time.Time
	hibernateChanged      time.Time
	partitioned, slowHost string
}

func (c *chaos) note(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	line := fmt.Sprintf("%8.1fs  %s", time.Since(c.started).Seconds(), fmt.Sprintf(format, args...))
	c.events = append(c.events, line)
	c.s.t.Log(line)
}

func (c *chaos) timeline() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.events, "\n")
}

// finishDowngrade hibernates and wakes the cluster, as docs/upgrades.md tells a user, when the
// last image declared is a downgrade waiting for hibernation (DowngradeNeedsHibernation).
func (c *chaos) finishDowngrade() {
	for deadline := time.Now().Add(chaosSettle / 2); time.Now().Before(deadline); time.Sleep(time.Second) {
		mgc, err := c.s.get(context.Background(), chaosName)
		if err != nil {
			continue
		}
		switch _, reason, _ := conditionStatus(mgc, string(v1alpha1.ConditionUpdated)); reason {
		case string(v1alpha1.ReasonUpToDate):
			return
		case string(v1alpha1.ReasonDowngradeNeedsHibernation):
			c.note("the downgrade to %s waits for hibernation: hibernate and wake", c.tag)
			c.patch(`{"hibernate": true}`)
			c.s.kubectl("wait", "--for=condition=Hibernated", "mgc/"+chaosName, "--timeout=300s")
			c.patch(`{"hibernate": false}`)
			return
		}
	}
}

// patch applies a merge patch to the spec as a user would; a refusal (admission) is part of the
// soak, noted and not retried.
func (c *chaos) patch(spec string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := testEnv.Kubectl(ctx, "-n", c.s.ns, "patch", "memgraphcluster", chaosName, "--type", "merge", "-p", `{"spec":`+spec+`}`)
	if err != nil {
		c.note("patch %s refused: %s", spec, strings.TrimSpace(out))
		return false
	}
	return true
}

//go:build e2e

package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Faults of the system around the hook, one scenario each. Every scenario ends with
// settled: Converged, exactly the declared members and one MAIN, no misuse, no PVC lost. They
// wait on observable conditions only — a failover takes Memgraph's instance_down_timeout, an
// election or a restart as long as it takes — never on fixed sleeps.

// 1. The hook process is killed between DEMOTE and SET … TO MAIN of a handover, and restarted.
//
// The hook runs as the real binary with the Deployment's arguments, reaching the coordinators
// (and the data instances, for SHOW REPLICAS) through links. The links hold back the first SET … TO MAIN that follows a DEMOTE, and the test
// SIGKILLs the process right then: Memgraph has executed the DEMOTE and never sees the SET, the
// cluster has no MAIN, and no process memory survives. The restarted process must find its way
// from what Memgraph reports alone: it lets Memgraph pick the most up-to-date replica (FORCE
// RESET CLUSTER STATE) instead of guessing, then finishes the retirement.
func TestFaultHookKilledMidHandover(t *testing.T) {
	const ns, name = "fault-kill", "kill"
	s := startScenarioOpts(t, ns, scenarioOptions{process: true,
		links: append(coordinatorAddressesIn(ns, name, 3), dataAddressesIn(ns, name, 3)...)})
	s.create(name, "dataInstances: 3")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 3)
	claims := s.claimUIDs()
	s.parkMain(name, "instance_2")

	var demoted atomic.Bool
	held := make(chan struct{})
	var once sync.Once
	s.links.setFilter(func(data []byte) bool {
		if demoted.Load() && bytes.Contains(data, []byte("TO MAIN")) {
			once.Do(func() { close(held) })
			return true
		}
		if bytes.Contains(data, []byte("DEMOTE INSTANCE")) {
			demoted.Store(true)
		}
		return false
	})
	s.patchSpec(name, `{"dataInstances":2}`)
	select {
	case <-held:
	case <-time.After(convergeTimeout):
		t.Fatal("the hook never sent SET … TO MAIN after a DEMOTE")
	}
	s.proc.kill()
	s.links.setFilter(nil)
	if g := s.raft(); g.Main != "" || !registered(g.Data, "instance_2") {
		t.Fatalf("the kill did not land between DEMOTE and SET: MAIN %q, registered %+v", g.Main, g.Data)
	}
	t.Log("hook killed between DEMOTE and SET: the cluster has no MAIN; restarting it")
	mark := s.queryMark()
	s.proc.start()

	s.settled(name, 3, 2, claims)
	if !hasQuery(s.world.Queries()[mark:], "FORCE RESET CLUSTER STATE") {
		t.Error("the restarted hook did not let Memgraph choose the MAIN (no FORCE RESET CLUSTER STATE)")
	}
}

// 2. Two hook replicas serve the same Metacontroller at once during a scale-down of both roles.
//
// Each replica is a handler with its own Bolt pool and lock map. While the scale-down runs,
// every sync goes to both at once and Metacontroller gets one answer, in turn from each — the
// most overlap two replicas behind a Service can have: both plan and execute the same steps
// concurrently. The replicas meet before their first write (rendezvous), so both send the first
// step at once even when one of them could finish the whole scale-down in a single pass.
func TestFaultTwoHookReplicasAtOnce(t *testing.T) {
	const name = "twice"
	s := startScenarioOpts(t, "fault-replicas", scenarioOptions{replicas: 2})
	claims, guard := s.bothRolesAboutToShrink(name)

	mark := s.queryMark()
	logMarks := s.replicas.logMarks()
	s.replicas.both.Store(true)
	s.replicas.meet.arm()
	s.patchSpec(name, `{"coordinators":3,"dataInstances":2}`)
	s.settled(name, 3, 2, claims)
	s.replicas.both.Store(false)
	guard.check(t)
	s.stepsOnce(mark)
	for _, q := range s.writesSince(mark) {
		if q.Failed {
			t.Logf("refused (the other replica was first): %s: %s", q.Text, q.Message)
		}
	}
	for i, n := range s.replicas.plannedPassesSince(logMarks) {
		if n == 0 {
			t.Errorf("replica %d planned no step during the scale-down: the replicas did not both serve it", i)
		}
	}
}

// 3. The API server restarts while a retirement is in progress.
//
// Right after the first retirement step reaches Memgraph the API server goes down for a few
// seconds: the driver's syncs keep calling the hook with what its caches last saw, every write
// fails, watches break and are re-established after the restart.
func TestFaultAPIServerRestartDuringRetirement(t *testing.T) {
	const name = "restart"
	s := startScenario(t, "fault-apiserver")
	claims, guard := s.bothRolesAboutToShrink(name)

	mark := s.queryMark()
	s.patchSpec(name, `{"coordinators":3,"dataInstances":2}`)
	s.waitQuery(mark, "DEMOTE INSTANCE", convergeTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := testEnv.RestartAPIServer(ctx, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	// The tests after this one get controllers that have not lived through the outage (see
	// env.RestartControllers); this one keeps the outage's controllers to the end.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := testEnv.RestartControllers(ctx); err != nil {
			t.Error(err)
		}
	})
	s.settled(name, 3, 2, claims)
	guard.check(t)
}

// 4. The Raft leader's Pod is deleted while the cluster is converged.
//
// Memgraph elects another leader; the Pod comes back on its claims and its coordinator rejoins
// with its state. Nothing needs a coordinator command: the hook finds the new leader and writes
// nothing.
func TestFaultLeaderPodDeleted(t *testing.T) {
	const name = "leader"
	s := startScenario(t, "fault-leader")
	s.create(name, "{}")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 2)
	claims := s.claimUIDs()
	old := s.raft().Leader
	c := s.network(name).Coordinator(old)
	mark, syncs := s.queryMark(), s.mc.Stats().Snapshot().SyncsCompleted

	uid := s.deletePod(c.Pod)
	s.waitFor(convergeTimeout, func() error {
		if id, ok := s.world.Leader(); !ok || id == old {
			return fmt.Errorf("leader %d (ok %v)", id, ok)
		}
		return nil
	})
	s.waitPodReplaced(c.Pod, uid, c.Host)
	s.waitSyncedSince(syncs)
	s.settled(name, 3, 2, claims)
	if w := s.writesSince(mark); len(w) > 0 {
		t.Errorf("the hook wrote while Memgraph handled a lost leader: %+v", w)
	}
}

// 5. The MAIN's Pod is deleted: Memgraph fails over by itself; the hook reports the new MAIN and
// does not fight it.
//
// The node is cordoned first, so the replacement Pod stays Pending until the coordinators have
// seen the MAIN down for instance_down_timeout and promoted a replica.
func TestFaultMainPodDeletedFailsOver(t *testing.T) {
	const name = "failover"
	s := startScenario(t, "fault-main")
	s.create(name, "{}")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 2)
	claims := s.claimUIDs()
	old := s.raft().Main
	ord, _ := topology.ParseDataInstanceName(old)
	d := s.network(name).DataInstance(ord)
	mark, syncs := s.queryMark(), s.mc.Stats().Snapshot().SyncsCompleted

	cordon(t, true)
	t.Cleanup(func() { cordon(t, false) })
	uid := s.deletePod(d.Pod)
	s.waitFor(convergeTimeout, func() error {
		if g := s.raft(); g.Main == "" || g.Main == old {
			return fmt.Errorf("MAIN %q", g.Main)
		}
		return nil
	})
	failedOver := s.raft().Main
	t.Logf("Memgraph failed over from %s to %s", old, failedOver)
	cordon(t, false)
	s.waitPodReplaced(d.Pod, uid, d.Host)
	s.waitSyncedSince(syncs)
	s.settled(name, 3, 2, claims)
	if got := s.raft().Main; got != failedOver {
		t.Errorf("MAIN is %s, Memgraph had failed over to %s", got, failedOver)
	}
	if w := s.writesSince(mark); len(w) > 0 {
		t.Errorf("the hook wrote around Memgraph's own failover: %+v", w)
	}
}

// 6. One coordinator is partitioned from the hook (its address stops answering) during a
// coordinator scale-down.
//
// coordinator_1, the first the hook asks, accepts connections and never answers; the Raft
// members still reach each other. The hook must not spend its budget on it: it learns the leader
// from another coordinator and retires coordinators 4 and 5 while the partition lasts.
func TestFaultCoordinatorPartitionedDuringScaleDown(t *testing.T) {
	const ns, name = "fault-partition", "partition"
	s := startScenarioOpts(t, ns, scenarioOptions{links: coordinatorAddressesIn(ns, name, 5)})
	s.create(name, "coordinators: 5")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 5, 2)
	claims := s.claimUIDs()
	guard := s.guardRetirement()
	s.asOperator(func(context.Context) error { return s.world.ForceLeader(3) })

	partitioned := s.network(name).Coordinator(1).Host
	s.links.partition(partitioned, true)
	s.patchSpec(name, `{"coordinators":3}`)
	s.settled(name, 3, 2, claims)
	guard.check(t)
	if s.links.heldReads(partitioned) == 0 {
		t.Error("the hook never tried the partitioned coordinator: the partition was not exercised")
	}
	s.links.partition(partitioned, false)
}

// 7. The MemgraphCluster is deleted while a retirement is in progress: its children go, the
// claims follow the retention policy, nothing hangs.
func TestFaultClusterDeletedMidRetirement(t *testing.T) {
	for _, policy := range []string{"Retain", "Delete"} {
		t.Run(policy, func(t *testing.T) {
			const name = "doomed"
			s := startScenario(t, "fault-delete-"+strings.ToLower(policy))
			s.create(name, "dataInstances: 3\nstorage: {retentionPolicy: "+policy+"}")
			s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 3)
			claims := s.claimUIDs()
			s.parkMain(name, "instance_2")

			mark := s.queryMark()
			s.patchSpec(name, `{"dataInstances":2}`)
			s.waitQuery(mark, "DEMOTE INSTANCE", convergeTimeout)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := mgcClient(s.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			s.waitWorkloadsGone(name)
			s.waitFor(time.Minute, func() error {
				if _, err := s.get(ctx, name); !apierrors.IsNotFound(err) {
					return fmt.Errorf("the MemgraphCluster is still there: %v", err)
				}
				return nil
			})
			if policy == "Retain" {
				s.assertNoClaimLost(claims)
			} else {
				s.waitFor(time.Minute, func() error {
					if left := s.claimUIDs(); len(left) > 0 {
						return fmt.Errorf("claims left under Delete: %v", left)
					}
					return nil
				})
			}
			s.assertNoMisuse()
		})
	}
}

// bothRolesAboutToShrink converges a 5+3 cluster with the MAIN on instance_2 and the Raft leader
// on coordinator_5, both in the range a shrink to 3+2 retires, and returns its claims and a guard
// against Pods going while their member is registered.
func (s *scenario) bothRolesAboutToShrink(name string) (map[string]types.UID, *goneGuard) {
	s.t.Helper()
	s.create(name, "coordinators: 5\ndataInstances: 3")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 5, 3)
	claims := s.claimUIDs()
	guard := s.guardRetirement()
	s.parkMain(name, "instance_2")
	s.asOperator(func(context.Context) error { return s.world.ForceLeader(5) })
	return claims, guard
}

// registered reports whether name is among the data instances registered in Raft.
func registered(data []sim.DataSnapshot, name string) bool {
	for _, d := range data {
		if d.Name == name {
			return true
		}
	}
	return false
}

func hasQuery(qs []sim.Query, text string) bool {
	for _, q := range qs {
		if q.Text == text {
			return true
		}
	}
	return false
}

var plannedRE = regexp.MustCompile(`"msg":"sync".*"planned":(\d+)`)

// plannedPasses counts the sync lines of a JSON log that planned at least one step.
func plannedPasses(log string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if m := plannedRE.FindStringSubmatch(line); m != nil {
			if k, _ := strconv.Atoi(m[1]); k > 0 {
				n++
			}
		}
	}
	return n
}

//go:build e2e

package e2e_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/hookmetrics"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var (
	fleetSize  = flag.Int("fleet", 3, "MemgraphClusters (3+2 each) TestFleetLoad creates at once; make load: 50")
	fleetDrain = flag.Bool("fleet-drain", false, "TestFleetLoad also waits for the hook's Bolt pool to close every connection after the clusters are deleted (about a minute); make load sets it")
)

// TestFleetLoad creates -fleet MemgraphClusters at once and runs the hook binary against them as
// the Deployment runs it (a child process, so its resources are its own): every cluster
// converges with no hook answer other than 200, then a steady state of resyncs costs exactly one
// Bolt query per sync (SHOW INSTANCES), plus the lag gauge's SHOW REPLICATION LAG on the leader
// and the replica health's SHOW REPLICAS on the MAIN, each at most once per cluster per
// hookmetrics.LagRefresh (hookmetrics.ReplicaRefresh is the same period), and no write to any
// child or status. It reports the hook's peak RSS and CPU
// time. Deleting the clusters empties the hook's per-cluster state: the lock map at once and, with
// -fleet-drain, the Bolt pool within its idle timeout. CI runs 3 clusters; make load runs 50.
func TestFleetLoad(t *testing.T) {
	n := *fleetSize
	const ns = "fleet"
	var names, addrs []string
	for i := range n {
		name := fmt.Sprintf("mg-%02d", i)
		names = append(names, name)
		// The data instances too: the replica health reads the MAIN's SHOW REPLICAS.
		addrs = append(append(addrs, coordinatorAddressesIn(ns, name, 3)...), dataAddressesIn(ns, name, 2)...)
	}
	// Each fake Node takes 500 pods (env's generous capacity): a fleet of 100 clusters of five
	// pods or more gets another Node per 500 pods, so the pods never fill the Nodes exactly.
	for i := 1; i <= 5*n/500; i++ {
		addNode(t, fmt.Sprintf("fleet-node-%d", i))
	}
	// The CompositeController's own resync period and Metacontroller's default of 5 workers;
	// Pods are polled once a second (250 of them at 50 clusters).
	s := startScenarioOpts(t, ns, scenarioOptions{process: true, links: addrs, workers: 5,
		resync: 60 * time.Second, podInterval: time.Second})
	started := time.Now()
	for _, name := range names {
		s.create(name, "{}")
	}
	deadline := started.Add(3*time.Minute + time.Duration(n)*10*time.Second)
	for _, name := range names {
		s.waitConverged(name, time.Until(deadline))
	}
	convergedIn := time.Since(started)
	s.assertAgentImage(names[0], shippedDeployment(t).Spec.Template.Spec.Containers[0].Image)
	if got := s.ledRaftGroups(); got != n {
		t.Errorf("%d Raft groups with a leader, three members and a MAIN; want %d", got, n)
	}
	s.assertNoMisuse()
	calls, failed := s.hookCalls()
	if len(failed) > 0 {
		t.Errorf("the hook did not answer 200 to %d of %d calls: %v", len(failed), calls, failed)
	}
	rss, cpu := s.proc.usage()
	if pools := s.hookMetric("memgraph_hooks_bolt_pools"); pools < float64(n) {
		t.Errorf("memgraph_hooks_bolt_pools = %v with %d clusters", pools, n)
	}

	steady := time.Now()
	syncs, queries, lagReads, replicaReads, childWrites, statusWrites := s.steadyState(n, 2)
	took := time.Since(steady)
	t.Logf("FLEET steady state measured in %s", took.Round(time.Second))
	if queries != syncs || childWrites != 0 || statusWrites != 0 {
		t.Errorf("steady state: %d syncs cost %d SHOW INSTANCES, %d child writes and %d status writes; want one query per sync and no write",
			syncs, queries, childWrites, statusWrites)
	}
	most := n * (int(took/hookmetrics.LagRefresh) + 1)
	for query, reads := range map[string]int{"SHOW REPLICATION LAG": lagReads, "SHOW REPLICAS": replicaReads} {
		if reads > most {
			t.Errorf("steady state: %d %s in %s for %d clusters; want at most one per cluster per %s (%d)",
				reads, query, took.Round(time.Second), n, hookmetrics.LagRefresh, most)
		}
	}
	t.Logf("FLEET clusters=%d converged_in=%s hook_calls=%d non_200=%d peak_rss_mib=%.1f cpu_seconds=%.1f steady_syncs=%d steady_show_instances=%d steady_lag_reads=%d steady_replica_reads=%d steady_child_writes=%d steady_status_writes=%d",
		n, convergedIn.Round(time.Second), calls, len(failed), float64(rss)/(1<<20), cpu.Seconds(), syncs, queries, lagReads, replicaReads, childWrites, statusWrites)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := mgcClient(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	// The garbage collector deletes every cluster's children at its own pace: about a minute
	// for 50 clusters on 2 cores, so a fleet gets a minute plus two seconds a cluster.
	if err := waitFleetGone(ns, time.Minute+time.Duration(n)*2*time.Second); err != nil {
		t.Fatalf("the fleet's workloads were not garbage-collected: %v", err)
	}
	t.Logf("FLEET deleted: workloads gone in %s", time.Since(deleted).Round(time.Second))
	if inFlight := s.hookMetric("memgraph_hooks_clusters_in_flight"); inFlight != 0 {
		t.Errorf("memgraph_hooks_clusters_in_flight = %v after every cluster went, want 0", inFlight)
	}
	if *fleetDrain {
		s.waitFor(3*time.Minute, func() error {
			if pools := s.hookMetric("memgraph_hooks_bolt_pools"); pools != 0 {
				return fmt.Errorf("memgraph_hooks_bolt_pools = %v", pools)
			}
			return nil
		})
		t.Logf("FLEET drained: the hook holds no Bolt connection %s after the clusters were deleted", time.Since(deleted).Round(time.Second))
	}
}

// waitFleetGone waits up to timeout until no Pod and no StatefulSet is left in namespace ns.
func waitFleetGone(ns string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return eventually(ctx, time.Second, func() error {
		pods, err := testEnv.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		sets, err := testEnv.Client.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if n := len(pods.Items) + len(sets.Items); n > 0 {
			return fmt.Errorf("%d pods and %d StatefulSets left", len(pods.Items), len(sets.Items))
		}
		return nil
	})
}

// ledRaftGroups counts the simulator's Raft groups with a leader, three members and a MAIN.
func (s *scenario) ledRaftGroups() int {
	n := 0
	for _, c := range s.world.Raft().Clusters {
		if c.Leader != 0 && len(c.Members) == 3 && c.Main != "" {
			n++
		}
	}
	return n
}

// hookCalls counts the driver's hook calls and lists those that did not answer 200 (a transport
// error counts as status 0).
func (s *scenario) hookCalls() (int, []string) {
	snap := s.mc.Stats().Snapshot()
	var failed []string
	for _, h := range snap.Hooks {
		if h.Status != http.StatusOK {
			failed = append(failed, fmt.Sprintf("%s %d", h.Hook, h.Status))
		}
	}
	return len(snap.Hooks), failed
}

// steadyState resyncs every parent rounds times with syncs held around the measurement, and
// returns the syncs that ran, the SHOW INSTANCES, SHOW REPLICATION LAG and SHOW REPLICAS the
// simulator received (any other query fails the test), and the child and status writes the
// driver made meanwhile.
func (s *scenario) steadyState(parents, rounds int) (syncs, instances, lagReads, replicaReads, childWrites, statusWrites int) {
	s.t.Helper()
	s.mc.Pause()
	before := s.mc.Stats().Snapshot()
	mark, since := s.queryMark(), time.Now()
	s.mc.Resume()
	for r := 1; r <= rounds; r++ {
		s.mc.Resync()
		s.waitFor(5*time.Minute, func() error {
			if got := s.mc.Stats().Snapshot().SyncsCompleted - before.SyncsCompleted; got < r*parents {
				return fmt.Errorf("%d of %d resyncs done", got, r*parents)
			}
			return nil
		})
	}
	s.mc.Pause()
	after := s.mc.Stats().Snapshot()
	qs := s.world.Queries()[mark:]
	s.mc.Resume()
	for _, q := range qs {
		switch q.Text {
		case "SHOW INSTANCES":
			instances++
		case "SHOW REPLICATION LAG":
			lagReads++
		case "SHOW REPLICAS":
			replicaReads++
		default:
			s.t.Errorf("a steady-state sync sent %q", q.Text)
		}
	}
	if errs := len(after.Errors) - len(before.Errors); errs > 0 {
		s.t.Errorf("%d syncs failed in the steady state", errs)
	}
	for _, w := range after.ChildWrites(since) {
		s.t.Logf("steady-state child write: %s", w)
	}
	return after.SyncsStarted - before.SyncsStarted, instances, lagReads, replicaReads, len(after.ChildWrites(since)), after.CountSince("status", since)
}

// hookMetric reads an unlabelled metric from the hook binary's metrics listener.
func (s *scenario) hookMetric(name string) float64 {
	s.t.Helper()
	resp, err := http.Get("http://" + s.proc.metricsAddr + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				s.t.Fatal(err)
			}
			return f
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	s.t.Fatalf("the hook's /metrics has no %s", name)
	return 0
}

// assertAgentImage fails unless the backup-agent sidecar of cluster's data pods runs image: the
// hook binary got the Deployment's --agent-image with its variable expanded.
func (s *scenario) assertAgentImage(cluster, image string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sts, err := testEnv.Client.AppsV1().StatefulSets(s.ns).Get(ctx, topology.DataSetName(cluster), metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == topology.BackupAgentContainer && c.Image != image {
			s.t.Errorf("the data pods' %s runs %q, want the hook's image %q", c.Name, c.Image, image)
		}
	}
}

//go:build e2e

package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/e2e/metacontroller"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/hookmetrics"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var (
	fleetSize  = flag.Int("fleet", 3, "MemgraphClusters (3+2 each) TestFleetLoad creates at once; make load: 50")
	fleetDrain = flag.Bool("fleet-drain", false, "TestFleetLoad also waits for the hook's Bolt pool to close every connection after the clusters are deleted (within its idle timeout, two minutes); make load sets it")
)

// TestFleetLoad creates -fleet MemgraphClusters at once and runs the hook binary against them as
// the Deployment runs it (a child process, so its resources are its own): every cluster
// converges with no hook answer other than 200, then, in a steady state of resyncs, each cluster
// whose Memgraph reported no change costs exactly one Bolt query per sync (SHOW INSTANCES), plus
// the lag gauge's SHOW REPLICATION LAG on the leader and the replica health's SHOW REPLICAS on
// the MAIN, each at most once per hookmetrics.LagRefresh (hookmetrics.ReplicaRefresh is the same
// period), and no write to any child or status (steadyState). It reports the hook's peak RSS and
// CPU time, and the clusters whose Memgraph reported a change. Deleting the clusters empties the hook's per-cluster state: the lock map at once and, with
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
	// The CompositeController's own resync period and Metacontroller's default of 5 workers.
	// The simulated pods follow every Pod event; the poll besides (claims, missed events) lists
	// every Pod and claim of the namespace, so it runs once a second per 50 clusters (every 4 s
	// at 200: 1,000 Pods and 2,000 claims a list), leaving the 2 cores to the control plane, the
	// hook and the simulated instances.
	s := startScenarioOpts(t, ns, scenarioOptions{process: true, links: addrs, workers: 5,
		resync: 60 * time.Second, podInterval: max(time.Second, time.Duration(n/50)*time.Second)})
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

	cost := s.steadyState(names, 2)
	t.Logf("FLEET steady state measured in %s", cost.took.Round(time.Second))
	t.Logf("FLEET clusters=%d converged_in=%s hook_calls=%d non_200=%d peak_rss_mib=%.1f cpu_seconds=%.1f steady_syncs=%d steady_show_instances=%d steady_lag_reads=%d steady_replica_reads=%d steady_other_queries=%d steady_child_writes=%d steady_status_writes=%d steady_changed_clusters=%d %v",
		n, convergedIn.Round(time.Second), calls, len(failed), float64(rss)/(1<<20), cpu.Seconds(), cost.syncs, cost.instances, cost.lagReads, cost.replicaReads, cost.others, cost.childWrites, cost.statusWrites, len(cost.changed), cost.changed)

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

// steadyCost is what a steady state of resyncs cost, in total and per cluster.
type steadyCost struct {
	took                                             time.Duration
	syncs, instances, lagReads, replicaReads, others int
	childWrites, statusWrites                        int
	// changed are the clusters in which the simulator changed what Memgraph reports after the
	// hook's last look before the resyncs (clusterCost.changes), by name.
	changed []string
}

// clusterCost is one cluster's share of a steady state: its syncs, the queries its instances
// received, the writes to it and its children, and the changes the simulator made in what its
// Memgraph reports from the start of its last sync before the window to the window's end.
type clusterCost struct {
	syncs                             []time.Time
	instances, lagReads, replicaReads int
	queries                           []sim.Query
	others                            []string // queries other than the three reads
	childWrites, statusWrites         []metacontroller.Write
	changes                           []sim.Change
	hookLog                           []string // the hook's log lines naming the cluster
}

// steadyState resyncs every parent of names rounds times, with syncs held around the
// measurement, and attributes every sync, query, write and simulator change to its cluster
// (queries by the instance's host, writes by the object's name, changes by host). A cluster
// whose Memgraph reported no change costs exactly one SHOW INSTANCES per sync, the lag gauge's
// SHOW REPLICATION LAG and the replica health's SHOW REPLICAS at most once per
// hookmetrics.LagRefresh, and no write; anything else fails the test. A cluster with a change
// may cost more (a sync that sees a change reads again, and its status reports it): it is
// listed with its change log, queries and writes.
func (s *scenario) steadyState(names []string, rounds int) steadyCost {
	s.t.Helper()
	s.mc.Pause()
	before := s.mc.Stats().Snapshot()
	mark, since := s.queryMark(), time.Now()
	s.mc.Resume()
	for r := 1; r <= rounds; r++ {
		s.mc.Resync()
		s.waitFor(5*time.Minute, func() error {
			if got := s.mc.Stats().Snapshot().SyncsCompleted - before.SyncsCompleted; got < r*len(names) {
				return fmt.Errorf("%d of %d resyncs done", got, r*len(names))
			}
			return nil
		})
	}
	s.mc.Pause()
	after := s.mc.Stats().Snapshot()
	until := time.Now()
	qs := s.world.Queries()[mark:]
	changes := s.world.Changes()
	s.mc.Resume()

	cost := steadyCost{took: until.Sub(since), syncs: after.SyncsStarted - before.SyncsStarted}
	per := map[string]*clusterCost{}
	for _, name := range names {
		per[name] = &clusterCost{}
	}
	owner := func(object string) *clusterCost { return per[clusterOf(names, object)] }
	lookedAt := map[string]time.Time{} // each cluster's last sync before the window
	for _, sy := range after.Syncs {
		name := sy.Key[strings.LastIndex(sy.Key, "/")+1:]
		c := per[name]
		switch {
		case c == nil:
		case sy.At.Before(since):
			lookedAt[name] = sy.At
		default:
			c.syncs = append(c.syncs, sy.At)
		}
	}
	for _, q := range qs {
		c := owner(q.Host)
		if c == nil {
			s.t.Errorf("a steady-state query went to %s, no cluster's instance: %q", q.Host, q.Text)
			continue
		}
		c.queries = append(c.queries, q)
		switch q.Text {
		case "SHOW INSTANCES":
			c.instances++
			cost.instances++
		case "SHOW REPLICATION LAG":
			c.lagReads++
			cost.lagReads++
		case "SHOW REPLICAS":
			c.replicaReads++
			cost.replicaReads++
		default:
			c.others = append(c.others, q.Text)
			cost.others++
		}
	}
	for _, w := range after.Writes {
		if w.At.Before(since) || w.Op == "skipped-update" {
			continue
		}
		c := owner(w.Object)
		if c == nil {
			s.t.Errorf("steady-state write to no cluster's object: %s", w)
			continue
		}
		if w.Op == "status" {
			c.statusWrites = append(c.statusWrites, w)
			cost.statusWrites++
		} else {
			c.childWrites = append(c.childWrites, w)
			cost.childWrites++
		}
	}
	for _, ch := range changes {
		name := clusterOf(names, ch.Host)
		if c := per[name]; c != nil && ch.At.After(lookedAt[name]) && !ch.At.After(until) {
			c.changes = append(c.changes, ch)
		}
	}

	for name, c := range per {
		if len(c.changes) > 0 || len(c.statusWrites)+len(c.childWrites)+len(c.others) > 0 || c.instances != len(c.syncs) {
			c.hookLog = s.proc.logLines(s.ns+"/"+name, lookedAt[name], until)
		}
	}
	most := int(cost.took/hookmetrics.LagRefresh) + 1
	for _, name := range names {
		c := per[name]
		if len(c.changes) > 0 {
			cost.changed = append(cost.changed, name)
			s.t.Logf("FLEET %s: Memgraph reported a change during the steady state; it cost %s\n%s", name, c.summary(), c.detail())
			continue
		}
		if c.instances != len(c.syncs) || len(c.others) > 0 || len(c.childWrites) > 0 || len(c.statusWrites) > 0 ||
			c.lagReads > most || c.replicaReads > most {
			s.t.Errorf("steady state: %s, whose Memgraph reported no change, cost %s; want one SHOW INSTANCES per sync, "+
				"at most %d SHOW REPLICATION LAG and SHOW REPLICAS (one per %s in %s), and no write\n%s",
				name, c.summary(), most, hookmetrics.LagRefresh, cost.took.Round(time.Second), c.detail())
		}
	}
	if errs := len(after.Errors) - len(before.Errors); errs > 0 {
		s.t.Errorf("%d syncs failed in the steady state", errs)
	}
	return cost
}

// clusterOf is the cluster of names that object (namespace/name, or an instance's host) belongs
// to: the cluster itself, or a child or pod named after it; "" when none.
func clusterOf(names []string, object string) string {
	object = object[strings.LastIndex(object, "/")+1:]
	object = object[:strings.IndexByte(object+".", '.')]
	for _, name := range names {
		if object == name || strings.HasPrefix(object, name+"-") {
			return name
		}
	}
	return ""
}

func (c *clusterCost) summary() string {
	return fmt.Sprintf("%d syncs, %d SHOW INSTANCES, %d SHOW REPLICATION LAG, %d SHOW REPLICAS, %d other queries %q, %d child writes, %d status writes",
		len(c.syncs), c.instances, c.lagReads, c.replicaReads, len(c.others), c.others, len(c.childWrites), len(c.statusWrites))
}

// detail is the cluster's steady state in time order: changes, syncs, queries and writes.
func (c *clusterCost) detail() string {
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	for _, ch := range c.changes {
		lines = append(lines, line{ch.At, "change: " + ch.Host + " " + ch.What})
	}
	for _, at := range c.syncs {
		lines = append(lines, line{at, "sync"})
	}
	for _, q := range c.queries {
		text := "query: " + q.Host + " " + q.Text
		if q.Failed {
			text += " failed: " + q.Message
		}
		lines = append(lines, line{q.At, text})
	}
	for _, w := range append(append([]metacontroller.Write(nil), c.childWrites...), c.statusWrites...) {
		lines = append(lines, line{w.At, "write: " + w.Op + " " + w.Kind + " " + w.Object + "\n" + w.Diff})
	}
	for _, l := range c.hookLog {
		var rec struct{ Time time.Time }
		_ = json.Unmarshal([]byte(l), &rec)
		lines = append(lines, line{rec.Time, "hook: " + l})
	}
	slices.SortStableFunc(lines, func(a, b line) int { return a.at.Compare(b.at) })
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s %s\n", l.at.Format("15:04:05.000"), l.text)
	}
	return b.String()
}

// logLines are the hook's JSON log lines that name cluster (namespace/name) and were logged
// between from and to.
func (p *hookProcess) logLines(cluster string, from, to time.Time) []string {
	var out []string
	for _, l := range strings.Split(p.logs(), "\n") {
		var rec struct {
			Time    time.Time
			Cluster string
		}
		if json.Unmarshal([]byte(l), &rec) == nil && rec.Cluster == cluster && !rec.Time.Before(from) && !rec.Time.After(to) {
			out = append(out, l)
		}
	}
	return out
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

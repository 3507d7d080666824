package hookmetrics

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// gaugesFixture is a ClusterGauges with a fake clock, registered alone.
func gaugesFixture(t *testing.T) (*ClusterGauges, *prometheus.Registry, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	g := newClusterGauges(clock.now, clusterSeriesTTL)
	reg := prometheus.NewRegistry()
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	return g, reg, clock
}

// scraped is every series reg exposes, as `name{namespace/name[,role]} value` lines, sorted.
func scraped(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			series := labels["namespace"] + "/" + labels["name"]
			if role, ok := labels["role"]; ok {
				series += "," + role
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %g", mf.GetName(), series, m.GetGauge().GetValue()))
		}
	}
	slices.Sort(lines)
	return lines
}

// convergedState is a 3+2 cluster with every member up, a replica 4 transactions behind.
var convergedState = ClusterState{ClusterSummary: planner.ClusterSummary{MainPresent: true, LeaderPresent: true, MembersUp: 5, MembersDeclared: 5}, MaxReplicaLag: 4, LagObserved: true}

// seriesOf lists the seven series every cluster has (six, and the lag when lag >= 0), with no
// single-node risk, as scraped renders them.
func seriesOf(cluster string, main, leader, up, declared, lag, step float64) []string {
	lines := []string{
		fmt.Sprintf("memgraph_hooks_cluster_single_node_risk{%s} 0", cluster),
		fmt.Sprintf("memgraph_hooks_cluster_leader_present{%s} %g", cluster, leader),
		fmt.Sprintf("memgraph_hooks_cluster_main_present{%s} %g", cluster, main),
		fmt.Sprintf("memgraph_hooks_cluster_members_declared{%s} %g", cluster, declared),
		fmt.Sprintf("memgraph_hooks_cluster_members_up{%s} %g", cluster, up),
		fmt.Sprintf("memgraph_hooks_cluster_rollout_step{%s} %g", cluster, step),
	}
	if lag >= 0 {
		lines = append(lines, fmt.Sprintf("memgraph_hooks_cluster_max_replica_lag{%s} %g", cluster, lag))
	}
	slices.Sort(lines)
	return lines
}

func merged(groups ...[]string) []string {
	all := slices.Concat(groups...)
	slices.Sort(all)
	return all
}

func TestClusterGaugesAppearAndUpdate(t *testing.T) {
	g, reg, clock := gaugesFixture(t)
	if got := scraped(t, reg); len(got) != 0 {
		t.Fatalf("series before any sync: %q", got)
	}
	g.Set("db", "mg", convergedState)
	if diff := cmp.Diff(seriesOf("db/mg", 1, 1, 5, 5, 4, 0), scraped(t, reg)); diff != "" {
		t.Errorf("after a converged sync (-want +got):\n%s", diff)
	}
	// The MAIN's pod went down, a rollout is on its third pod and the lag was not read: the
	// lag read last stays while it is fresher than LagStale, then the series goes.
	down := ClusterState{ClusterSummary: planner.ClusterSummary{LeaderPresent: true, MembersUp: 4, MembersDeclared: 5, RolloutStep: 3}}
	g.Set("db", "mg", down)
	if diff := cmp.Diff(seriesOf("db/mg", 0, 1, 4, 5, 4, 3), scraped(t, reg)); diff != "" {
		t.Errorf("after the MAIN went down (-want +got):\n%s", diff)
	}
	clock.advance(LagStale + time.Second)
	g.Set("db", "mg", down)
	if diff := cmp.Diff(seriesOf("db/mg", 0, 1, 4, 5, -1, 3), scraped(t, reg)); diff != "" {
		t.Errorf("with no lag read for longer than LagStale (-want +got):\n%s", diff)
	}
}

// The single-node risk follows each sync; a role's memory limit is a series while the role has
// one, and goes with the cluster's other series when it is forgotten or expires.
func TestClusterGaugesRiskAndMemoryLimit(t *testing.T) {
	g, reg, clock := gaugesFixture(t)
	crowded := convergedState
	crowded.SingleNodeRisk = true
	crowded.MemoryLimitBytes = map[string]int64{"coordinator": 409 << 20, "data": 6553 << 20}
	g.Set("db", "mg", crowded)
	want := merged(slices.DeleteFunc(seriesOf("db/mg", 1, 1, 5, 5, 4, 0), func(l string) bool {
		return strings.HasPrefix(l, "memgraph_hooks_cluster_single_node_risk")
	}), []string{
		"memgraph_hooks_cluster_single_node_risk{db/mg} 1",
		fmt.Sprintf("memgraph_hooks_cluster_memory_limit_bytes{db/mg,coordinator} %g", float64(409<<20)),
		fmt.Sprintf("memgraph_hooks_cluster_memory_limit_bytes{db/mg,data} %g", float64(6553<<20)),
	})
	if diff := cmp.Diff(want, scraped(t, reg)); diff != "" {
		t.Errorf("a crowded cluster with memory limits (-want +got):\n%s", diff)
	}
	spread := convergedState
	spread.MemoryLimitBytes = map[string]int64{"data": 1 << 30}
	g.Set("db", "mg", spread)
	want = merged(seriesOf("db/mg", 1, 1, 5, 5, 4, 0), []string{fmt.Sprintf("memgraph_hooks_cluster_memory_limit_bytes{db/mg,data} %g", float64(1<<30))})
	if diff := cmp.Diff(want, scraped(t, reg)); diff != "" {
		t.Errorf("spread, the coordinators' limit gone (-want +got):\n%s", diff)
	}
	g.Forget("db", "mg")
	if got := scraped(t, reg); len(got) != 0 {
		t.Errorf("series after forgetting the cluster: %q", got)
	}
	g.Set("db", "mg", spread)
	clock.advance(clusterSeriesTTL + time.Second)
	if got := scraped(t, reg); len(got) != 0 {
		t.Errorf("series after the cluster expired: %q", got)
	}
}

// A cluster's lag is due at once, then once per LagRefresh after the last read that succeeded.
func TestClusterGaugesLagDue(t *testing.T) {
	g, _, clock := gaugesFixture(t)
	if !g.LagDue("db", "mg") {
		t.Fatal("a cluster never read: lag not due")
	}
	g.Set("db", "mg", convergedState)
	if g.LagDue("db", "mg") {
		t.Error("lag due right after it was read")
	}
	clock.advance(LagRefresh - time.Second)
	g.Set("db", "mg", ClusterState{}) // a pass that did not read it
	if g.LagDue("db", "mg") {
		t.Errorf("lag due %v after it was read, want every %v", LagRefresh-time.Second, LagRefresh)
	}
	clock.advance(time.Second)
	if !g.LagDue("db", "mg") || !g.LagDue("db", "other") {
		t.Errorf("lag not due %v after it was read", LagRefresh)
	}
}

func TestClusterGaugesForget(t *testing.T) {
	g, reg, _ := gaugesFixture(t)
	g.Set("db", "mg", convergedState)
	g.Set("db", "other", convergedState)
	g.Forget("db", "mg")
	if diff := cmp.Diff(seriesOf("db/other", 1, 1, 5, 5, 4, 0), scraped(t, reg)); diff != "" {
		t.Errorf("after forgetting db/mg (-want +got):\n%s", diff)
	}
	g.Forget("db", "never-synced")
	g.Forget("db", "other")
	if got := scraped(t, reg); len(got) != 0 {
		t.Errorf("series after forgetting every cluster: %q", got)
	}
}

// A cluster not synced for clusterSeriesTTL disappears at the next scrape, and a cluster synced
// in the meantime stays.
func TestClusterGaugesExpire(t *testing.T) {
	g, reg, clock := gaugesFixture(t)
	g.Set("db", "deleted", convergedState)
	clock.advance(clusterSeriesTTL / 2)
	g.Set("db", "live", convergedState)
	clock.advance(clusterSeriesTTL / 2)
	if diff := cmp.Diff(merged(seriesOf("db/deleted", 1, 1, 5, 5, 4, 0), seriesOf("db/live", 1, 1, 5, 5, 4, 0)), scraped(t, reg)); diff != "" {
		t.Errorf("at exactly the TTL both clusters stay (-want +got):\n%s", diff)
	}
	clock.advance(time.Second)
	if diff := cmp.Diff(seriesOf("db/live", 1, 1, 5, 5, 4, 0), scraped(t, reg)); diff != "" {
		t.Errorf("past the TTL (-want +got):\n%s", diff)
	}
	clock.advance(clusterSeriesTTL)
	if got := scraped(t, reg); len(got) != 0 {
		t.Errorf("series after every cluster expired: %q", got)
	}
	// An expired cluster synced again comes back.
	g.Set("db", "deleted", convergedState)
	if diff := cmp.Diff(seriesOf("db/deleted", 1, 1, 5, 5, 4, 0), scraped(t, reg)); diff != "" {
		t.Errorf("a cluster synced again (-want +got):\n%s", diff)
	}
}

// The series are seven per cluster synced within the TTL, however many syncs there were.
func TestClusterGaugesCardinalityIsBoundedByClusters(t *testing.T) {
	g, reg, clock := gaugesFixture(t)
	for round := range 20 {
		for i := range 50 {
			g.Set(fmt.Sprintf("ns-%d", i%5), fmt.Sprintf("mg-%d", i), ClusterState{ClusterSummary: planner.ClusterSummary{MembersUp: round % 5, MembersDeclared: 5}, LagObserved: true})
		}
		clock.advance(10 * time.Second)
	}
	if got := len(scraped(t, reg)); got != 50*7 {
		t.Errorf("%d series for 50 clusters, want %d", got, 50*7)
	}
	// Clusters deleted one after another: only those synced within the TTL remain.
	for i := range 200 {
		g.Set("churn", fmt.Sprintf("mg-%d", i), convergedState)
		clock.advance(clusterSeriesTTL / 10)
	}
	if got, most := len(scraped(t, reg)), 11*7; got > most {
		t.Errorf("%d series while clusters come and go, want at most %d", got, most)
	}
}

// Two handlers' metrics on one registry (the hooks and the metrics listener) share the gauges.
func TestClusterGaugesRegisterOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	none := func() int { return 0 }
	a, b := New(reg, none, time.Now), New(reg, none, time.Now)
	if a.Clusters != b.Clusters {
		t.Fatal("a second registration made a second set of cluster gauges")
	}
	a.Clusters.Set("db", "mg", convergedState)
	if got := len(scraped(t, reg)); got < 7 {
		t.Errorf("%d series on the shared registry, want the cluster's 7 among them", got)
	}
}

func TestMaxReplicaLag(t *testing.T) {
	for _, tc := range []struct {
		name string
		lag  []memgraph.InstanceLag
		want int64
	}{
		{"no replica", nil, 0},
		{"caught up", []memgraph.InstanceLag{{Instance: "instance_1", Databases: map[string]memgraph.DatabaseLag{"memgraph": {CommittedTxns: 9}}}}, 0},
		{"the furthest replica on any database", []memgraph.InstanceLag{
			{Instance: "instance_1", Databases: map[string]memgraph.DatabaseLag{"memgraph": {TxnsBehindMain: 3}, "tenant": {TxnsBehindMain: 12}}},
			{Instance: "instance_2", Databases: map[string]memgraph.DatabaseLag{"memgraph": {TxnsBehindMain: 7}}},
		}, 12},
	} {
		if got := MaxReplicaLag(tc.lag); got != tc.want {
			t.Errorf("%s: MaxReplicaLag = %d, want %d", tc.name, got, tc.want)
		}
	}
}

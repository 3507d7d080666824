package bolt_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

var ignoreLastResp = cmpopts.IgnoreFields(memgraph.Instance{}, "LastSuccRespMs")

func coordRow(cluster string, id int, bolt, health, role string) memgraph.Instance {
	cfg := coordConfig(cluster, id)
	return memgraph.Instance{Name: "coordinator_" + string(rune('0'+id)), BoltServer: bolt,
		CoordinatorServer: cfg.CoordinatorServer, ManagementServer: cfg.ManagementServer, Health: health, Role: role}
}

func dataRow(cluster string, i int, health, role string) memgraph.Instance {
	cfg := instanceConfig(cluster, i)
	return memgraph.Instance{Name: instanceName(i), BoltServer: cfg.BoltServer, ManagementServer: cfg.ManagementServer,
		Health: health, Role: role}
}

func withBolt(row memgraph.Instance, bolt string) memgraph.Instance {
	row.BoltServer = bolt
	return row
}

func showInstances(t *testing.T, ctx context.Context, c memgraph.Client) []memgraph.Instance {
	t.Helper()
	got, err := c.ShowInstances(ctx)
	if err != nil {
		t.Fatalf("SHOW INSTANCES: %v", err)
	}
	return got
}

// TestEveryCommandOnFreshCluster drives a cluster from three fresh coordinators to a
// registered 3+3 cluster and back down, one command at a time, checking SHOW INSTANCES after
// each step, and that every query went out auto-commit and none was a misuse.
func TestEveryCommandOnFreshCluster(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "a", 3, 3)
	pool := newPool(t, w)
	ctx := testContext(t)
	c1 := pool.Client(coordAddr("a", 1))

	// A fresh coordinator leads its own one-member cluster and lists itself with no bolt_server.
	want := []memgraph.Instance{coordRow("a", 1, "", memgraph.HealthUp, memgraph.RoleLeader)}
	if diff := cmp.Diff(want, showInstances(t, ctx, c1), ignoreLastResp); diff != "" {
		t.Fatalf("fresh coordinator (-want +got)\n%s", diff)
	}

	bootstrap(t, ctx, pool, "a", 3, 3)
	want = []memgraph.Instance{
		coordRow("a", 1, coordConfig("a", 1).BoltServer, memgraph.HealthUp, memgraph.RoleLeader),
		coordRow("a", 2, coordConfig("a", 2).BoltServer, memgraph.HealthUp, memgraph.RoleFollower),
		coordRow("a", 3, coordConfig("a", 3).BoltServer, memgraph.HealthUp, memgraph.RoleFollower),
		dataRow("a", 0, memgraph.HealthUp, memgraph.RoleMain),
		dataRow("a", 1, memgraph.HealthUp, memgraph.RoleReplica),
		dataRow("a", 2, memgraph.HealthUp, memgraph.RoleReplica),
	}
	// Every coordinator serves the leader's table.
	for id := 1; id <= 3; id++ {
		got := showInstances(t, ctx, pool.Client(coordAddr("a", id)))
		if diff := cmp.Diff(want, got, ignoreLastResp); diff != "" {
			t.Fatalf("after bootstrap, via coordinator %d (-want +got)\n%s", id, diff)
		}
	}

	if err := w.Commit("memgraph", 5); err != nil {
		t.Fatal(err)
	}
	if err := w.SetLag(dataHost("a", 2), "memgraph", 2); err != nil {
		t.Fatal(err)
	}
	lag, err := pool.Client(coordAddr("a", 2)).ShowReplicationLag(ctx)
	if err != nil {
		t.Fatalf("SHOW REPLICATION LAG: %v", err)
	}
	wantLag := []memgraph.InstanceLag{
		{Instance: "instance_1", Databases: map[string]memgraph.DatabaseLag{"memgraph": {CommittedTxns: 5}}},
		{Instance: "instance_2", Databases: map[string]memgraph.DatabaseLag{"memgraph": {CommittedTxns: 5}}},
		{Instance: "instance_3", Databases: map[string]memgraph.DatabaseLag{"memgraph": {CommittedTxns: 3, TxnsBehindMain: 2}}},
	}
	sortLag := cmpopts.SortSlices(func(a, b memgraph.InstanceLag) bool { return a.Instance < b.Instance })
	if diff := cmp.Diff(wantLag, lag, sortLag); diff != "" {
		t.Errorf("replication lag (-want +got)\n%s", diff)
	}

	// Writes sent to a follower are forwarded to the leader.
	c3 := pool.Client(coordAddr("a", 3))
	steps := []struct {
		name string
		run  func() error
	}{
		{"DEMOTE INSTANCE via follower", func() error { return c3.DemoteInstance(ctx, "instance_1") }},
		{"SET INSTANCE TO MAIN", func() error { return c1.SetInstanceToMain(ctx, "instance_2") }},
		{"UNREGISTER INSTANCE replica", func() error { return c1.UnregisterInstance(ctx, "instance_3") }},
		{"UPDATE CONFIG FOR INSTANCE via follower", func() error { return c3.UpdateInstanceConfig(ctx, "instance_1", "lb-1.example.com:7687") }},
		{"UPDATE CONFIG FOR COORDINATOR", func() error { return c1.UpdateCoordinatorConfig(ctx, 2, "lb-c2.example.com:7687") }},
		{"REMOVE COORDINATOR follower", func() error { return c1.RemoveCoordinator(ctx, 3) }},
		{"YIELD LEADERSHIP on leader", func() error { return c1.YieldLeadership(ctx) }},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	want = []memgraph.Instance{
		coordRow("a", 1, coordConfig("a", 1).BoltServer, memgraph.HealthUp, memgraph.RoleFollower),
		coordRow("a", 2, "lb-c2.example.com:7687", memgraph.HealthUp, memgraph.RoleLeader),
		withBolt(dataRow("a", 0, memgraph.HealthUp, memgraph.RoleReplica), "lb-1.example.com:7687"),
		dataRow("a", 1, memgraph.HealthUp, memgraph.RoleMain),
	}
	if diff := cmp.Diff(want, showInstances(t, ctx, c1), ignoreLastResp); diff != "" {
		t.Errorf("after the write steps (-want +got)\n%s", diff)
	}

	for _, q := range w.Queries() {
		if q.ExplicitTx {
			t.Errorf("query sent in an explicit transaction: %+v", q)
		}
		if q.Failed {
			t.Errorf("query refused: %+v", q)
		}
	}
	assertNoMisuse(t, w)
}

// TestRenderedQueriesAreWhatIsSent: the planner prints the *Query functions' output; the
// simulator's log proves it is byte-for-byte what went over Bolt.
func TestRenderedQueriesAreWhatIsSent(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "q", 1, 1)
	pool := newPool(t, w)
	ctx := testContext(t)
	c := pool.Client(coordAddr("q", 1))
	bootstrap(t, ctx, pool, "q", 1, 1)
	if _, err := c.ShowInstances(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range w.QueryLog(coordSpec("q", 1).Host) {
		got = append(got, q.Text)
	}
	want := []string{
		memgraph.AddCoordinatorQuery(1, coordConfig("q", 1)),
		memgraph.RegisterInstanceQuery("instance_1", instanceConfig("q", 0)),
		memgraph.SetInstanceToMainQuery("instance_1"),
		memgraph.ShowInstancesQuery,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestBackQuotedInstanceName: a name that is not a plain identifier is back-quoted and shows up
// in SHOW INSTANCES without the quotes, and later commands find it.
func TestBackQuotedInstanceName(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "bq", 1, 1)
	pool := newPool(t, w)
	ctx := testContext(t)
	c := pool.Client(coordAddr("bq", 1))
	const name = "memgraph-data-0"
	if err := c.RegisterInstance(ctx, name, instanceConfig("bq", 0)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetInstanceToMain(ctx, name); err != nil {
		t.Fatal(err)
	}
	got := showInstances(t, ctx, c)
	if len(got) != 2 || got[1].Name != name || got[1].Role != memgraph.RoleMain {
		t.Fatalf("SHOW INSTANCES = %+v", got)
	}
	if err := c.DemoteInstance(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := c.UnregisterInstance(ctx, name); err != nil {
		t.Fatal(err)
	}
	assertNoMisuse(t, w)
}

// TestExplicitTransactionIsRefused shows why the client never uses transactions: the same
// SHOW INSTANCES inside BEGIN … COMMIT is refused (the client itself cannot be made to do it).
func TestExplicitTransactionIsRefused(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "tx", 1, 0)
	ctx := testContext(t)
	driver, err := neo4j.NewDriverWithContext("bolt://"+w.Resolve(coordAddr("tx", 1)), neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(ctx)
	_, err = neo4j.ExecuteQuery(ctx, driver, memgraph.ShowInstancesQuery, nil, neo4j.EagerResultTransformer)
	var ne *neo4j.Neo4jError
	if !asNeo4jError(err, &ne) || ne.Msg != explicitTxText {
		t.Fatalf("ExecuteQuery error = %v, want the explicit-transaction refusal", err)
	}
	misuses := w.Misuses()
	if len(misuses) != 1 || misuses[0].Kind != sim.MisuseQueryInTransaction {
		t.Fatalf("misuses = %+v", misuses)
	}

	// The pooled client on the same coordinator is auto-commit.
	pool := newPool(t, w)
	if _, err := pool.Client(coordAddr("tx", 1)).ShowInstances(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(w.Misuses()); n != 1 {
		t.Errorf("the client added %d misuses", n-1)
	}
}

const explicitTxText = "Managing coordinators is not allowed in multicommand transactions. A multicommand transaction, also known as an explicit transaction, groups multiple commands into a single atomic operation. Instead, please use an implicit transaction, also known as an auto committing transaction, in order to execute this particularquery. For more details, visit https://memgraph.com/docs"

// TestInvalidInputSendsNothing: the Client validates before it even resolves the address, so
// invalid input reaches neither the resolver nor the network.
func TestInvalidInputSendsNothing(t *testing.T) {
	resolved := 0
	pool := bolt.NewPool(bolt.PoolOptions{Resolver: memgraph.ResolverFunc(func(a string) string { resolved++; return a })})
	defer pool.Close()
	c := pool.Client("127.0.0.1:1")
	ctx := t.Context()
	errs := map[string]error{
		"register":           c.RegisterInstance(ctx, "bad name", memgraph.InstanceConfig{BoltServer: "h:1", ManagementServer: "h:2", ReplicationServer: "h:3"}),
		"add":                c.AddCoordinator(ctx, 0, memgraph.CoordinatorConfig{BoltServer: "h:1", CoordinatorServer: "h:2", ManagementServer: "h:3"}),
		"main":               c.SetInstanceToMain(ctx, ""),
		"demote":             c.DemoteInstance(ctx, "x`"),
		"unregister":         c.UnregisterInstance(ctx, "x y"),
		"remove":             c.RemoveCoordinator(ctx, -1),
		"update instance":    c.UpdateInstanceConfig(ctx, "instance_1", "[::1]:7687"),
		"update coordinator": c.UpdateCoordinatorConfig(ctx, 0, "h:1"),
	}
	for name, err := range errs {
		var e *memgraph.Error
		if memgraph.KindOf(err) != memgraph.KindInvalidArgument || !errors.As(err, &e) || e.Address != "127.0.0.1:1" {
			t.Errorf("%s: got %v, want KindInvalidArgument naming the address", name, err)
		}
	}
	if resolved != 0 || pool.Stats().Opened != 0 {
		t.Errorf("invalid input reached the resolver %d times and opened %d drivers", resolved, pool.Stats().Opened)
	}
}

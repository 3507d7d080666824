package bolt_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// SHOW REPLICAS on the MAIN data instance lists the other registered instances: a caught-up one
// (ready), one behind (recovering: behind is the replica's timestamp minus the MAIN's, ≤ 0), and a
// dead one (invalid, at the timestamp the MAIN last heard of).
func TestShowReplicasOnMain(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "rp", 1, 4)
	pool := newPool(t, w)
	ctx := testContext(t)
	bootstrap(t, ctx, pool, "rp", 1, 4)
	if err := w.Commit("memgraph", 5); err != nil {
		t.Fatal(err)
	}
	if err := w.SetLag(dataHost("rp", 2), "memgraph", 2); err != nil {
		t.Fatal(err)
	}
	if err := w.Kill(dataHost("rp", 3)); err != nil {
		t.Fatal(err)
	}

	got, err := pool.Client(dataAddr("rp", 0)).ShowReplicas(ctx)
	if err != nil {
		t.Fatalf("SHOW REPLICAS on the MAIN: %v", err)
	}
	replica := func(i int, dbs map[string]memgraph.ReplicaDatabase) memgraph.Replica {
		return memgraph.Replica{Name: instanceName(i), SocketAddress: instanceConfig("rp", i).ReplicationServer,
			SyncMode: memgraph.SyncModeSync, Databases: dbs}
	}
	want := []memgraph.Replica{
		replica(1, map[string]memgraph.ReplicaDatabase{"memgraph": {Timestamp: 5, Status: memgraph.ReplicaReady}}),
		replica(2, map[string]memgraph.ReplicaDatabase{"memgraph": {Timestamp: 3, Behind: -2, Status: memgraph.ReplicaRecovery}}),
		replica(3, map[string]memgraph.ReplicaDatabase{"memgraph": {Timestamp: 5, Status: memgraph.ReplicaInvalid}}),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	assertNoMisuse(t, w)
}

// SHOW REPLICAS is a read: after the MAIN dropped the pooled connection, the same call
// succeeds on a fresh one.
func TestShowReplicasRetriesADeadPooledConnection(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "rd", 1, 2)
	main := dataAddr("rd", 0)
	proxy := startProxy(t, func() string { return w.Resolve(main) })
	pool := newPool(t, proxiedResolver(w, main, proxy))
	ctx := testContext(t)
	bootstrap(t, ctx, pool, "rd", 1, 2)
	c := pool.Client(main)
	if _, err := c.ShowReplicas(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.DropConnections(dataHost("rd", 0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the drop to reach the client", func() bool { return proxy.open.Load() == 0 })
	got, err := c.ShowReplicas(ctx)
	if err != nil {
		t.Fatalf("SHOW REPLICAS after the drop: %v", err)
	}
	if len(got) != 1 || got[0].Name != instanceName(1) {
		t.Errorf("SHOW REPLICAS = %+v, want instance_2 alone", got)
	}
	if n := proxy.accepted.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the dropped one and its replacement)", n)
	}
}

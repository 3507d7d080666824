package bolt_test

import (
	"context"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
)

// benchCluster is a bootstrapped 3+3 cluster; benchmarks query coordinator 1 (the leader).
func benchCluster(b *testing.B) (*bolt.Pool, func() *bolt.Pool, string) {
	w := newWorld(b)
	startProcesses(b, w, "bench", 3, 3)
	pool := newPool(b, w)
	bootstrap(b, context.Background(), pool, "bench", 3, 3)
	fresh := func() *bolt.Pool { return bolt.NewPool(bolt.PoolOptions{Resolver: w}) }
	return pool, fresh, coordAddr("bench", 1)
}

// BenchmarkShowInstancesPooled is one SHOW INSTANCES round trip (6 rows) on a pooled
// connection: the floor later sync benchmarks are compared against.
func BenchmarkShowInstancesPooled(b *testing.B) {
	pool, _, addr := benchCluster(b)
	c := pool.Client(addr)
	ctx := context.Background()
	if _, err := c.ShowInstances(ctx); err != nil { // warm the connection
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ShowInstances(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShowInstancesFreshConnection pays TCP connect, Bolt handshake, HELLO/LOGON and
// GOODBYE for every SHOW INSTANCES: what every sync would cost without the pool.
func BenchmarkShowInstancesFreshConnection(b *testing.B) {
	_, fresh, addr := benchCluster(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p := fresh()
		if _, err := p.Client(addr).ShowInstances(ctx); err != nil {
			b.Fatal(err)
		}
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

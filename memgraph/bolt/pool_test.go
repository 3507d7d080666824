package bolt_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// proxiedCoordinator starts a bootstrapped 1+1 cluster whose coordinator is reached through a
// counting proxy.
func proxiedCoordinator(t *testing.T, cluster string, mutate ...func(*bolt.PoolOptions)) (*sim.World, *countingProxy, *bolt.Pool, memgraph.Client) {
	w := newWorld(t)
	startProcesses(t, w, cluster, 1, 1)
	addr := coordAddr(cluster, 1)
	proxy := startProxy(t, func() string { return w.Resolve(addr) })
	pool := newPool(t, proxiedResolver(w, addr, proxy), mutate...)
	bootstrap(t, testContext(t), pool, cluster, 1, 1)
	return w, proxy, pool, pool.Client(addr)
}

// TestPooledConnectionIsReused: a converged sync pays no new TCP or Bolt handshake. Many calls
// through the Pool, including through freshly obtained Clients and after a refusal, share one
// connection.
func TestPooledConnectionIsReused(t *testing.T) {
	_, proxy, pool, c := proxiedCoordinator(t, "reuse")
	ctx := testContext(t)
	before := proxy.accepted.Load()
	if before != 1 {
		t.Fatalf("bootstrap opened %d connections, want 1", before)
	}
	for range 5 {
		if _, err := c.ShowInstances(ctx); err != nil {
			t.Fatal(err)
		}
	}
	again := pool.Client(coordAddr("reuse", 1))
	if err := again.SetInstanceToMain(ctx, "instance_1"); memgraph.KindOf(err) != memgraph.KindMainExists {
		t.Fatalf("got %v, want KindMainExists", err)
	}
	if _, err := again.ShowInstances(ctx); err != nil {
		t.Fatal(err)
	}
	if n := proxy.accepted.Load(); n != 1 {
		t.Errorf("%d connections opened for sequential calls, want 1", n)
	}
	if s := pool.Stats(); s.Opened != 1 || s.Addresses != 1 {
		t.Errorf("stats = %+v", s)
	}
}

// TestIdleConnectionsAreEvicted: an address unused for IdleTimeout has its connections closed;
// the next call dials again.
func TestIdleConnectionsAreEvicted(t *testing.T) {
	_, proxy, pool, c := proxiedCoordinator(t, "idle", func(o *bolt.PoolOptions) { o.IdleTimeout = 50 * time.Millisecond })
	eventually(t, "the idle connection to close", func() bool { return proxy.open.Load() == 0 })
	if s := pool.Stats(); s.Evicted != 1 || s.Addresses != 0 {
		t.Errorf("stats after eviction = %+v", s)
	}
	if _, err := c.ShowInstances(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if n := proxy.accepted.Load(); n != 2 {
		t.Errorf("%d connections opened, want 2 (one before, one after eviction)", n)
	}
}

// TestBusyAddressIsNotEvicted: a query slower than IdleTimeout keeps its connection (evicting
// it would close the driver under the query and fail it).
func TestBusyAddressIsNotEvicted(t *testing.T) {
	w, _, _, c := proxiedCoordinator(t, "busy", func(o *bolt.PoolOptions) { o.IdleTimeout = 20 * time.Millisecond })
	if err := w.SetLatency(coordSpec("busy", 1).Host, 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ShowInstances(testContext(t)); err != nil {
		t.Fatalf("a query outliving IdleTimeout failed: %v", err)
	}
}

// TestDeadlineAgainstSlowInstance: the caller's deadline bounds a query on a slow coordinator;
// the error says the outcome is unknown (KindTimeout), and the pool recovers once it is fast.
func TestDeadlineAgainstSlowInstance(t *testing.T) {
	w, _, _, c := proxiedCoordinator(t, "slow")
	host := coordSpec("slow", 1).Host
	// Were the deadline ignored, the calls would succeed after the latency instead of failing.
	if err := w.SetLatency(host, time.Second); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"read", func(ctx context.Context) error { _, err := c.ShowInstances(ctx); return err }},
		{"write", func(ctx context.Context) error { return c.DemoteInstance(ctx, "instance_1") }},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := call.run(ctx)
		cancel()
		if memgraph.KindOf(err) != memgraph.KindTimeout || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: got %v (kind %v), want KindTimeout wrapping DeadlineExceeded", call.name, err, memgraph.KindOf(err))
		}
	}
	if err := w.SetLatency(host, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ShowInstances(testContext(t)); err != nil {
		t.Fatalf("after latency is gone: %v", err)
	}
}

// TestDeadlineAgainstUnreachableAddress: a refused dial and a peer that accepts but never
// completes the Bolt handshake are both KindUnreachable, within the deadline.
func TestDeadlineAgainstUnreachableAddress(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusing := closed.Addr().String()
	closed.Close()

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() { // accept and hold connections without ever answering
		var held []net.Conn
		for {
			conn, err := silent.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, conn)
		}
	}()

	pool := newPool(t, memgraph.StaticResolver{"refusing:7687": refusing, "silent:7687": silent.Addr().String()})
	for _, addr := range []string{"refusing:7687", "silent:7687"} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		_, err := pool.Client(addr).ShowInstances(ctx)
		cancel()
		var e *memgraph.Error
		if !errors.As(err, &e) || e.Kind != memgraph.KindUnreachable || e.Address != addr {
			t.Errorf("%s: got %v, want KindUnreachable naming the address", addr, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s returned after %v: the deadline was not honoured", addr, d)
		}
	}
}

// TestDroppedConnectionRecovers: after the server drops every connection, a read recovers in
// the same call (it retries once on a fresh connection); a write is never retried — it fails
// as KindUnreachable and the next call works.
func TestDroppedConnectionRecovers(t *testing.T) {
	w, proxy, _, c := proxiedCoordinator(t, "drop")
	ctx := testContext(t)
	host := coordSpec("drop", 1).Host

	if err := w.DropConnections(host); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the drop to reach the client", func() bool { return proxy.open.Load() == 0 })
	if _, err := c.ShowInstances(ctx); err != nil {
		t.Fatalf("read after drop: %v", err)
	}
	if n := proxy.accepted.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}

	if err := w.DropConnections(host); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the drop to reach the client", func() bool { return proxy.open.Load() == 0 })
	w.ResetLog()
	err := c.DemoteInstance(ctx, "instance_1")
	if memgraph.KindOf(err) != memgraph.KindUnreachable {
		t.Fatalf("write on the dropped connection: got %v, want KindUnreachable", err)
	}
	if log := w.Queries(); len(log) != 0 {
		t.Fatalf("the write was retried or resent: %+v", log)
	}
	if _, err := c.ShowInstances(ctx); err != nil {
		t.Fatalf("call after the failed write: %v", err)
	}
}

// TestLivenessCheckReplacesDeadConnectionBeforeWrite: with a liveness check, a write after the
// server dropped the idle connection goes out on a fresh one and succeeds.
func TestLivenessCheckReplacesDeadConnectionBeforeWrite(t *testing.T) {
	w, proxy, _, c := proxiedCoordinator(t, "live", func(o *bolt.PoolOptions) { o.LivenessCheckAfter = time.Nanosecond })
	if err := w.DropConnections(coordSpec("live", 1).Host); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the drop to reach the client", func() bool { return proxy.open.Load() == 0 })
	if err := c.DemoteInstance(testContext(t), "instance_1"); err != nil {
		t.Fatalf("write after drop with liveness check: %v", err)
	}
	if n := proxy.accepted.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

func TestClosedPool(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "cl", 1, 0)
	pool := bolt.NewPool(bolt.PoolOptions{Resolver: w})
	c := pool.Client(coordAddr("cl", 1))
	if _, err := c.ShowInstances(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pool.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.ShowInstances(testContext(t)); memgraph.KindOf(err) != memgraph.KindClosed {
		t.Fatalf("after Close: %v", err)
	}
}

// TestLoggerAndBasicAuth: the optional logger sees the pool open an address and every query
// with its outcome; basic auth credentials are accepted (coordinators ignore them).
func TestLoggerAndBasicAuth(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "log", 1, 1)
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	pool := newPool(t, w, func(o *bolt.PoolOptions) {
		o.Logger, o.Username, o.Password = logger, "admin", "secret"
	})
	ctx := testContext(t)
	c := pool.Client(coordAddr("log", 1))
	if _, err := c.ShowInstances(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.DemoteInstance(ctx, "nobody"); memgraph.KindOf(err) != memgraph.KindNoSuchInstance {
		t.Fatalf("got %v", err)
	}
	out := buf.String()
	for _, want := range []string{
		`msg="memgraph: opened connection pool"`,
		`msg="memgraph: query" address=coord-1.log.svc:7687`,
		`query="SHOW INSTANCES"`,
		`query="DEMOTE INSTANCE nobody"`,
		`kind="no such instance"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

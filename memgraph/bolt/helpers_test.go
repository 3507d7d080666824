package bolt_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// Simulated processes use the ports of the Helm chart: every instance has its own host.
const (
	boltPort        = 7687
	managementPort  = 10000
	coordinatorPort = 12000
	replicationPort = 20000
)

func coordSpec(cluster string, id int) sim.CoordinatorSpec {
	return sim.CoordinatorSpec{ID: id, Host: fmt.Sprintf("coord-%d.%s.svc", id, cluster),
		BoltPort: boltPort, ManagementPort: managementPort, CoordinatorPort: coordinatorPort}
}

func coordAddr(cluster string, id int) string {
	return fmt.Sprintf("coord-%d.%s.svc:%d", id, cluster, boltPort)
}

func coordConfig(cluster string, id int) memgraph.CoordinatorConfig {
	host := coordSpec(cluster, id).Host
	return memgraph.CoordinatorConfig{
		BoltServer:        fmt.Sprintf("%s:%d", host, boltPort),
		CoordinatorServer: fmt.Sprintf("%s:%d", host, coordinatorPort),
		ManagementServer:  fmt.Sprintf("%s:%d", host, managementPort),
	}
}

func dataHost(cluster string, i int) string { return fmt.Sprintf("data-%d.%s.svc", i, cluster) }

// dataAddr is the Bolt address of data instance i, as SHOW INSTANCES reports it.
func dataAddr(cluster string, i int) string {
	return fmt.Sprintf("%s:%d", dataHost(cluster, i), boltPort)
}

func instanceName(i int) string { return fmt.Sprintf("instance_%d", i+1) }

func instanceConfig(cluster string, i int) memgraph.InstanceConfig {
	host := dataHost(cluster, i)
	return memgraph.InstanceConfig{
		BoltServer:        fmt.Sprintf("%s:%d", host, boltPort),
		ManagementServer:  fmt.Sprintf("%s:%d", host, managementPort),
		ReplicationServer: fmt.Sprintf("%s:%d", host, replicationPort),
	}
}

// startProcesses starts coords coordinators (ids 1..coords) and data instances (0..data-1) of
// one cluster, without any registration: every coordinator leads its own one-member cluster.
func startProcesses(t testing.TB, w *sim.World, cluster string, coords, data int) {
	t.Helper()
	for id := 1; id <= coords; id++ {
		if err := w.StartCoordinator(coordSpec(cluster, id)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range data {
		spec := sim.DataSpec{Host: dataHost(cluster, i), BoltPort: boltPort, ManagementPort: managementPort}
		if err := w.StartData(spec); err != nil {
			t.Fatal(err)
		}
	}
}

// bootstrap does what the hook does for a new cluster, through coordinator 1: ADD every
// coordinator (itself first), REGISTER every data instance, and make instance_1 MAIN.
func bootstrap(t testing.TB, ctx context.Context, pool *bolt.Pool, cluster string, coords, data int) {
	t.Helper()
	c := pool.Client(coordAddr(cluster, 1))
	for id := 1; id <= coords; id++ {
		if err := c.AddCoordinator(ctx, id, coordConfig(cluster, id)); err != nil {
			t.Fatalf("ADD COORDINATOR %d: %v", id, err)
		}
	}
	for i := range data {
		if err := c.RegisterInstance(ctx, instanceName(i), instanceConfig(cluster, i)); err != nil {
			t.Fatalf("REGISTER INSTANCE %s: %v", instanceName(i), err)
		}
	}
	if data > 0 {
		if err := c.SetInstanceToMain(ctx, instanceName(0)); err != nil {
			t.Fatalf("SET INSTANCE TO MAIN: %v", err)
		}
	}
}

// newWorld returns a World closed at the end of the test.
func newWorld(t testing.TB, opts ...sim.Option) *sim.World {
	w := sim.NewWorld(opts...)
	t.Cleanup(w.Close)
	return w
}

// newManualWorld returns a World on a manual clock, and the clock.
func newManualWorld(t testing.TB) (*sim.World, *sim.ManualClock) {
	clock := sim.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return newWorld(t, sim.WithClock(clock)), clock
}

// newPool returns a Pool resolving through r, closed at the end of the test (before the world,
// since cleanups run last-in first-out).
func newPool(t testing.TB, r memgraph.Resolver, mutate ...func(*bolt.PoolOptions)) *bolt.Pool {
	opts := bolt.PoolOptions{Resolver: r}
	for _, m := range mutate {
		m(&opts)
	}
	p := bolt.NewPool(opts)
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Pool.Close: %v", err)
		}
	})
	return p
}

func assertNoMisuse(t testing.TB, w *sim.World) {
	t.Helper()
	for _, m := range w.Misuses() {
		t.Errorf("protocol misuse: %+v", m)
	}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// countingProxy is a TCP proxy in front of one simulated instance. It counts the connections
// the client opens (each one is a TCP and Bolt handshake) and how many are open, so tests can
// prove pooling and eviction from the outside, and records what the client sent on each. It
// dials the target anew per connection, so it follows restarts of the instance.
type countingProxy struct {
	ln       net.Listener
	target   func() string
	accepted atomic.Int64
	open     atomic.Int64
	wg       sync.WaitGroup

	mu   sync.Mutex
	sent [][]byte // per proxied connection, in accept order: the bytes the client sent
}

// Sent returns the bytes the client sent on the i-th proxied connection.
func (p *countingProxy) Sent(i int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i >= len(p.sent) {
		return nil
	}
	return bytes.Clone(p.sent[i])
}

// recorder appends what the client sends on connection i to sent[i].
type recorder struct {
	p *countingProxy
	i int
}

func (r recorder) Write(b []byte) (int, error) {
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	r.p.sent[r.i] = append(r.p.sent[r.i], b...)
	return len(b), nil
}

func startProxy(t testing.TB, target func() string) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *countingProxy) Addr() string { return p.ln.Addr().String() }

func (p *countingProxy) serve() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		server, err := net.Dial("tcp", p.target())
		if err != nil {
			client.Close()
			continue
		}
		p.open.Add(1)
		p.mu.Lock()
		rec := recorder{p: p, i: len(p.sent)}
		p.sent = append(p.sent, nil)
		p.mu.Unlock()
		p.wg.Add(1)
		go p.pipe(client, server, rec)
	}
}

// pipe copies both ways; when either side closes, both are closed, so a server-side drop
// reaches the client as it would without the proxy.
func (p *countingProxy) pipe(client, server net.Conn, rec recorder) {
	defer p.wg.Done()
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			client.Close()
			server.Close()
			p.open.Add(-1)
		})
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(server, io.TeeReader(client, rec)); closeBoth(); done <- struct{}{} }()
	go func() { io.Copy(client, server); closeBoth(); done <- struct{}{} }()
	<-done
	<-done
}

// proxiedResolver sends advertised to the proxy and everything else through the world.
func proxiedResolver(w *sim.World, advertised string, p *countingProxy) memgraph.Resolver {
	return memgraph.ResolverFunc(func(a string) string {
		if a == advertised {
			return p.Addr()
		}
		return w.Resolve(a)
	})
}

// eventually polls cond until it holds or 5 s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

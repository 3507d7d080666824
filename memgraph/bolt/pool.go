// Package bolt is the production memgraph.Connector: a pool of neo4j driver connections to the
// coordinators (and to a MAIN data instance for SHOW REPLICAS), the Bolt client that runs the
// queries on them (read-only reads retried once on a dead pooled connection, writes never), the
// driver's log, TLS dialing verified against a cluster's CA, and per-cluster credentials. It is
// the only package that imports the neo4j driver; everything it returns is a memgraph type.
package bolt

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// Defaults of PoolOptions. DefaultIdleTimeout is twice the resync period of the controllers
// whose syncs query Memgraph (60 s, manifests/): a steady cluster is synced about once a
// period, later when Metacontroller's queue is long, and its sync must find its connections
// open: with an idle timeout of one period, every steady sync of a fleet would dial and
// handshake again inside the first read's share of the sync budget.
const (
	DefaultIdleTimeout        = 2 * time.Minute
	DefaultMaxConnsPerAddress = 2
	DefaultDialTimeout        = 5 * time.Second
	DefaultLivenessCheckAfter = 10 * time.Second
	DefaultQueryTimeout       = 30 * time.Second
	DefaultForceResetTimeout  = 2 * time.Second
)

// closeTimeout bounds the GOODBYE sent when an evicted or closed driver shuts its connections.
const closeTimeout = 2 * time.Second

// PoolOptions configures a Pool. The zero value is usable: identity resolution, no auth, defaults.
type PoolOptions struct {
	// Resolver maps advertised addresses to dialable ones; nil means memgraph.IdentityResolver.
	Resolver memgraph.Resolver
	// IdleTimeout: the connections to an address nobody queried for this long are closed
	// (default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// MaxConnsPerAddress caps open Bolt connections per dialed address; a caller beyond the cap
	// waits for a free one, bounded by its context (default DefaultMaxConnsPerAddress).
	MaxConnsPerAddress int
	// DialTimeout bounds the TCP connect; the context deadline wins if earlier (default
	// DefaultDialTimeout).
	DialTimeout time.Duration
	// LivenessCheckAfter: a pooled connection idle longer than this is checked with a Bolt RESET
	// round trip before reuse, so a connection the server or a NAT dropped is replaced before a
	// write is sent on it. Negative disables the check (default DefaultLivenessCheckAfter).
	LivenessCheckAfter time.Duration
	// QueryTimeout bounds a call whose context has no deadline. Negative means no bound
	// (default DefaultQueryTimeout).
	QueryTimeout time.Duration
	// ForceResetTimeout bounds FORCE RESET CLUSTER STATE, which does not return before the
	// leader's reconciliation succeeds or its leadership is lost (retrying with backoff up to a
	// minute meanwhile): past it the call ends with KindTimeout, meaning "still in progress".
	// The caller's deadline wins if earlier (default DefaultForceResetTimeout).
	ForceResetTimeout time.Duration
	// Username and Password enable basic auth when Username is set, for Clients of a Connector
	// without credentials of its own (Pool.WithAuth). Coordinators ignore auth in Memgraph
	// 3.12; data instances require it only once a user exists.
	Username, Password string
	// Logger receives pool events (debug: every query; info: opened and evicted addresses).
	// nil discards them.
	Logger *slog.Logger
}

func (o PoolOptions) withDefaults() PoolOptions {
	if o.Resolver == nil {
		o.Resolver = memgraph.IdentityResolver{}
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxConnsPerAddress <= 0 {
		o.MaxConnsPerAddress = DefaultMaxConnsPerAddress
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.LivenessCheckAfter == 0 {
		o.LivenessCheckAfter = DefaultLivenessCheckAfter
	}
	if o.QueryTimeout == 0 {
		o.QueryTimeout = DefaultQueryTimeout
	}
	if o.ForceResetTimeout <= 0 {
		o.ForceResetTimeout = DefaultForceResetTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Pool is the production Connector. It keeps one neo4j driver per dialed address; each driver
// owns a small pool of Bolt connections that survive across calls (and across hook requests,
// since the hook keeps one Pool for the process), so a converged sync pays no TCP or Bolt
// handshake. A janitor closes the driver of an address unused for IdleTimeout. Pool is safe for
// concurrent use.
type Pool struct {
	opts PoolOptions

	mu      sync.Mutex
	entries map[poolKey]*poolEntry
	closed  bool
	opened  uint64
	evicted uint64

	stop chan struct{}
	done chan struct{}
}

// target is where and how a Client connects: the address it dials (resolved) and the one it
// was given (advertised), the TLS trust (nil: plaintext) and its own credentials (nil: the
// PoolOptions' ones).
type target struct {
	dial, address string
	tls           *memgraph.BoltTLS
	auth          *credentials
}

// poolKey identifies a driver: the dialed address; over TLS, the advertised host verified and
// the CA bundle trusted; with credentials of its own, their fingerprint. Plaintext entries
// leave the TLS fields empty and entries with the pool-wide credentials the fingerprint, so a
// Client never reuses a connection made with another trust or as another user.
type poolKey struct {
	dial     string
	tlsHost  string
	tlsTrust [32]byte
	auth     [32]byte
}

func (t target) key() poolKey {
	k := poolKey{dial: t.dial}
	if t.tls != nil {
		k.tlsHost, k.tlsTrust = hostOf(t.address), t.tls.Fingerprint()
	}
	if t.auth != nil {
		k.auth = t.auth.id
	}
	return k
}

type poolEntry struct {
	driver   neo4j.DriverWithContext
	inUse    int // guarded by Pool.mu
	lastUsed time.Time

	// The first connection of a driver must not be dialed concurrently with another: the
	// driver's connector lazily initialises its dial function on first use without a lock
	// (neo4j-go-driver v5.28.4 internal/connector Connect), a data race. Until one dial has
	// happened, queries on a new driver take turns through gate.
	gate chan struct{}
	warm atomic.Bool
}

// takeTurn waits, bounded by ctx, until the caller may use the driver. The returned done must
// be called with whether the caller's attempt reached the dial.
func (e *poolEntry) takeTurn(ctx context.Context) (done func(dialed bool), err error) {
	noop := func(bool) {}
	if e.warm.Load() {
		return noop, nil
	}
	select {
	case e.gate <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if e.warm.Load() {
		<-e.gate
		return noop, nil
	}
	return func(dialed bool) {
		if dialed {
			e.warm.Store(true)
		}
		<-e.gate
	}, nil
}

// PoolStats is a snapshot of a Pool, for metrics and tests.
type PoolStats struct {
	Addresses int    // open drivers: one per dialed address, trust (plaintext, TLS host and CA) and credentials
	Opened    uint64 // drivers opened since NewPool
	Evicted   uint64 // drivers closed for idleness
}

// NewPool returns a Pool; Close it to release its connections and janitor.
func NewPool(opts PoolOptions) *Pool {
	p := &Pool{
		opts:    opts.withDefaults(),
		entries: make(map[poolKey]*poolEntry),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go p.janitor()
	return p
}

// Client returns a Client for the instance advertised at address ("host:port"), plaintext with
// the PoolOptions' credentials. It is cheap: connections are made, and the address resolved,
// when a query runs.
func (p *Pool) Client(address string) memgraph.Client {
	return &client{pool: p, address: address}
}

// Stats reports the pool's current state.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Addresses: len(p.entries), Opened: p.opened, Evicted: p.evicted}
}

// Close closes every connection (sending Bolt GOODBYE) and stops the janitor. Calls made after
// Close fail with memgraph.KindClosed. Close is idempotent.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	entries := p.entries
	p.entries = map[poolKey]*poolEntry{}
	p.mu.Unlock()

	close(p.stop)
	<-p.done
	var errs []error
	for _, e := range entries {
		errs = append(errs, closeDriver(e.driver))
	}
	return errors.Join(errs...)
}

// acquire returns the entry for a target, opening its driver on first use, and marks it in use
// so the janitor leaves it alone until release. ctx is the caller's, for the log.
func (p *Pool) acquire(ctx context.Context, t target) (*poolEntry, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, &memgraph.Error{Kind: memgraph.KindClosed, Message: "the connection pool is closed"}
	}
	key := t.key()
	e := p.entries[key]
	if e == nil {
		driver, err := p.newDriver(t)
		if err != nil {
			return nil, &memgraph.Error{Kind: memgraph.KindInvalidArgument, Message: "cannot dial " + t.dial, Err: err}
		}
		e = &poolEntry{driver: driver, gate: make(chan struct{}, 1)}
		p.entries[key] = e
		p.opened++
		p.opts.Logger.InfoContext(ctx, "memgraph: opened connection pool", "address", t.dial, "tls", t.tls != nil,
			"own_credentials", t.auth != nil)
	}
	e.inUse++
	return e, nil
}

func (p *Pool) release(e *poolEntry) {
	p.mu.Lock()
	e.inUse--
	e.lastUsed = time.Now()
	p.mu.Unlock()
}

// newDriver opens a driver for t. Over TLS it uses the bolt+ssc scheme only so that the driver
// leaves verification to clientConfig, which checks the chain against the CA for the
// advertised host (the driver would check the dialed one).
func (p *Pool) newDriver(t target) (neo4j.DriverWithContext, error) {
	auth := p.authFor(t.auth)
	if t.tls == nil {
		return neo4j.NewDriverWithContext("bolt://"+t.dial, auth, p.configure)
	}
	tlsConfig := clientConfig(t.tls, t.address)
	return neo4j.NewDriverWithContext("bolt+ssc://"+t.dial, auth, p.configure, func(c *config.Config) {
		c.TlsConfig = tlsConfig
	})
}

func (p *Pool) configure(c *config.Config) {
	c.MaxConnectionPoolSize = p.opts.MaxConnsPerAddress
	c.SocketConnectTimeout = p.opts.DialTimeout
	c.ConnectionLivenessCheckTimeout = p.opts.LivenessCheckAfter
	if p.opts.LivenessCheckAfter < 0 {
		c.ConnectionLivenessCheckTimeout = math.MaxInt64
	}
	// The caller's context bounds acquisition; this only caps a context without deadline.
	c.ConnectionAcquisitionTimeout = p.opts.QueryTimeout
	if p.opts.QueryTimeout < 0 {
		c.ConnectionAcquisitionTimeout = -1
	}
	c.TelemetryDisabled = true // Memgraph speaks Bolt 5.2, which has no TELEMETRY
	c.UserAgent = "memgraph-hooks " + neo4j.UserAgent
	c.Log = driverLog{p.opts.Logger}
}

// janitor evicts drivers idle for IdleTimeout. It checks four times per timeout, so an idle
// address is closed between IdleTimeout and 1.25×IdleTimeout after its last use.
func (p *Pool) janitor() {
	defer close(p.done)
	tick := time.NewTicker(max(p.opts.IdleTimeout/4, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-tick.C:
			p.evictIdle(now)
		}
	}
}

func (p *Pool) evictIdle(now time.Time) {
	var idle []neo4j.DriverWithContext
	p.mu.Lock()
	for key, e := range p.entries {
		if e.inUse == 0 && now.Sub(e.lastUsed) >= p.opts.IdleTimeout {
			idle = append(idle, e.driver)
			delete(p.entries, key)
			p.evicted++
			p.opts.Logger.Info("memgraph: closed idle connection pool", "address", key.dial, "tls", key.tlsHost != "",
				"own_credentials", key.auth != [32]byte{})
		}
	}
	p.mu.Unlock()
	for _, d := range idle {
		if err := closeDriver(d); err != nil {
			p.opts.Logger.Debug("memgraph: closing idle connections", "error", err)
		}
	}
}

func closeDriver(d neo4j.DriverWithContext) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return d.Close(ctx)
}

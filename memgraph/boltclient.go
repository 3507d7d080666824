package memgraph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/db"
)

// boltClient is the Pool's Client for one advertised coordinator address, over TLS when tls is
// set.
type boltClient struct {
	pool    *Pool
	address string
	tls     *BoltTLS
}

var _ Client = (*boltClient)(nil)
var _ Connector = (*Pool)(nil)

func (c *boltClient) ShowInstances(ctx context.Context) ([]Instance, error) {
	t, err := c.run(ctx, ShowInstancesQuery, true)
	if err != nil {
		return nil, err
	}
	out, err := parseInstances(t)
	return out, c.annotate(err, ShowInstancesQuery)
}

func (c *boltClient) ShowReplicationLag(ctx context.Context) ([]InstanceLag, error) {
	t, err := c.run(ctx, ShowReplicationLagQuery, true)
	if err != nil {
		return nil, err
	}
	out, err := parseReplicationLag(t)
	return out, c.annotate(err, ShowReplicationLagQuery)
}

func (c *boltClient) AddCoordinator(ctx context.Context, id int, cfg CoordinatorConfig) error {
	if err := ValidateCoordinator(id, cfg); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, AddCoordinatorQuery(id, cfg))
}

func (c *boltClient) RegisterInstance(ctx context.Context, name string, cfg InstanceConfig) error {
	if err := ValidateInstance(name, cfg); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, RegisterInstanceQuery(name, cfg))
}

func (c *boltClient) SetInstanceToMain(ctx context.Context, name string) error {
	if err := ValidateInstanceName(name); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, SetInstanceToMainQuery(name))
}

func (c *boltClient) DemoteInstance(ctx context.Context, name string) error {
	if err := ValidateInstanceName(name); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, DemoteInstanceQuery(name))
}

func (c *boltClient) UnregisterInstance(ctx context.Context, name string) error {
	if err := ValidateInstanceName(name); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, UnregisterInstanceQuery(name))
}

func (c *boltClient) RemoveCoordinator(ctx context.Context, id int) error {
	if err := ValidateCoordinatorID(id); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, RemoveCoordinatorQuery(id))
}

func (c *boltClient) YieldLeadership(ctx context.Context) error {
	return c.write(ctx, YieldLeadershipQuery)
}

// ForceResetClusterState runs under its own PoolOptions.ForceResetTimeout: the query blocks on
// the leader until reconciliation succeeds or the leadership is lost, and a reconciliation that
// has nothing to promote retries for as long as it takes.
func (c *boltClient) ForceResetClusterState(ctx context.Context) error {
	timeout := c.pool.opts.ForceResetTimeout
	own, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := c.write(own, ForceResetClusterStateQuery)
	var e *Error
	if errors.As(err, &e) && e.Kind == KindTimeout && ctx.Err() == nil {
		e.Message = fmt.Sprintf("no answer within %v: the leader is still reconciling the cluster (FORCE RESET CLUSTER STATE "+
			"returns once a MAIN is settled or the leadership is lost)", timeout)
	}
	return err
}

func (c *boltClient) write(ctx context.Context, query string) error {
	_, err := c.run(ctx, query, false)
	return err
}

// annotate fills in where a locally produced *Error happened.
func (c *boltClient) annotate(err error, query string) error {
	var e *Error
	if errors.As(err, &e) {
		e.Address, e.Query = c.address, query
	}
	return err
}

// run sends query as one auto-commit query and reads its whole result. A read whose pooled
// connection turns out to be dead (the server closed it while idle) is retried once on a fresh
// connection; writes are never retried, because their outcome is unknown once sent.
func (c *boltClient) run(ctx context.Context, query string, read bool) (table, error) {
	if c.pool.opts.QueryTimeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.pool.opts.QueryTimeout)
			defer cancel()
		}
	}
	dial := c.pool.opts.Resolver.Resolve(c.address)
	entry, err := c.pool.acquire(ctx, dial, c.address, c.tls)
	if err != nil {
		return table{}, c.annotate(err, query)
	}
	defer c.pool.release(entry)

	start := time.Now()
	done, err := entry.takeTurn(ctx)
	if err != nil {
		return table{}, c.classify(ctx, query, &phaseTracker{}, err)
	}
	t, tracker, err := runOnce(ctx, entry.driver, query)
	// An attempt that ended with the context still live, or that said HELLO, went through the
	// driver's dial path.
	done(err == nil || tracker.sentHello.Load() || ctx.Err() == nil)
	if err != nil && read && tracker.diedOnReuse(err) && ctx.Err() == nil {
		c.pool.opts.Logger.DebugContext(ctx, "memgraph: pooled connection was dead, retrying", "address", c.address, "query", query)
		t, tracker, err = runOnce(ctx, entry.driver, query)
	}
	if err != nil {
		err = c.classify(ctx, query, tracker, err)
	}
	c.log(ctx, query, dial, start, err)
	return t, err
}

func (c *boltClient) log(ctx context.Context, query, dial string, start time.Time, err error) {
	logger := c.pool.opts.Logger
	if !logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []any{"address", c.address, "dial", dial, "query", query, "duration", time.Since(start)}
	if err != nil {
		attrs = append(attrs, "kind", KindOf(err).String(), "error", err)
	}
	logger.DebugContext(ctx, "memgraph: query", attrs...)
}

// runOnce runs query on a session of its own (sessions are cheap; the connection comes from
// the driver's pool and goes back on Close). session.Run pipelines RUN and PULL; Memgraph
// reports an operation's failure on PULL, so the result is always read to the end.
func runOnce(ctx context.Context, driver neo4j.DriverWithContext, query string) (table, *phaseTracker, error) {
	tracker := &phaseTracker{}
	session := driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite, BoltLogger: tracker})
	// Close returns the connection to the pool (with a RESET after a failure); its error
	// cannot change the query's outcome.
	defer func() { _ = session.Close(ctx) }()

	res, err := session.Run(ctx, query, nil)
	if err != nil {
		return table{}, tracker, err
	}
	keys, err := res.Keys()
	if err != nil {
		return table{}, tracker, err
	}
	t := table{keys: keys}
	for res.Next(ctx) {
		t.rows = append(t.rows, res.Record().Values)
	}
	if err := res.Err(); err != nil {
		return table{}, tracker, err
	}
	if _, err := res.Consume(ctx); err != nil {
		return table{}, tracker, err
	}
	return t, tracker, nil
}

// classify turns a driver or context error into an *Error.
func (c *boltClient) classify(ctx context.Context, query string, tracker *phaseTracker, err error) error {
	e := &Error{Address: c.address, Query: query, Err: err}
	var ne *db.Neo4jError
	var usage *neo4j.UsageError
	switch {
	case errors.As(err, &ne):
		// A server reply is authoritative even if the context ended meanwhile.
		e.Kind, e.Code, e.Message = classify(ne.Code, ne.Msg), ne.Code, ne.Msg
	case ctx.Err() != nil:
		if tracker.sentRun.Load() {
			e.Kind, e.Message = KindTimeout, "no reply before the context ended; the query's outcome is unknown"
		} else {
			e.Kind, e.Message = KindUnreachable, "no connection before the context ended"
		}
		if !errors.Is(err, ctx.Err()) {
			e.Err = errors.Join(ctx.Err(), err)
		}
	case errors.As(err, &usage):
		e.Kind, e.Message = KindUnknown, usage.Message
	case isProtocolError(err):
		e.Kind, e.Message = KindProtocol, err.Error()
	default:
		// ConnectivityError, dial errors, EOF and resets: the connection could not be made or
		// was lost.
		e.Kind, e.Message = KindUnreachable, err.Error()
	}
	return e
}

func isProtocolError(err error) bool {
	var pe *db.ProtocolError
	return errors.As(err, &pe)
}

// phaseTracker is a Bolt logger that records which messages the driver sent on this query's
// connection: HELLO means the connection was opened for it, RUN means the query left. The
// driver gives no other way to tell a dial or handshake failure from a query failure.
type phaseTracker struct {
	sentHello atomic.Bool
	sentRun   atomic.Bool
}

func (p *phaseTracker) LogClientMessage(_ string, msg string, _ ...any) {
	switch {
	case strings.HasPrefix(msg, "RUN"):
		p.sentRun.Store(true)
	case strings.HasPrefix(msg, "HELLO"):
		p.sentHello.Store(true)
	}
}

func (p *phaseTracker) LogServerMessage(string, string, ...any) {}

// diedOnReuse reports a connection-level failure of a query sent on a pooled connection, i.e.
// one the server had closed while it sat idle. A fresh connection is not retried.
func (p *phaseTracker) diedOnReuse(err error) bool {
	var ne *db.Neo4jError
	return p.sentRun.Load() && !p.sentHello.Load() && !errors.As(err, &ne) && !isProtocolError(err)
}

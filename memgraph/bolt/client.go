package bolt

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

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// client is the Pool's memgraph.Client for one advertised address, over TLS when tls is set,
// with its own credentials when auth is set.
type client struct {
	pool    *Pool
	address string
	tls     *memgraph.BoltTLS
	auth    *credentials
}

var _ memgraph.Client = (*client)(nil)
var _ memgraph.Connector = (*Pool)(nil)

func (c *client) ShowInstances(ctx context.Context) ([]memgraph.Instance, error) {
	t, err := c.run(ctx, memgraph.ShowInstancesQuery, true)
	if err != nil {
		return nil, err
	}
	out, err := memgraph.ParseInstances(t.keys, t.rows)
	return out, c.annotate(err, memgraph.ShowInstancesQuery)
}

func (c *client) ShowReplicationLag(ctx context.Context) ([]memgraph.InstanceLag, error) {
	t, err := c.run(ctx, memgraph.ShowReplicationLagQuery, true)
	if err != nil {
		return nil, err
	}
	out, err := memgraph.ParseReplicationLag(t.keys, t.rows)
	return out, c.annotate(err, memgraph.ShowReplicationLagQuery)
}

func (c *client) ShowCoordinatorSettings(ctx context.Context) ([]memgraph.Setting, error) {
	t, err := c.run(ctx, memgraph.ShowCoordinatorSettingsQuery, true)
	if err != nil {
		return nil, err
	}
	out, err := memgraph.ParseCoordinatorSettings(t.keys, t.rows)
	return out, c.annotate(err, memgraph.ShowCoordinatorSettingsQuery)
}

func (c *client) SetCoordinatorSetting(ctx context.Context, name, value string) error {
	return c.write(ctx, memgraph.SetCoordinatorSettingQuery(name, value))
}

// ShowReplicas is a read like ShowInstances, sent to the MAIN data instance at c.address.
func (c *client) ShowReplicas(ctx context.Context) ([]memgraph.Replica, error) {
	t, err := c.run(ctx, memgraph.ShowReplicasQuery, true)
	if err != nil {
		return nil, err
	}
	out, err := memgraph.ParseReplicas(t.keys, t.rows)
	return out, c.annotate(err, memgraph.ShowReplicasQuery)
}

func (c *client) AddCoordinator(ctx context.Context, id int, cfg memgraph.CoordinatorConfig) error {
	if err := memgraph.ValidateCoordinator(id, cfg); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, memgraph.AddCoordinatorQuery(id, cfg))
}

func (c *client) RegisterInstance(ctx context.Context, name string, cfg memgraph.InstanceConfig) error {
	if err := memgraph.ValidateInstance(name, cfg); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, memgraph.RegisterInstanceQuery(name, cfg))
}

func (c *client) SetInstanceToMain(ctx context.Context, name string) error {
	if err := memgraph.ValidateInstanceName(name); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, memgraph.SetInstanceToMainQuery(name))
}

func (c *client) DemoteInstance(ctx context.Context, name string) error {
	if err := memgraph.ValidateInstanceName(name); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, memgraph.DemoteInstanceQuery(name))
}

func (c *client) UnregisterInstance(ctx context.Context, name string) error {
	if err := memgraph.ValidateInstanceName(name); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, memgraph.UnregisterInstanceQuery(name))
}

func (c *client) RemoveCoordinator(ctx context.Context, id int) error {
	if err := memgraph.ValidateCoordinatorID(id); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, memgraph.RemoveCoordinatorQuery(id))
}

func (c *client) UpdateInstanceConfig(ctx context.Context, name, boltServer string) error {
	if err := memgraph.ValidateUpdateInstanceConfig(name, boltServer); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, memgraph.UpdateInstanceConfigQuery(name, boltServer))
}

func (c *client) UpdateCoordinatorConfig(ctx context.Context, id int, boltServer string) error {
	if err := memgraph.ValidateUpdateCoordinatorConfig(id, boltServer); err != nil {
		return c.annotate(err, "")
	}
	return c.write(ctx, memgraph.UpdateCoordinatorConfigQuery(id, boltServer))
}

func (c *client) YieldLeadership(ctx context.Context) error {
	return c.write(ctx, memgraph.YieldLeadershipQuery)
}

// ForceResetClusterState runs under its own PoolOptions.ForceResetTimeout: the query blocks on
// the leader until reconciliation succeeds or the leadership is lost, and a reconciliation that
// has nothing to promote retries for as long as it takes.
func (c *client) ForceResetClusterState(ctx context.Context) error {
	timeout := c.pool.opts.ForceResetTimeout
	own, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := c.write(own, memgraph.ForceResetClusterStateQuery)
	var e *memgraph.Error
	if errors.As(err, &e) && e.Kind == memgraph.KindTimeout && ctx.Err() == nil {
		e.Message = fmt.Sprintf("no answer within %v: the leader is still reconciling the cluster (FORCE RESET CLUSTER STATE "+
			"returns once a MAIN is settled or the leadership is lost)", timeout)
	}
	return err
}

func (c *client) write(ctx context.Context, query string) error {
	_, err := c.run(ctx, query, false)
	return err
}

// annotate fills in where a locally produced *memgraph.Error happened.
func (c *client) annotate(err error, query string) error {
	var e *memgraph.Error
	if errors.As(err, &e) {
		e.Address, e.Query = c.address, query
	}
	return err
}

// table is a fully read result: column names and rows of driver values (string, int64, nil,
// bool, float64, []any, map[string]any), as memgraph's Parse* functions read them.
type table struct {
	keys []string
	rows [][]any
}

// run sends query as one auto-commit query and reads its whole result. A read whose pooled
// connection turns out to be dead (the server closed it while idle) is retried once on a fresh
// connection; writes are never retried, because their outcome is unknown once sent.
func (c *client) run(ctx context.Context, query string, read bool) (table, error) {
	return c.runParams(ctx, query, nil, read)
}

// runParams is run with query parameters, which carry values (such as credentials) that must
// not be part of the query's text: the text is what logs and errors show.
func (c *client) runParams(ctx context.Context, query string, params map[string]any, read bool) (table, error) {
	return c.runIn(ctx, "", query, params, read)
}

// runIn is runParams in a database of the instance ("" is the session's default).
func (c *client) runIn(ctx context.Context, database, query string, params map[string]any, read bool) (table, error) {
	return c.runShown(ctx, database, query, query, params, read)
}

// runShown is runIn showing shown in query's place in logs and errors: an auth statement's text
// without its password.
func (c *client) runShown(ctx context.Context, database, query, shown string, params map[string]any, read bool) (table, error) {
	if c.pool.opts.QueryTimeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.pool.opts.QueryTimeout)
			defer cancel()
		}
	}
	dial := c.pool.opts.Resolver.Resolve(c.address)
	entry, err := c.pool.acquire(ctx, target{dial: dial, address: c.address, tls: c.tls, auth: c.auth})
	if err != nil {
		return table{}, c.annotate(err, shown)
	}
	defer c.pool.release(entry)

	start := time.Now()
	done, err := entry.takeTurn(ctx)
	if err != nil {
		return table{}, c.classify(ctx, shown, &phaseTracker{}, err)
	}
	t, tracker, err := runOnce(ctx, entry.driver, database, query, params)
	// An attempt that ended with the context still live, or that said HELLO, went through the
	// driver's dial path.
	done(err == nil || tracker.sentHello.Load() || ctx.Err() == nil)
	if err != nil && read && tracker.diedOnReuse(err) && ctx.Err() == nil {
		c.pool.opts.Logger.DebugContext(ctx, "memgraph: pooled connection was dead, retrying", "address", c.address, "query", shown)
		t, tracker, err = runOnce(ctx, entry.driver, database, query, params)
	}
	if err != nil {
		err = c.classify(ctx, shown, tracker, err)
	}
	c.log(ctx, shown, dial, start, err)
	return t, err
}

func (c *client) log(ctx context.Context, query, dial string, start time.Time, err error) {
	logger := c.pool.opts.Logger
	if !logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []any{"address", c.address, "dial", dial, "query", query, "duration", time.Since(start)}
	if err != nil {
		attrs = append(attrs, "kind", memgraph.KindOf(err).String(), "error", err)
	}
	logger.DebugContext(ctx, "memgraph: query", attrs...)
}

// runOnce runs query on a session of its own, in database ("" is the server's default: the
// driver then sends no "db"); sessions are cheap, the connection comes from the driver's pool and
// goes back on Close. session.Run pipelines RUN and PULL; Memgraph
// reports an operation's failure on PULL, so the result is always read to the end.
func runOnce(ctx context.Context, driver neo4j.DriverWithContext, database, query string, params map[string]any) (table, *phaseTracker, error) {
	tracker := &phaseTracker{}
	session := driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite, BoltLogger: tracker, DatabaseName: database})
	// Close returns the connection to the pool (with a RESET after a failure); its error
	// cannot change the query's outcome.
	defer func() { _ = session.Close(ctx) }()

	res, err := session.Run(ctx, query, params)
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

// classify turns a driver or context error into a *memgraph.Error.
func (c *client) classify(ctx context.Context, query string, tracker *phaseTracker, err error) error {
	e := &memgraph.Error{Address: c.address, Query: query, Err: err}
	var ne *db.Neo4jError
	var usage *neo4j.UsageError
	switch {
	case errors.As(err, &ne):
		// A server reply is authoritative even if the context ended meanwhile.
		e.Kind, e.Code, e.Message = memgraph.Classify(ne.Code, ne.Msg), ne.Code, ne.Msg
	case ctx.Err() != nil:
		if tracker.sentRun.Load() {
			e.Kind, e.Message = memgraph.KindTimeout, "no reply before the context ended; the query's outcome is unknown"
		} else {
			e.Kind, e.Message = memgraph.KindUnreachable, "no connection before the context ended"
		}
		if !errors.Is(err, ctx.Err()) {
			e.Err = errors.Join(ctx.Err(), err)
		}
	case errors.As(err, &usage):
		e.Kind, e.Message = memgraph.KindUnknown, usage.Message
	case isProtocolError(err):
		e.Kind, e.Message = memgraph.KindProtocol, err.Error()
	default:
		// ConnectivityError, dial errors, EOF and resets: the connection could not be made or
		// was lost.
		e.Kind, e.Message = memgraph.KindUnreachable, err.Error()
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

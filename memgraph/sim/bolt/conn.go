package bolt

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"time"
)

// conn is one client connection's state machine (Memgraph states/*.hpp, simplified to what
// drivers exercise): INIT → (LOGON for 5.1+) → READY ⇄ STREAMING, explicit transactions, and
// FAILED (everything but RESET is IGNORED).
type conn struct {
	nc      net.Conn
	rw      *bufio.ReadWriter
	handler Handler

	major, minor byte
	helloDone    bool
	authed       bool
	user         string // the principal the Authenticator accepted
	failed       bool
	inTx         bool
	txExtra      map[string]any // BEGIN's extra (its "db" selects the transaction's database)
	txQueries    int64
	pending      *stream
	enc          encoder // reused by send: writeMessage copies what it encodes
}

// stream is a prepared result waiting for PULL/DISCARD.
type stream struct {
	prepared *Prepared
	executed bool
	outcome  Outcome
	next     int
}

func (c *conn) serve() {
	var hs [20]byte
	if _, err := io.ReadFull(c.rw, hs[:]); err != nil {
		return
	}
	if hs[0] != 0x60 || hs[1] != 0x60 || hs[2] != 0xB0 || hs[3] != 0x17 {
		return
	}
	major, minor, ok := negotiate(hs[4:])
	if !ok {
		_, _ = c.rw.Write([]byte{0, 0, 0, 0})
		_ = c.rw.Flush()
		return
	}
	c.major, c.minor = major, minor
	if _, err := c.rw.Write([]byte{0, 0, minor, major}); err != nil || c.rw.Flush() != nil {
		return
	}
	for {
		raw, err := readMessage(c.rw)
		if err != nil {
			return
		}
		msg, err := decodeMessage(raw)
		if err != nil {
			return
		}
		if err := c.dispatch(msg); err != nil {
			_ = c.rw.Flush()
			return
		}
		// Pipelined requests are answered together; flush once the client has nothing queued.
		if c.rw.Reader.Buffered() == 0 {
			if c.rw.Flush() != nil {
				return
			}
		}
	}
}

func (c *conn) send(tag byte, fields ...any) error {
	c.enc.buf = c.enc.buf[:0]
	c.enc.value(Structure{Tag: tag, Fields: fields})
	return writeMessage(c.rw, c.enc.buf)
}

func (c *conn) success(meta map[string]any) error {
	if meta == nil {
		meta = map[string]any{}
	}
	return c.send(tagSuccess, meta)
}

func (c *conn) failure(f *Failure) error {
	c.failed = true
	c.pending = nil
	return c.send(tagFailure, map[string]any{"code": f.Code, "message": f.Message})
}

func (c *conn) needsLogon() bool { return c.major == 5 && c.minor >= 1 }

func (c *conn) dispatch(m Structure) error {
	switch m.Tag {
	case tagGoodbye:
		return errClose
	case tagReset:
		c.failed, c.inTx, c.pending = false, false, nil
		return c.success(nil)
	}
	if !c.helloDone || !c.authed {
		return c.initPhase(m)
	}
	if c.failed {
		return c.send(tagIgnored)
	}
	switch m.Tag {
	case tagRun:
		return c.run(m)
	case tagPull:
		return c.pull(m, false)
	case tagDiscard:
		return c.pull(m, true)
	case tagBegin:
		if c.inTx {
			return c.failure(ClientError("Nested transactions are not supported."))
		}
		c.inTx, c.txQueries, c.pending = true, 0, nil
		c.txExtra, _ = field[map[string]any](m, 0)
		return c.success(nil)
	case tagCommit, tagRollback:
		if !c.inTx {
			verb := map[byte]string{tagCommit: "commit", tagRollback: "rollback"}[m.Tag]
			return c.failure(ClientError("No current transaction to " + verb + "."))
		}
		c.inTx, c.pending = false, nil
		return c.success(nil)
	case tagTelemetry:
		return c.success(nil)
	case tagLogoff:
		if !c.needsLogon() {
			return errClose
		}
		c.authed, c.user = false, ""
		return c.success(nil)
	case tagRoute:
		if r, ok := c.handler.(Router); ok {
			db, hasDB := c.routeDB(m)
			rt, f := r.Route(db, hasDB)
			if f != nil {
				return c.failure(f)
			}
			return c.success(map[string]any{"rt": rt})
		}
		return c.failure(&Failure{Code: "66", Message: "Route message is not supported in Memgraph!"})
	}
	return errClose // unknown message: Memgraph drops the connection
}

// routeDB is the database a ROUTE message names (Memgraph states/handlers.hpp ReadDB): Bolt 4.3
// sends it as the third field, 4.4 and 5 as "db" in the third field's map; anything else names
// none.
func (c *conn) routeDB(m Structure) (string, bool) {
	if c.major == 4 && c.minor == 3 {
		return field[string](m, 2)
	}
	extra, _ := field[map[string]any](m, 2)
	db, ok := extra["db"].(string)
	return db, ok
}

// Router is implemented by handlers that answer ROUTE: the routing table for database db (the
// default database when hasDB is false), or the refusal.
type Router interface {
	Route(db string, hasDB bool) (map[string]any, *Failure)
}

// Authenticator is implemented by handlers that check credentials. Without it every client is
// accepted.
type Authenticator interface {
	// Authenticate gets the scheme ("none" when missing), principal and credentials ("" when
	// missing) as Memgraph defaults them (states/init.hpp 56–69, 126–131).
	Authenticate(scheme, principal, credentials string) bool
}

// CodeUnauthenticated is the FAILURE code of a refused login (states/init.hpp 34–42).
const CodeUnauthenticated = "Memgraph.ClientError.Security.Unauthenticated"

// initPhase handles HELLO (and LOGON for 5.1+). The credentials, in HELLO for Bolt 4 and in
// LOGON for 5.1+, go to the handler's Authenticator: a refusal is a FAILURE, and the connection
// closes.
func (c *conn) initPhase(m Structure) error {
	switch {
	case m.Tag == tagHello && !c.helloDone:
		extra, _ := field[map[string]any](m, 0)
		if _, ok := extra["user_agent"].(string); !ok {
			return errClose
		}
		if !c.needsLogon() && !c.authenticate(extra) {
			return c.refuseLogin()
		}
		c.helloDone = true
		c.authed = !c.needsLogon()
		return c.success(map[string]any{"connection_id": "bolt-1", "server": ServerAgent})
	case m.Tag == tagLogon && c.helloDone && c.needsLogon():
		auth, _ := field[map[string]any](m, 0)
		if !c.authenticate(auth) {
			return c.refuseLogin()
		}
		c.authed = true
		return c.success(map[string]any{"connection_id": "bolt-1", "server": ServerAgent})
	}
	return errClose
}

func (c *conn) authenticate(auth map[string]any) bool {
	a, ok := c.handler.(Authenticator)
	if !ok {
		return true
	}
	scheme, ok := auth["scheme"].(string)
	if !ok {
		scheme = "none"
	}
	principal, _ := auth["principal"].(string)
	credentials, _ := auth["credentials"].(string)
	if !a.Authenticate(scheme, principal, credentials) {
		return false
	}
	if scheme == "none" {
		principal = ""
	}
	c.user = principal
	return true
}

// refuseLogin sends Memgraph's authentication FAILURE and closes the connection.
func (c *conn) refuseLogin() error {
	if err := c.send(tagFailure, map[string]any{"code": CodeUnauthenticated, "message": "Authentication failure"}); err != nil {
		return err
	}
	return errClose
}

func (c *conn) run(m Structure) error {
	query, ok := field[string](m, 0)
	if !ok {
		return errClose
	}
	params, _ := field[map[string]any](m, 1)
	extra, _ := field[map[string]any](m, 2)
	if c.inTx {
		extra = c.txExtra
	}
	p, f := c.handler.Run(Request{Query: query, Params: params, Extra: extra, ExplicitTx: c.inTx, User: c.user})
	if f != nil {
		return c.failure(f)
	}
	c.pending = &stream{prepared: p}
	fields := p.Fields
	if fields == nil {
		fields = []string{}
	}
	meta := map[string]any{"fields": fields}
	if c.inTx {
		meta["qid"] = c.txQueries
		c.txQueries++
	}
	return c.success(meta)
}

func (c *conn) pull(m Structure, discard bool) error {
	s := c.pending
	if s == nil {
		return c.failure(ClientError("There is no active stream to pull from."))
	}
	if !s.executed {
		s.executed = true
		if s.prepared.Exec != nil {
			s.outcome = c.execute(s.prepared)
		}
	}
	if s.outcome.Err != nil {
		return c.failure(s.outcome.Err)
	}
	n := int64(-1)
	if args, ok := field[map[string]any](m, 0); ok {
		if v, ok := args["n"].(int64); ok {
			n = v
		}
	}
	rows := s.outcome.Rows
	if !discard {
		limit := len(rows) - s.next
		if n > 0 && int(n) < limit {
			limit = int(n)
		}
		for range limit {
			if err := c.send(tagRecord, rows[s.next]); err != nil {
				return err
			}
			s.next++
		}
		if s.next < len(rows) {
			return c.success(map[string]any{"has_more": true})
		}
	}
	c.pending = nil
	typ := s.outcome.Type
	if typ == "" {
		typ = "rw"
	}
	meta := map[string]any{"has_more": false, "type": typ}
	if len(s.outcome.Notifications) > 0 {
		list := make([]any, len(s.outcome.Notifications))
		for i, n := range s.outcome.Notifications {
			list[i] = n
		}
		meta["notifications"] = list
	}
	return c.success(meta)
}

func field[T any](m Structure, i int) (T, bool) {
	var zero T
	if i >= len(m.Fields) {
		return zero, false
	}
	v, ok := m.Fields[i].(T)
	return v, ok
}

// execute runs a prepared query. While a Blocking one runs, a watcher peeks at the socket: a
// driver sends nothing while it waits for the reply, so whatever the peek sees means the client
// gave up — it closed the connection (drivers do when their context ends) or sent something else
// (a RESET) — and cancels Exec's ctx. The bytes stay buffered for the next message.
func (c *conn) execute(p *Prepared) Outcome {
	if !p.Blocking {
		return p.Exec(context.Background())
	}
	// The replies to whatever was pipelined before this PULL go out now, not after the wait.
	if err := c.rw.Flush(); err != nil {
		return Outcome{Err: &Failure{Code: CodeDatabaseError, Message: "connection lost"}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if _, err := c.rw.Reader.Peek(1); !errors.Is(err, os.ErrDeadlineExceeded) {
			cancel()
		}
	}()
	out := p.Exec(ctx)
	// Unblock the peek without consuming anything, then make the connection usable again.
	_ = c.nc.SetReadDeadline(time.Now())
	<-watched
	_ = c.nc.SetReadDeadline(time.Time{})
	return out
}

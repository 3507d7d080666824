package bolt

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
)

// Message tags (Bolt 4.x/5.x).
const (
	tagHello     = 0x01
	tagGoodbye   = 0x02
	tagReset     = 0x0F
	tagRun       = 0x10
	tagBegin     = 0x11
	tagCommit    = 0x12
	tagRollback  = 0x13
	tagDiscard   = 0x2F
	tagPull      = 0x3F
	tagTelemetry = 0x54
	tagRoute     = 0x66
	tagLogon     = 0x6A
	tagLogoff    = 0x6B

	tagSuccess = 0x70
	tagRecord  = 0x71
	tagIgnored = 0x7E
	tagFailure = 0x7F
)

// ServerAgent is what Memgraph announces in HELLO SUCCESS (--bolt-server-name-for-init default).
const ServerAgent = "Neo4j/v5.11.0 compatible graph database server - Memgraph"

// Failure codes Memgraph uses (handlers.hpp ExceptionToErrorMessage).
const (
	CodeClientError    = "Memgraph.ClientError.MemgraphError.MemgraphError"
	CodeTransientError = "Memgraph.TransientError.MemgraphError.MemgraphError"
	CodeDatabaseError  = "Memgraph.DatabaseError.MemgraphError.MemgraphError"
)

// Failure is a Bolt FAILURE: the code and message a client sees.
type Failure struct {
	Code    string
	Message string
}

func (f *Failure) Error() string { return f.Code + ": " + f.Message }

// ClientError is a FAILURE with Memgraph's ClientError code (a QueryException).
func ClientError(msg string) *Failure { return &Failure{Code: CodeClientError, Message: msg} }

// Outcome is what a prepared query produces when it is executed at the first PULL or DISCARD.
type Outcome struct {
	Rows          [][]any
	Notifications []map[string]any
	// Type is the summary "type" ("r", "w", "rw", "s"); empty means "rw" (Memgraph's NONE).
	Type string
	Err  *Failure
}

// Prepared is a query accepted at RUN time. Exec runs the operation itself: Memgraph prepares
// at RUN and executes the callback at the first PULL (or DISCARD), so operation errors surface
// there, while RUN only reports preparation errors.
//
// A Blocking query's Exec may wait for a long time (FORCE RESET CLUSTER STATE does): its ctx is
// cancelled when the client hangs up or the server closes, so Exec can stop waiting. Other
// queries get a context that is never cancelled.
type Prepared struct {
	Fields   []string
	Exec     func(ctx context.Context) Outcome
	Blocking bool
}

// Request is one RUN as the handler sees it.
type Request struct {
	Query      string
	Params     map[string]any
	Extra      map[string]any // RUN's extra, or BEGIN's inside an explicit transaction
	ExplicitTx bool
	// User is the principal the connection logged in as, when its handler is an Authenticator
	// that accepted it ("" without one, or for the "none" scheme).
	User string
}

// Handler answers RUN messages on one listener. Run is called from the connection's goroutine,
// possibly concurrently for different connections.
type Handler interface {
	Run(req Request) (*Prepared, *Failure)
}

// supported lists the versions Memgraph 3.12 accepts (constants.hpp), as major<<8|minor.
var supported = map[uint16]bool{0x0100: true, 0x0400: true, 0x0401: true, 0x0403: true, 0x0404: true, 0x0502: true}

// Server is one Bolt listener with its live connections.
type Server struct {
	ln      net.Listener
	handler Handler

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Listen starts a Bolt server on addr ("127.0.0.1:0" for an ephemeral port).
func Listen(addr string, h Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return serve(ln, h), nil
}

func serve(ln net.Listener, h Handler) *Server {
	s := &Server{ln: ln, handler: h, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s
}

// Addr is the listener's "host:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops accepting, closes every open connection and waits for their goroutines.
func (s *Server) Close() {
	s.Abort()
	s.wg.Wait()
}

// Abort stops accepting and closes every open connection without waiting for their goroutines:
// a process that dies in the middle of answering a query (the caller may be one of them).
func (s *Server) Abort() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	_ = s.ln.Close()
	s.DropConnections()
}

// DropConnections closes every open connection; the listener keeps accepting new ones.
func (s *Server) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		_ = c.Close()
	}
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				_ = c.Close()
			}()
			(&conn{nc: c, rw: bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c)), handler: s.handler}).serve()
		}()
	}
}

// negotiate implements Memgraph's handshake: for each offered slot {range, minor, major} in
// order, try minor, minor-1, … minor-range and answer the first supported version.
func negotiate(offer []byte) (major, minor byte, ok bool) {
	for i := range 4 {
		slot := offer[4*i : 4*i+4]
		rng, mn, mj := int(slot[1]), int(slot[2]), slot[3]
		for m := mn; m >= 0 && m >= mn-rng; m-- {
			if supported[uint16(mj)<<8|uint16(m)] {
				return mj, byte(m), true
			}
		}
	}
	return 0, 0, false
}

// readMessage reassembles one chunked message, skipping NOOP chunks.
func readMessage(r io.Reader) ([]byte, error) {
	var msg []byte
	var hdr [2]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil, err
		}
		n := int(binary.BigEndian.Uint16(hdr[:]))
		if n == 0 {
			if len(msg) == 0 {
				continue // NOOP
			}
			return msg, nil
		}
		start := len(msg)
		msg = append(msg, make([]byte, n)...)
		if _, err := io.ReadFull(r, msg[start:]); err != nil {
			return nil, err
		}
	}
}

// writeMessage chunks one encoded message.
func writeMessage(w io.Writer, b []byte) error {
	out := make([]byte, 0, len(b)+len(b)/0xFFFF*2+4)
	for len(b) > 0 {
		n := min(len(b), 0xFFFF)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
		out = append(out, b[:n]...)
		b = b[n:]
	}
	out = append(out, 0, 0)
	_, err := w.Write(out)
	return err
}

var errClose = errors.New("bolt: close connection")

//go:build e2e

package e2e_test

import (
	"errors"
	"io"
	"net"
	"sort"
	"sync"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// links is the network between a hook and the simulated coordinators: one loopback listener per
// advertised coordinator address, each accepted connection forwarded to wherever the World serves
// that coordinator at the time. It is a memgraph.Resolver for an in-process hook and a list of
// --resolve flags for the hook binary. A link can be partitioned (new connections are accepted
// and never answered; open ones go silent, their bytes held as TCP would hold them, until the
// partition heals) and its client-to-coordinator bytes can be filtered.
type links struct {
	world *sim.World

	mu     sync.Mutex
	cond   *sync.Cond
	byAddr map[string]*link // by advertised address
	filter func(data []byte) bool
	closed bool
}

type link struct {
	advertised string
	host       string
	ln         net.Listener
	cut        bool
	held       int // reads held back while cut
	conns      []net.Conn
}

// newLinks opens a listener for each advertised coordinator address ("host:port").
func newLinks(t *testing.T, world *sim.World, advertised []string) *links {
	t.Helper()
	l := &links{world: world, byAddr: map[string]*link{}}
	l.cond = sync.NewCond(&l.mu)
	for _, addr := range advertised {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lk := &link{advertised: addr, host: host, ln: ln}
		l.byAddr[addr] = lk
		go l.serve(lk)
	}
	t.Cleanup(l.close)
	return l
}

// Resolve maps an advertised coordinator address to its link and anything else to the World.
func (l *links) Resolve(address string) string {
	if lk, ok := l.byAddr[address]; ok {
		return lk.ln.Addr().String()
	}
	return l.world.Resolve(address)
}

// resolveFlags are the hook binary's --resolve flags for every link.
func (l *links) resolveFlags() []string {
	var out []string
	for addr, lk := range l.byAddr {
		out = append(out, "--resolve="+addr+"="+lk.ln.Addr().String())
	}
	sort.Strings(out)
	return out
}

// partition cuts (or heals) every link to host.
func (l *links) partition(host string, cut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, lk := range l.byAddr {
		if lk.host == host {
			lk.cut = cut
		}
	}
	l.cond.Broadcast()
}

// setFilter installs drop: it sees the bytes a client is about to send to a coordinator (with
// the tail of what it sent before, so a word split across reads is still seen) and returns true
// to hold them back for good: that connection's client-to-coordinator direction stays silent.
func (l *links) setFilter(drop func(data []byte) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.filter = drop
}

func (l *links) close() {
	l.mu.Lock()
	l.closed = true
	var conns []net.Conn
	for _, lk := range l.byAddr {
		lk.ln.Close()
		conns = append(conns, lk.conns...)
	}
	l.cond.Broadcast()
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

func (l *links) serve(lk *link) {
	for {
		client, err := lk.ln.Accept()
		if err != nil {
			return
		}
		go l.forward(lk, client)
	}
}

// forward connects client to the coordinator's current listener, once the link is not cut.
func (l *links) forward(lk *link, client net.Conn) {
	defer client.Close()
	if !l.track(lk, client) || !l.waitOpen(lk) {
		return
	}
	target := l.world.Resolve(lk.advertised)
	if target == lk.advertised {
		return // no such process: connection refused
	}
	server, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer server.Close()
	if !l.track(lk, server) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { l.pump(lk, server, client, true); done <- struct{}{} }()
	go func() { l.pump(lk, client, server, false); done <- struct{}{} }()
	<-done
}

// pump copies src to dst, holding each read while the link is cut; toServer reads pass the
// filter first.
func (l *links) pump(lk *link, dst, src net.Conn, toServer bool) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	var tail []byte
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if toServer && l.dropped(append(tail, buf[:n]...)) {
				_, _ = io.Copy(io.Discard, src) // silent from here on, until the client goes
				return
			}
			tail = append(tail[:0], buf[max(0, n-32):n]...)
			if !l.waitOpen(lk) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			if tcp, ok := dst.(*net.TCPConn); ok {
				_ = tcp.CloseWrite()
			}
			return
		}
	}
}

func (l *links) dropped(data []byte) bool {
	l.mu.Lock()
	f := l.filter
	l.mu.Unlock()
	return f != nil && f(data)
}

// heldReads counts the reads every link to host held back while cut: evidence that a partition
// was hit, not just declared.
func (l *links) heldReads(host string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, lk := range l.byAddr {
		if lk.host == host {
			n += lk.held
		}
	}
	return n
}

// waitOpen blocks while the link is cut; false once the links are closed.
func (l *links) waitOpen(lk *link) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lk.cut {
		lk.held++
	}
	for lk.cut && !l.closed {
		l.cond.Wait()
	}
	return !l.closed
}

func (l *links) track(lk *link, c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	lk.conns = append(lk.conns, c)
	return true
}

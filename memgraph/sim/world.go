// Package sim is an in-process simulator of a Memgraph 3.12 high-availability deployment:
// coordinators sharing Raft state and data instances, each answering real Bolt on its own
// loopback listener, with Memgraph's texts, error phases and failover rules. Tests inject faults
// (kill, restart, wipe, lag, latency, dropped connections, forced leadership) and observe the
// Raft state, every query each instance received, and protocol misuses.
//
// It is deterministic: health follows liveness at once, elections and failover happen inside the
// fault call that causes them, and ties are broken by fixed rules (see World).
package sim

import (
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// CoordinatorSpec is a coordinator's process flags. Host is --coordinator-hostname (an FQDN).
type CoordinatorSpec struct {
	ID              int
	Host            string
	BoltPort        int32
	ManagementPort  int32
	CoordinatorPort int32
	TLS             *tls.Config // --bolt-cert-file/--bolt-key-file: Bolt only over TLS; nil is plaintext
}

// DataSpec is a data instance's process flags (the replication port is chosen at registration).
type DataSpec struct {
	Host           string
	BoltPort       int32
	ManagementPort int32
	TLS            *tls.Config // as CoordinatorSpec.TLS
}

// Option configures a World.
type Option func(*options)

type options struct {
	yield func(leader int, alive []int) int
	clock func() time.Time
}

// WithYieldChooser replaces the default YIELD LEADERSHIP target rule (the next alive member
// after the leader in id order, cyclic). choose gets the leader's id and the other alive
// members' ids in ascending order (never empty) and returns one of them.
func WithYieldChooser(choose func(leader int, alive []int) int) Option {
	return func(o *options) { o.yield = choose }
}

// WithClock sets the clock behind last_succ_resp_ms of instances that are down.
func WithClock(now func() time.Time) Option { return func(o *options) { o.clock = now } }

// World holds every simulated instance. All state sits behind one mutex; Bolt connections run
// on their own goroutines and take it per request.
type World struct {
	opts options

	mu        sync.Mutex
	instances map[string]*instance // by host; removed instances are deleted
	clusterID int
	queries   []Query
	misuses   []Misuse
	closed    bool
}

type instance struct {
	host  string
	coord bool
	cspec CoordinatorSpec
	dspec DataSpec

	alive     bool
	server    *bolt.Server
	addr      string // loopback address of the (last) listener
	downSince time.Time

	latency         time.Duration
	refusePromotion bool

	cluster *cluster         // coordinators: the Raft group this process is part of
	txns    map[string]int64 // data instances: committed transactions per database
	lag     map[string]int64 // data instances: txns kept behind the main per database
}

func (i *instance) boltAddr() string { return hostPort(i.host, i.boltPort()) }

func (i *instance) boltPort() int32 {
	if i.coord {
		return i.cspec.BoltPort
	}
	return i.dspec.BoltPort
}

func (i *instance) mgmtAddr() string {
	if i.coord {
		return hostPort(i.host, i.cspec.ManagementPort)
	}
	return hostPort(i.host, i.dspec.ManagementPort)
}

func (i *instance) coordAddr() string { return hostPort(i.host, i.cspec.CoordinatorPort) }

func hostPort(host string, port int32) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// NewWorld returns an empty world.
func NewWorld(opts ...Option) *World {
	w := &World{instances: map[string]*instance{}}
	w.opts.clock = time.Now
	for _, o := range opts {
		o(&w.opts)
	}
	return w
}

// Close stops every listener. The world cannot be used afterwards.
func (w *World) Close() {
	w.mu.Lock()
	w.closed = true
	var servers []*bolt.Server
	for _, in := range w.instances {
		if in.server != nil {
			servers = append(servers, in.server)
			in.server = nil
		}
		in.alive = false
	}
	w.mu.Unlock()
	for _, s := range servers {
		s.Close()
	}
}

// StartCoordinator starts a fresh coordinator: leader of its own one-member cluster, listing
// itself with an empty bolt_server. Starting an identical running spec again is a no-op.
func (w *World) StartCoordinator(spec CoordinatorSpec) error {
	if spec.ID <= 0 || spec.Host == "" || spec.BoltPort <= 0 || spec.ManagementPort <= 0 || spec.CoordinatorPort <= 0 {
		return fmt.Errorf("sim: coordinator needs a positive id, a host and bolt, management and coordinator ports: %+v", spec)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if in, ok := w.instances[spec.Host]; ok {
		if in.coord && in.cspec == spec && in.alive {
			return nil
		}
		return fmt.Errorf("sim: host %s already exists (use Restart, Wipe or Remove)", spec.Host)
	}
	in := &instance{host: spec.Host, coord: true, cspec: spec}
	in.cluster = w.newCluster(in)
	return w.listen(in)
}

// StartData starts a fresh data instance (standalone MAIN until a coordinator registers it).
// Starting an identical running spec again is a no-op.
func (w *World) StartData(spec DataSpec) error {
	if spec.Host == "" || spec.BoltPort <= 0 || spec.ManagementPort <= 0 {
		return fmt.Errorf("sim: data instance needs a host and bolt and management ports: %+v", spec)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if in, ok := w.instances[spec.Host]; ok {
		if !in.coord && in.dspec == spec && in.alive {
			return nil
		}
		return fmt.Errorf("sim: host %s already exists (use Restart, Wipe or Remove)", spec.Host)
	}
	in := &instance{host: spec.Host, dspec: spec, txns: map[string]int64{defaultDB: 0}, lag: map[string]int64{}}
	if err := w.listen(in); err != nil {
		return err
	}
	w.dataCameUp(in)
	return nil
}

const defaultDB = "memgraph"

// listen opens the instance's Bolt listener, on its previous port when it had one so clients
// holding the resolved address reconnect after a restart. Caller holds w.mu.
func (w *World) listen(in *instance) error {
	if w.closed {
		return fmt.Errorf("sim: world is closed")
	}
	h := &handler{w: w, in: in}
	var srv *bolt.Server
	var err error
	if in.addr != "" {
		srv, err = listenBolt(in.addr, h, in.boltTLS())
	}
	if srv == nil {
		if srv, err = listenBolt("127.0.0.1:0", h, in.boltTLS()); err != nil {
			return fmt.Errorf("sim: listen for %s: %w", in.host, err)
		}
	}
	in.server, in.addr, in.alive = srv, srv.Addr(), true
	w.instances[in.host] = in
	return nil
}

// Resolve maps "<Host>:<BoltPort>" of a started (possibly killed) instance to its loopback
// listener; any other address is returned unchanged. It implements memgraph.Resolver.
func (w *World) Resolve(address string) string {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return address
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	in, ok := w.instances[host]
	if !ok || strconv.Itoa(int(in.boltPort())) != port {
		return address
	}
	return in.addr
}

func (w *World) now() time.Time { return w.opts.clock() }

// handler binds one instance's Bolt listener to the world.
type handler struct {
	w  *World
	in *instance
}

func (h *handler) Run(req bolt.Request) (*bolt.Prepared, *bolt.Failure) {
	return h.w.run(h.in, req)
}

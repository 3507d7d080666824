// Package sim is an in-process simulator of a Memgraph 3.12 high-availability deployment:
// coordinators sharing Raft state and data instances, each answering real Bolt on its own
// loopback listener, with Memgraph's texts, error phases, failover rules and timing. Tests
// inject faults (kill, restart, wipe, restart at another version, lag, latency, dropped
// connections, forced leadership, slow coordinator joins, a diverged replica, recoveries that
// fail) and observe the Raft state, every query
// each instance received, the writes acknowledged, and protocol misuses.
//
// # Time
//
// Every timed behaviour runs on an injectable Clock (WithClock; the wall clock by default, a
// ManualClock in tests), evaluated deterministically at every entry point and whenever a
// blocked query's wake-up time comes, in time order — no background goroutines:
//
//   - Health: the leader shows a data instance (and a coordinator) up until
//     instance_down_timeout_sec (the coordinator setting, 5 s by default) has passed since the
//     later of its death and the creation of the leader's connector to it; connectors are made by
//     REGISTER INSTANCE and by every reconciliation (after an election or a FORCE RESET), and
//     start alive. A dead MAIN is failed over once it shows down.
//   - Readiness: an elected leader is not ready until its first reconciliation, which runs
//     WithLeaderReadyDelay after the election (0 by default) and succeeds at once when Raft has a
//     MAIN (alive or not) or no data instance; without a MAIN it fails over, and with no alive
//     candidate it retries after 1 s, 2 s, 4 s … 60 s. A not-ready leader answers SHOW
//     INSTANCES with its local view (every health unknown), every write with the "leader
//     couldn't be found" text, and SHOW REPLICATION LAG with no rows. FORCE RESET CLUSTER STATE
//     makes the leader not ready the same way and does not return until the reconciliation
//     succeeds or the leadership is lost (or the client hangs up).
//   - Elections: after a leader dies, its leadership expires or it resigns without a successor,
//     the cluster has no leader for WithElectionTimeout (0 by default: at once), counted from
//     when a majority is alive, and then the lowest-id alive member leads in a new term.
//   - Leadership expiry: a live leader that lost its majority keeps leading for
//     LeadershipExpiry (2 s); writes in that window fail with the Raft-log text.
//   - YIELD LEADERSHIP: the leader keeps leading, but every Raft write fails with the Raft-log
//     text, for WithLeadershipTransferTime (0 by default: at once); then the successor — the next
//     alive member after the leader, or WithYieldChooser's pick, which may be the leader itself —
//     leads in a new term, not ready until it reconciles (if it is no longer an alive member of
//     a majority, the leader resigns and an election follows). A leader with no alive peer pauses
//     writes the same way for YieldResignTimeout (4 s) and then resigns. A yield during a yield,
//     or by a sole member, does nothing.
//   - Start-up: a coordinator that has not learnt a leader within CoordinatorInitTimeout (120 s)
//     of starting exits (Running reports false), as a restarted one without a majority does.
//   - Restarted MAIN: a data instance that restarts (Restart, Wipe, RestartAt) while Raft has it
//     as MAIN answers as MAIN (SHOW INSTANCES up/main) but refuses writes with Memgraph's
//     "Write queries currently forbidden on the main instance" text until the ready leader's
//     health check re-promotes it, instance_health_check_frequency_sec (1 s by default) after
//     the later of its start and the leader becoming ready; World.Commit skips it meanwhile. A
//     MAIN made by a failover or SET INSTANCE … TO MAIN is writeable at once.
//   - Recovery: a replica found behind its MAIN (or holding transactions the MAIN lacks) recovers
//     for WithReplicaRecoveryTime (0 by default: at once), then holds the MAIN's counts.
//   - Joins: ADD COORDINATOR of a coordinator that cannot join within Memgraph's 2 s wait
//     answers "reached a timeout!"; with SetJoinDelay the coordinator joins later anyway, as a
//     half-joined member (in the Raft configuration, not in the application log: empty
//     bolt_server). REMOVE COORDINATOR of such a member crashes the leader process, as
//     Memgraph's LOG_FATAL does, and is recorded as a misuse.
//   - Health-check settings: instance_health_check_frequency_sec 0 freezes the committing
//     leader's health verdicts (no failover, no re-promotion) and makes every coordinator that
//     afterwards leads registered data instances, or registers one, abort — elected again after
//     a restart, it aborts again (healthcheck.go). instance_down_timeout_sec 0 counts a stopped
//     instance down at once. Both are recorded as misuses.
//
// # Replication
//
// Committed transactions are counted per database. A replica in sync with its MAIN takes each
// commit at once, minus the lag set with SetLag; a recovering one keeps its counts (0 after a
// Wipe) until its recovery ends; a diverged one (an old MAIN back after a lossy failover, or one
// demoted for a client's promotion of a replica that was behind) is reset to the MAIN's history
// as HA's forced recovery does, losing its own transactions. Failover ranks candidates on their
// own counts, so a recovering replica is not the most up to date. Acknowledged counts every
// write the simulator acknowledged (successful Commit calls and Bolt writes), so tests can see
// acknowledged writes lost.
//
// Each MAIN process caches, per replica and database, the highest count it saw the replica
// confirm; the cache only goes up, is not fed while the replica recovers, and starts empty in a
// new or restarted MAIN process, filled by heartbeats (at once here). SHOW REPLICATION LAG
// reports it: num_committed_txns is the cached count, num_txns_behind_main the MAIN's count
// minus it, so a wiped replica still recovering shows 0 behind (SetLag, a fault standing for a
// replica that was that far behind all along, sets the cache to the lagged count). SHOW REPLICAS
// on the MAIN data instance tells: per database {ts: cached count, behind: cached − MAIN's
// (≤ 0), status}, status "recovery" while the replica is behind (recovering or lagged), "invalid"
// while it is down or cannot read the MAIN's messages, or after a recovery that failed until
// the MAIN's next check a second later (FailRecovery: such a replica loops between the two, as
// Memgraph's does), "diverged" for a replica Diverge marked (a state Memgraph 3.12 reaches only
// on a MAIN no coordinator manages), else "ready"; "replicating", a transaction on its way, is
// never seen here.
//
// A Bolt write on a MAIN whose SYNC or STRICT_SYNC replica cannot confirm it (down, recovering,
// lagged, or older) fails at PULL with Memgraph's "Replication Exception: Failed to replicate to
// SYNC replica '…'" text: a SYNC one leaves it committed on the MAIN, a STRICT_SYNC one aborts
// it; neither is acknowledged. ASYNC replicas never fail a write.
//
// Versions (DataSpec.Version, CoordinatorSpec.Version, RestartAt): "X.Y.Z" with an optional
// suffix, anything else unknown (no rule applies). A replica whose version is older than its
// MAIN's receives nothing from it (SHOW REPLICAS "invalid", the lag per the cache). A client's
// SET INSTANCE … TO MAIN that makes a MAIN newer than an alive registered data instance, and a
// StartData, or a RestartAt that changes the version, that leaves a registered replica older
// than its alive MAIN, are recorded as MisuseNewerMainOlderReplica; a failover the coordinators
// chose is not, nor a restart at the version the instance ran.
//
// # Auth
//
// Each data instance has users and roles (authdata.go) with Memgraph 3.12's privileges, database
// access and built-in roles. Without a user any basic or none Bolt login (HELLO in Bolt 4, LOGON
// in Bolt 5) works; once one exists only a user's name with its password does — stored as given,
// or as the bcrypt hash a "bcrypt:" password names — and others get FAILURE
// "Memgraph.ClientError.Security.Unauthenticated" "Authentication failure" and the connection
// closes. Coordinators ignore auth. DataSpec.Auth is the user an instance starts with (every
// privilege but Auth.Denied, and the built-in roles); credentials are never printed. The auth
// queries (authparse.go: SHOW USERS, SHOW ROLES, SHOW PRIVILEGES, SHOW ROLES FOR, SHOW DATABASE
// PRIVILEGES, CREATE and DROP USER and ROLE, SET PASSWORD, SET and CLEAR ROLE, GRANT, DENY and
// REVOKE of privileges and databases, SET MAIN DATABASE) answer with Memgraph's columns,
// notifications and texts: refused in an explicit transaction, a change
// refused on a REPLICA, the first user bringing the built-in roles and becoming an admin. The
// MAIN replicates every change to the replicas it reaches at once, and a replica it did not
// reach gets them all when it next does. Every query that needs a privilege — AUTH for the auth
// queries, the replication, snapshot and reload queries theirs, and MATCH, CREATE, MERGE,
// DELETE, SET and REMOVE for those clauses — is refused after Prepare with CheckAuthorized's text
// when the session's user lacks it on the session's database (or may not use it), no longer
// exists, or the session logged in before there were users.
//
// # Approximations that remain
//
//   - The election timeout is one fixed duration, not drawn from 2–4 s, and the lowest-id alive
//     member always wins; YIELD LEADERSHIP's default successor is the next alive member after the
//     leader (NuRaft picks the highest-priority peer that answered within a heartbeat), and the
//     transfer takes one fixed duration.
//   - A data instance that starts answers at once; only a restarted MAIN waits for the health
//     check. A failover that found no candidate is retried when a data instance starts, stops or
//     is registered. A never-registered data instance accepts writes (Memgraph's HA data
//     instance starts not writeable).
//   - ADD COORDINATOR answers at once, without waiting out Memgraph's 2 s join poll.
//   - Replication of a commit and the MAIN's heartbeats are instantaneous; a recovery takes one
//     fixed duration whatever it has to copy, and a recovery under way follows a new MAIN
//     without starting over. Transaction counts stand in for commit timestamps in SHOW
//     REPLICAS, whose system_info ts is always 0. SHOW REPLICATION LAG lists every registered
//     instance as registered on the MAIN. A data instance's own role follows Raft at once (no
//     demote/promote RPC delay). World.Commit stands for writes clients saw succeed: it models
//     no replication error.
//   - Only replication is versioned: coordinators' versions are kept but no rule applies to
//     them; an instance whose data a newer version wrote still starts at an older one; Restart
//     and Wipe keep the version and record no misuse.
//   - There are no network partitions: an instance is either running or not; a follower always
//     reaches a live leader.
//   - Intra-cluster TLS refuses a peer the moment either side's identity changes (Memgraph's
//     health check needs instance_down_timeout_sec to notice); names are not verified, only
//     chains. Reachability is judged from the leader: a refused member or data instance counts as
//     down, a refused replica does not confirm commits.
//   - ROUTE (routing.go) reads the replicas' lag from the MAIN's counts at the moment it is asked,
//     not from the leader's cache of the MAIN's last health check.
//   - COLD (suspended) and dropped databases are not modelled; databases are created,
//     listed and selected per session (databases.go). Nor are label, edge-type and property
//     permissions (the built-in roles show their rows, nothing enforces them), user profiles,
//     impersonation, auth modules, password hashes other than bcrypt, or the name and password
//     regex flags beyond their defaults.
//   - Snapshots (snapshots.go, recoversnapshot.go) are a JSON header and a payload of
//     SnapshotCost.BytesPerTransaction per transaction in each database's snapshot directory,
//     written and loaded for SnapshotCost's time per GiB, one per database at a time. The periodic
//     snapshot runs only when a test starts it (StartPeriodicSnapshot); there are no WAL files, no
//     exit snapshots, no retention of old snapshots, and a restarted instance keeps its data in
//     memory: it reads its snapshot directory only for a database that holds nothing (a RECOVER
//     SNAPSHOT stopped while it loaded), and at once. RECOVER SNAPSHOT's epoch change is not
//     modelled (the simulator has no epochs); its force-recovery of every replica is, and so is
//     the file a failed S3 download leaves. A snapshot holds no users: RECOVER SNAPSHOT leaves them.
package sim

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
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
	// TLS is --bolt-cert-file/--bolt-key-file given in memory: Bolt only over TLS; nil is
	// plaintext. An instance given it (and no Files) reloads nothing and succeeds on RELOAD … TLS.
	TLS *tls.Config
	// Files are TLS flags naming files (Bolt's replace TLS), read at start and on RELOAD … TLS.
	Files TLSFiles
	// Version is the image's Memgraph version, "X.Y.Z" with an optional suffix
	// ("3.12.0-relwithdebinfo"); "" or anything else is unknown (versions.go).
	Version string
}

// DataSpec is a data instance's process flags (the replication port is chosen at registration).
type DataSpec struct {
	Host           string
	BoltPort       int32
	ManagementPort int32
	TLS            *tls.Config // as CoordinatorSpec.TLS
	Files          TLSFiles    // as CoordinatorSpec.Files
	Version        string      // as CoordinatorSpec.Version
	// DataDir is --data-directory: the default database's snapshots are files in its
	// "snapshots" directory, another database's in "databases/<uuid>/snapshots". Empty: a
	// temporary directory of the world's own, removed by Close.
	DataDir string
	// Auth is the one user the instance has; nil: no users, so any basic or none credentials
	// are accepted (auth.go).
	Auth *Auth
}

// Option configures a World.
type Option func(*options)

type options struct {
	yield           func(leader int, alive []int) int
	clock           Clock
	readyDelay      time.Duration
	recoveryTime    time.Duration // WithReplicaRecoveryTime
	snapshotCost    SnapshotCost  // WithSnapshotCost
	transferTime    time.Duration // WithLeadershipTransferTime
	electionTimeout time.Duration // WithElectionTimeout
}

// WithYieldChooser replaces the default YIELD LEADERSHIP target rule (the next alive member
// after the leader in id order, cyclic). choose gets the leader's id and the other alive
// members' ids in ascending order (never empty) and returns one of them, or the leader's own id
// to have it re-elected in a new term; any other id makes the leader resign without a successor.
func WithYieldChooser(choose func(leader int, alive []int) int) Option {
	return func(o *options) { o.yield = choose }
}

// WithClock sets the clock every timed behaviour is measured on (the wall clock by default).
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithLeaderReadyDelay sets how long an elected leader, or one running FORCE RESET CLUSTER
// STATE, stays not ready before its first reconciliation attempt (0 by default).
func WithLeaderReadyDelay(d time.Duration) Option {
	return func(o *options) { o.readyDelay = max(d, 0) }
}

// Timing constants of Memgraph 3.12 (raft_state.cpp, coordinator_instance.cpp).
const (
	// LeadershipExpiry is how long a leader without a majority keeps leading.
	LeadershipExpiry = 2 * time.Second
	// AddCoordinatorWait is how long ADD COORDINATOR polls for the new server to join.
	AddCoordinatorWait    = 2 * time.Second
	reconcileBackoffStart = time.Second
	reconcileBackoffMax   = 60 * time.Second
	// YieldResignTimeout is how long a yielding leader that found no successor keeps leading
	// with writes paused before it resigns (NuRaft's election_timeout_upper_bound, raft_state.cpp
	// 321; raft_server.cxx 1257–1262, handle_timeout.cxx 62–70).
	YieldResignTimeout = 4 * time.Second
	// CoordinatorInitTimeout is how long a starting coordinator waits to learn a leader (to be
	// initialized) before its process exits (raft_state.cpp 392–401).
	CoordinatorInitTimeout = 120 * time.Second
)

// World holds every simulated instance. All state sits behind one mutex; Bolt connections run
// on their own goroutines and take it per request.
type World struct {
	opts options

	mu        sync.Mutex
	cond      *sync.Cond           // on mu: blocked queries wait on it
	blocked   int                  // queries waiting on cond, their wake-up already scheduled
	cur       time.Time            // the time the state was last evaluated at (never goes back)
	instances map[string]*instance // by host; removed instances are deleted
	deaths    map[string]time.Time // by host: when the process last stopped
	joinDelay map[string]time.Duration
	joins     []*pendingJoin
	clusterID int
	queries   []Query
	changes   []Change // what the World changed in what Memgraph reports (changes.go)
	misuses   []Misuse
	acked     map[string]int64  // per database: writes the simulator acknowledged (Acknowledged)
	tempDirs  map[string]string // by host: data directories of instances started without DataDir
	extra     map[string]string // AddAddress: advertised → dial
	closed    bool
	// cells are SHOW INSTANCES' string cells, boxed once (views.go): a table is read on every
	// converged sync, and boxing each cell again was most of the simulator's share of it.
	cells map[string]any
}

type instance struct {
	host  string
	coord bool
	cspec CoordinatorSpec
	dspec DataSpec

	alive  bool
	server *bolt.Server
	addr   string // loopback address of the (last) listener

	latency   time.Duration
	startedAt time.Time // when the process last started

	// boltCert is the Bolt certificate served when the spec names files (tls.go); handshakes
	// read it without w.mu.
	boltCert atomic.Pointer[tls.Certificate]
	// peer is the intra-cluster TLS identity read from the --cluster-* files; nil without them.
	peer *peerIdentity

	cluster *cluster // coordinators: the Raft group this process is part of
	// initialized: the coordinator has learnt a leader since it started (a fresh one leads
	// itself); one that is not within CoordinatorInitTimeout exits.
	initialized bool

	txns map[string]int64 // data instances: committed transactions per database (its databases)
	auth *authData        // data instances: users and roles (authdata.go)
	lag  map[string]int64 // data instances: txns kept behind the main per database
	// writeBlocked: the process restarted and, as MAIN, refuses writes until the leader
	// re-promotes it (writable.go).
	writeBlocked bool
	// recoverAt: a replica found behind its MAIN recovers until then (zero: not recovering).
	recoverAt time.Time
	// diverged: the data branched off any MAIN's (Diverge); recoveryFails: every recovery of it
	// fails (FailRecovery), after which its MAIN holds it MAYBE_BEHIND until retryAt.
	diverged, recoveryFails bool
	retryAt                 time.Time
	// cache is, while this instance is MAIN, its per-replica (by registered name) per-database
	// committed count, advance-only (recovery.go); a new process or a promotion starts it empty.
	cache map[string]map[string]int64
	// snapshotRuns and loadRuns are the snapshots being written and loaded, by database
	// (snapshots.go, recoversnapshot.go); a stopped process has none.
	snapshotRuns map[string]*snapshotRun
	loadRuns     map[string]*loadRun
}

func (i *instance) version() string {
	if i.coord {
		return i.cspec.Version
	}
	return i.dspec.Version
}

func (i *instance) boltPort() int32 {
	if i.coord {
		return i.cspec.BoltPort
	}
	return i.dspec.BoltPort
}

func (i *instance) mgmtAddr() string { return hostPort(i.host, i.mgmtPort()) }

func (i *instance) mgmtPort() int32 {
	if i.coord {
		return i.cspec.ManagementPort
	}
	return i.dspec.ManagementPort
}

// mgmtAt reports whether addr is mgmtAddr(), without building it: the simulated leader looks
// its data instances up by address on every SHOW INSTANCES.
func (i *instance) mgmtAt(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	var buf [12]byte
	return err == nil && host == i.host && port == string(strconv.AppendInt(buf[:0], int64(i.mgmtPort()), 10))
}

func (i *instance) coordAddr() string { return hostPort(i.host, i.cspec.CoordinatorPort) }

func hostPort(host string, port int32) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// NewWorld returns an empty world.
func NewWorld(opts ...Option) *World {
	w := &World{instances: map[string]*instance{}, deaths: map[string]time.Time{}, joinDelay: map[string]time.Duration{},
		acked: map[string]int64{}}
	w.cond = sync.NewCond(&w.mu)
	w.opts.clock = wallClock{}
	for _, o := range opts {
		o(&w.opts)
	}
	w.cur = w.opts.clock.Now()
	return w
}

// Close stops every listener. The world cannot be used afterwards.
func (w *World) Close() {
	w.mu.Lock()
	w.closed = true
	w.cond.Broadcast()
	var servers []*bolt.Server
	for _, in := range w.instances {
		if in.server != nil {
			servers = append(servers, in.server)
			in.server = nil
		}
		in.alive = false
	}
	dirs := w.tempDirs
	w.tempDirs = nil
	w.mu.Unlock()
	for _, s := range servers {
		s.Close()
	}
	for _, d := range dirs {
		_ = os.RemoveAll(d)
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
	defer w.settle()
	w.advance()
	if in, ok := w.instances[spec.Host]; ok {
		if in.coord && in.cspec == spec && in.alive {
			return nil
		}
		return fmt.Errorf("sim: host %s already exists (use Restart, Wipe or Remove)", spec.Host)
	}
	in := &instance{host: spec.Host, coord: true, cspec: spec, initialized: true}
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
	defer w.settle()
	w.advance()
	if in, ok := w.instances[spec.Host]; ok {
		if !in.coord && in.dspec == spec && in.alive {
			return nil
		}
		return fmt.Errorf("sim: host %s already exists (use Restart, Wipe or Remove)", spec.Host)
	}
	in := &instance{host: spec.Host, dspec: spec, txns: map[string]int64{defaultDB: 0}, lag: map[string]int64{}, auth: seedAuth(spec.Auth)}
	if err := w.listen(in); err != nil {
		return err
	}
	w.checkStartedVersion(in)
	w.dataLivenessChanged(in)
	return nil
}

const defaultDB = "memgraph"

// listen opens the instance's Bolt listener, on its previous port when it had one so clients
// holding the resolved address reconnect after a restart. Caller holds w.mu.
func (w *World) listen(in *instance) error {
	if w.closed {
		return fmt.Errorf("sim: world is closed")
	}
	if err := in.loadTLS(); err != nil {
		return fmt.Errorf("sim: %s does not start: %w", in.host, err)
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
	in.server, in.addr, in.alive, in.startedAt = srv, srv.Addr(), true, w.cur
	w.changed(in.host, "process started")
	w.instances[in.host] = in
	return nil
}

// AddAddress makes Resolve map advertised (host:port) to dial: another server a simulated pod
// runs beside Memgraph (the backup agent). RemoveAddress forgets it.
func (w *World) AddAddress(advertised, dial string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.extra == nil {
		w.extra = map[string]string{}
	}
	w.extra[advertised] = dial
}

// RemoveAddress undoes AddAddress.
func (w *World) RemoveAddress(advertised string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.extra, advertised)
}

// Resolve maps "<Host>:<BoltPort>" of a started (possibly killed) instance to its loopback
// listener, and an address given to AddAddress to its own; any other address is returned
// unchanged. It implements memgraph.Resolver.
func (w *World) Resolve(address string) string {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return address
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if to, ok := w.extra[address]; ok {
		return to
	}
	in, ok := w.instances[host]
	if !ok || strconv.Itoa(int(in.boltPort())) != port {
		return address
	}
	return in.addr
}

// handler binds one instance's Bolt listener to the world.
type handler struct {
	w  *World
	in *instance
}

func (h *handler) Run(req bolt.Request) (*bolt.Prepared, *bolt.Failure) {
	return h.w.run(h.in, req)
}

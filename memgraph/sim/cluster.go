package sim

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// cluster is one Raft group's replicated state as every member sees it, plus the leader's own
// volatile state (readiness, connectors), which a leadership change resets.
type cluster struct {
	seq     int
	members []*member // Raft (NuRaft) configuration, in the order servers joined
	leader  int       // coordinator id of the leader; 0 when there is none
	data    []*dataEntry
	main    string // name of the data instance that is MAIN in Raft; "" when none
	// orphan: the last view of a coordinator removed from its cluster, which no leader can ever
	// act on again. Its registrations drive no data instance (dataClusters).
	orphan bool
	// demoted is the MAIN the last Raft write demoted, "" after any other write: a SET that
	// follows at once is a handover's, whose old MAIN the version misuse excepts.
	demoted  string
	settings map[string]string

	// term changes with every leadership change; a blocked FORCE RESET compares it.
	term int
	// ready: the leader finished reconciling (LEADER_READY). A not-ready leader answers SHOW
	// INSTANCES with its local view (every health unknown) and every write with the "leader
	// couldn't be found" text; it next tries to reconcile at reconcileAt, retrying after backoff.
	ready       bool
	readySince  time.Time
	reconcileAt time.Time
	backoff     time.Duration
	// quorumLostAt is when the live leader lost its majority (zero while it has one): it keeps
	// leading until quorumLostAt+LeadershipExpiry.
	quorumLostAt time.Time
	// connectors are the leader's failure detectors per data instance name: when each was
	// created (it starts alive). REGISTER, a reconciliation (after an election or a FORCE
	// RESET) create them.
	connectors map[string]time.Time
	// failoverStuck: the last failover attempt for a dead MAIN found no candidate; the next one
	// waits for a data instance to start, stop or be registered.
	failoverStuck bool
	// electAt: without a leader, the lowest-id alive member is elected then, a majority
	// permitting (zero: no election pending). election.go.
	electAt time.Time
	// yieldAt: the leader yields then, to yieldTo (0: no successor, it resigns); until then every
	// Raft write fails (zero: not yielding). election.go.
	yieldAt time.Time
	yieldTo int
	// frozen: the leader's health checks stopped (a health-check frequency of 0 committed while
	// it led, healthcheck.go), with its view of the data instances then; nil while they run.
	frozen *frozenChecks
}

// member is a coordinator in the Raft configuration. added is true once the leader's
// application log holds it (ADD COORDINATOR completed); a coordinator's own entry before ADD
// COORDINATOR for itself, and a member whose ADD timed out but whose join NuRaft completed later
// (half-joined), are not added: SHOW INSTANCES lists them with an empty bolt_server.
type member struct {
	id          int
	host        string
	bolt        string
	coordServer string
	mgmt        string
	added       bool
}

// dataEntry is a registered data instance.
type dataEntry struct {
	name, bolt, mgmt, repl, mode string
}

// settingOrder is SHOW COORDINATOR SETTINGS' row order with Memgraph's defaults.
var settingOrder = []struct{ name, def string }{
	{"enabled_reads_on_main", "false"},
	{"sync_failover_only", "true"},
	{"max_failover_replica_lag", "18446744073709551615"},
	{"max_replica_read_lag", "18446744073709551615"},
	{"deltas_batch_progress_size", "100000"},
	{"instance_down_timeout_sec", "5"},
	{"instance_health_check_frequency_sec", "1"},
	{"global_read_only", "false"},
}

// newCluster makes the one-member cluster a fresh coordinator leads. Caller holds w.mu.
func (w *World) newCluster(self *instance) *cluster {
	w.clusterID++
	// A fresh coordinator leads its one-member cluster and has nothing to reconcile.
	c := &cluster{seq: w.clusterID, leader: self.cspec.ID, term: 1, ready: true, readySince: w.cur,
		settings: map[string]string{}, connectors: map[string]time.Time{}}
	for _, s := range settingOrder {
		c.settings[s.name] = s.def
	}
	c.members = []*member{{id: self.cspec.ID, host: self.host, coordServer: self.coordAddr(), mgmt: self.mgmtAddr()}}
	return c
}

func (c *cluster) member(id int) *member {
	for _, m := range c.members {
		if m.id == id {
			return m
		}
	}
	return nil
}

func (c *cluster) entry(name string) *dataEntry {
	for _, e := range c.data {
		if e.name == name {
			return e
		}
	}
	return nil
}

// memberAlive: the member's process runs and still belongs to this Raft group (a wiped or
// removed coordinator no longer answers for its old cluster).
func (w *World) memberAlive(c *cluster, m *member) bool {
	in, ok := w.instances[m.host]
	return ok && in.coord && in.alive && in.cluster == c && in.cspec.ID == m.id && w.reachableFromLeader(c, in)
}

func (w *World) aliveIDs(c *cluster) []int {
	var ids []int
	for _, m := range c.members {
		if w.memberAlive(c, m) {
			ids = append(ids, m.id)
		}
	}
	sort.Ints(ids)
	return ids
}

func (w *World) hasQuorum(c *cluster) bool { return 2*len(w.aliveIDs(c)) > len(c.members) }

// dataInstance finds the running-or-killed data instance a registration points at, by its
// management server (the address the coordinator talks to).
func (w *World) dataInstance(e *dataEntry) *instance {
	for _, in := range w.instances {
		if !in.coord && in.mgmtAt(e.mgmt) {
			return in
		}
	}
	return nil
}

// dataAlive: the instance runs and the leader's management channel reaches it.
func (w *World) dataAlive(c *cluster, e *dataEntry) bool {
	in := w.dataInstance(e)
	return in != nil && in.alive && w.reachableFromLeader(c, in)
}

// clusters lists every Raft group some coordinator process still belongs to, oldest first.
func (w *World) clusters() []*cluster {
	seen := map[*cluster]bool{}
	var out []*cluster
	for _, in := range w.instances {
		if in.coord && in.cluster != nil && !seen[in.cluster] {
			seen[in.cluster] = true
			out = append(out, in.cluster)
		}
	}
	slices.SortFunc(out, func(a, b *cluster) int { return a.seq - b.seq })
	return out
}

// dataClusters are the clusters whose registrations drive data instances: every one but a removed
// coordinator's orphaned view. A data instance's role, and whom it replicates from, come from the
// coordinators' RPCs, which an orphan's state machine can never send: it has no leader, ever.
func (w *World) dataClusters() []*cluster {
	return deleteFunc(w.clusters(), func(c *cluster) bool { return c.orphan })
}

// reelect applies the election rule to every cluster after a liveness or membership change: a
// dead leader is replaced by the lowest-id alive member while a majority is alive (after the
// election timeout, WithElectionTimeout; at once by default), otherwise there is no leader. A
// live leader that lost its majority keeps leading until LeadershipExpiry has passed (advance
// ends it); one that regains its majority before then goes on.
func (w *World) reelect() {
	for _, c := range w.clusters() {
		if c.leader != 0 {
			if m := c.member(c.leader); m != nil && w.memberAlive(c, m) {
				w.trackQuorum(c)
				w.markInitialized(c)
				continue
			}
			w.loseLeader(c)
		}
		w.scheduleElection(c)
	}
}

func (w *World) trackQuorum(c *cluster) {
	switch {
	case w.hasQuorum(c):
		c.quorumLostAt = time.Time{}
	case c.quorumLostAt.IsZero():
		c.quorumLostAt = w.cur
	}
}

// setLeader starts a new term led by id. The new leader is not ready until it reconciles.
func (w *World) setLeader(c *cluster, id int) {
	c.leader, c.term, c.quorumLostAt = id, c.term+1, time.Time{}
	w.clusterChanged(c, fmt.Sprintf("%s leads (term %d)", coordName(id), c.term))
	c.electAt, c.yieldAt, c.yieldTo = time.Time{}, time.Time{}, 0
	w.startReconciling(c)
	w.markInitialized(c)
}

func (w *World) loseLeader(c *cluster) {
	c.leader, c.term, c.ready, c.quorumLostAt = 0, c.term+1, false, time.Time{}
	w.clusterChanged(c, fmt.Sprintf("no leader (term %d)", c.term))
	c.yieldAt, c.yieldTo = time.Time{}, 0
	c.connectors, c.frozen = map[string]time.Time{}, nil
}

// startReconciling makes the leader not ready (after an election or on FORCE RESET): its first
// attempt comes after the configured delay, later ones after a doubling backoff.
func (w *World) startReconciling(c *cluster) {
	c.ready, c.reconcileAt, c.backoff = false, w.cur.Add(w.opts.readyDelay), reconcileBackoffStart
	w.clusterChanged(c, "leader not ready (reconciling)")
	c.connectors, c.frozen = map[string]time.Time{}, nil
}

// reconcileOnce is one ReconcileClusterState_ attempt at w.cur: it succeeds at once with a MAIN
// in Raft (alive or not) or without data instances; otherwise it fails over to the most
// up-to-date alive replica, and without one (or without a majority to commit) it tries again
// after the backoff. Success creates a connector, alive, for every data instance. With data
// instances and a health-check frequency of 0 in Raft the leader aborts first (healthcheck.go).
func (w *World) reconcileOnce(c *cluster) {
	if len(c.data) > 0 && w.abortOnHealthCheck(c) {
		return
	}
	if len(c.data) > 0 && c.main == "" && !w.failover(c) {
		c.reconcileAt = w.cur.Add(c.backoff)
		c.backoff = min(2*c.backoff, reconcileBackoffMax)
		return
	}
	c.ready, c.readySince, c.failoverStuck = true, w.cur, false
	w.clusterChanged(c, "leader ready")
	for _, e := range c.data {
		c.connectors[e.name] = w.cur
	}
}

// failover promotes the most up-to-date eligible alive replica (Memgraph v3.12.0
// coordinator_instance.cpp, ChooseMostUpToDateInstance). It reports whether a new MAIN was
// committed; otherwise the old MAIN stays MAIN in Raft.
func (w *World) failover(c *cluster) bool {
	if !w.canAppend(c) {
		return false
	}
	var mainTxns map[string]int64
	if e := c.entry(c.main); e != nil {
		if in := w.dataInstance(e); in != nil {
			mainTxns = in.txns
		}
	}
	maxLag := parseUint(c.settings["max_failover_replica_lag"])
	syncOnly := c.settings["sync_failover_only"] == "true"
	type cand struct {
		name string
		txns map[string]int64
	}
	var cands []cand
	for _, e := range c.data {
		if e.name == c.main || !w.dataAlive(c, e) || (syncOnly && e.mode == "async") {
			continue
		}
		in := w.dataInstance(e)
		tooFar := false
		for db, n := range mainTxns {
			if lag := n - in.txns[db]; lag > 0 && uint64(lag) > maxLag {
				tooFar = true
			}
		}
		if !tooFar {
			cands = append(cands, cand{e.name, in.txns})
		}
	}
	if len(cands) == 0 {
		return false
	}
	// Per database find the newest count; the candidate newest on most databases wins, then the
	// larger sum, then the smallest name.
	best := map[string]int64{}
	for _, cd := range cands {
		for db, n := range cd.txns {
			best[db] = max(best[db], n)
		}
	}
	score := func(cd cand) (wins int, sum int64) {
		for db, n := range cd.txns {
			sum += n
			if n == best[db] {
				wins++
			}
		}
		return
	}
	slices.SortFunc(cands, func(a, b cand) int {
		wa, sa := score(a)
		wb, sb := score(b)
		switch {
		case wa != wb:
			return wb - wa
		case sa != sb:
			if sa > sb {
				return -1
			}
			return 1
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	w.promote(c, cands[0].name)
	return true
}

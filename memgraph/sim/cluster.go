package sim

import (
	"slices"
	"sort"
)

// cluster is one Raft group's replicated state as every member sees it.
type cluster struct {
	seq      int
	members  []*member // Raft configuration, in the order servers joined
	leader   int       // coordinator id of the leader; 0 when there is none
	data     []*dataEntry
	main     string // name of the data instance that is MAIN in Raft; "" when none
	settings map[string]string
}

// member is a coordinator in the Raft configuration. added is false only for a coordinator's
// own entry before ADD COORDINATOR for itself (it then shows with an empty bolt_server).
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
	c := &cluster{seq: w.clusterID, leader: self.cspec.ID, settings: map[string]string{}}
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
	return ok && in.coord && in.alive && in.cluster == c && in.cspec.ID == m.id
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
		if !in.coord && in.mgmtAddr() == e.mgmt {
			return in
		}
	}
	return nil
}

func (w *World) dataAlive(e *dataEntry) bool {
	in := w.dataInstance(e)
	return in != nil && in.alive
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

// reelect applies the deterministic election rule to every cluster after a liveness change:
// a dead leader is replaced by the lowest-id alive member while a majority is alive, otherwise
// there is no leader. A live leader that lost its majority keeps believing it leads until its
// next Raft write fails. A new leader reconciles the cluster (failover if MAIN is dead or absent).
func (w *World) reelect() {
	for _, c := range w.clusters() {
		if c.leader != 0 {
			if m := c.member(c.leader); m != nil && w.memberAlive(c, m) {
				continue
			}
			c.leader = 0
		}
		alive := w.aliveIDs(c)
		if 2*len(alive) > len(c.members) {
			w.setLeader(c, alive[0])
		}
	}
}

func (w *World) setLeader(c *cluster, id int) {
	c.leader = id
	w.reconcile(c)
}

// leaderReady: the cluster has a leader that can commit to Raft.
func (w *World) leaderReady(c *cluster) bool { return c.leader != 0 && w.hasQuorum(c) }

// reconcile is ReconcileClusterState_: with no current MAIN, or a dead one, try a failover.
func (w *World) reconcile(c *cluster) {
	if !w.leaderReady(c) || len(c.data) == 0 {
		return
	}
	if e := c.entry(c.main); e != nil && w.dataAlive(e) {
		return
	}
	w.failover(c)
}

// failover promotes the most up-to-date eligible alive replica (memgraph-ha.md §5). It
// reports whether a new MAIN was committed; otherwise the old MAIN stays MAIN in Raft.
func (w *World) failover(c *cluster) bool {
	if !w.leaderReady(c) {
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
		if e.name == c.main || !w.dataAlive(e) || (syncOnly && e.mode == "async") {
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
	c.main = cands[0].name
	return true
}

// dataCameUp runs when a data instance starts or restarts: it catches up with its MAIN (unless
// lagged) and, where the Raft MAIN is dead, the leader's health check fails over again.
func (w *World) dataCameUp(in *instance) {
	for _, c := range w.clusters() {
		for _, e := range c.data {
			if w.dataInstance(e) != in {
				continue
			}
			w.catchUp(c, in)
			if me := c.entry(c.main); me != nil && !w.dataAlive(me) {
				w.failover(c)
			}
		}
	}
}

// dataWentDown runs when a data instance dies: the MAIN's death triggers failover.
func (w *World) dataWentDown(in *instance) {
	for _, c := range w.clusters() {
		if e := c.entry(c.main); e != nil && w.dataInstance(e) == in {
			w.failover(c)
		}
	}
}

// catchUp brings a replica to its MAIN's counts minus its configured lag.
func (w *World) catchUp(c *cluster, in *instance) {
	me := c.entry(c.main)
	if me == nil {
		return
	}
	main := w.dataInstance(me)
	if main == nil || main == in || !main.alive || !in.alive {
		return
	}
	for db, n := range main.txns {
		if lag := in.lag[db]; lag > 0 {
			in.txns[db] = max(n-lag, 0)
		} else {
			in.txns[db] = max(in.txns[db], n)
		}
	}
}

func parseUint(s string) uint64 {
	var v uint64
	for _, r := range s {
		v = v*10 + uint64(r-'0')
	}
	return v
}

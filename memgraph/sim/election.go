package sim

import "time"

// WithElectionTimeout sets how long a cluster stays without a leader after its leader died, its
// leadership expired or it resigned without a successor, before the lowest-id alive member is
// elected (a majority permitting). Memgraph's Raft draws it from 2000–4000 ms (raft_state.cpp
// 320–321). 0, the default, elects at once.
func WithElectionTimeout(d time.Duration) Option {
	return func(o *options) { o.electionTimeout = max(d, 0) }
}

// WithLeadershipTransferTime sets how long YIELD LEADERSHIP takes to hand over: the yielding
// leader keeps leading but refuses every Raft write until then, when the chosen member leads in
// a new term (NuRaft pauses writes and resigns once the successor has caught up,
// raft_server.cxx 1169–1264, handle_append_entries.cxx 955–990). 0, the default, hands over at
// once.
func WithLeadershipTransferTime(d time.Duration) Option {
	return func(o *options) { o.transferTime = max(d, 0) }
}

// scheduleElection starts the election timer of a cluster without a leader while a majority of
// its members is alive; without a majority no election can succeed and the timer stops.
func (w *World) scheduleElection(c *cluster) {
	alive := w.aliveIDs(c)
	switch {
	case 2*len(alive) <= len(c.members):
		c.electAt = time.Time{}
	case w.opts.electionTimeout == 0:
		w.setLeader(c, alive[0])
	case c.electAt.IsZero():
		c.electAt = w.cur.Add(w.opts.electionTimeout)
	}
}

// elect is the election timer firing: the lowest-id alive member leads, a majority permitting.
func (w *World) elect(c *cluster) {
	c.electAt = time.Time{}
	if alive := w.aliveIDs(c); c.leader == 0 && 2*len(alive) > len(c.members) {
		w.setLeader(c, alive[0])
	}
}

// canAppend reports whether the leader can append to the Raft log: it has a majority and is not
// yielding (NuRaft refuses client requests while write_paused_, handle_client_request.cxx 100).
func (w *World) canAppend(c *cluster) bool {
	return c.leader != 0 && w.hasQuorum(c) && c.yieldAt.IsZero()
}

// yield is YIELD LEADERSHIP on the leader (NuRaft raft_server.cxx 1169–1264). A yield already
// running, or a sole voter, does nothing. With alive peers the successor is the chooser's (the
// next alive member after the leader by default); with none the leader keeps leading with writes
// paused for YieldResignTimeout and then resigns (handle_timeout.cxx 62–70), to be re-elected if
// it is still the lowest-id alive member of a majority.
func (w *World) yield(c *cluster) {
	if !c.yieldAt.IsZero() || len(c.members) <= 1 {
		return
	}
	var others []int
	for _, id := range w.aliveIDs(c) {
		if id != c.leader {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		c.yieldAt, c.yieldTo = w.cur.Add(YieldResignTimeout), 0
		return
	}
	next := others[0]
	for _, id := range others {
		if id > c.leader {
			next = id
			break
		}
	}
	if w.opts.yield != nil {
		next = w.opts.yield(c.leader, append([]int(nil), others...))
	}
	if w.opts.transferTime == 0 {
		w.handOver(c, next)
		return
	}
	c.yieldAt, c.yieldTo = w.cur.Add(w.opts.transferTime), next
}

// handOver ends a yield: the successor (possibly the leader itself) leads in a new term when it
// is an alive member of a majority; otherwise the leader resigns and an ordinary election
// follows.
func (w *World) handOver(c *cluster, next int) {
	c.yieldAt, c.yieldTo = time.Time{}, 0
	if m := c.member(next); m != nil && w.memberAlive(c, m) && w.hasQuorum(c) {
		w.setLeader(c, next)
		return
	}
	w.loseLeader(c)
	w.scheduleElection(c)
}

// markInitialized: every alive member of a cluster with a leader has heard from it.
func (w *World) markInitialized(c *cluster) {
	if c.leader == 0 {
		return
	}
	for _, m := range c.members {
		if w.memberAlive(c, m) {
			w.instances[m.host].initialized = true
		}
	}
}

// uninitializedExit returns the earliest start-up deadline of an alive coordinator that has not
// learnt a leader, and how to apply it: the process exits, as RaftState's start-up loop throws
// after 1200 × 100 ms (raft_state.cpp 392–401).
func (w *World) uninitializedExit() (time.Time, func(), bool) {
	var first *instance
	for _, in := range w.instances {
		if in.coord && in.alive && !in.initialized &&
			(first == nil || in.startedAt.Before(first.startedAt) || in.startedAt.Equal(first.startedAt) && in.host < first.host) {
			first = in
		}
	}
	if first == nil {
		return time.Time{}, nil, false
	}
	return first.startedAt.Add(CoordinatorInitTimeout), func() { w.exitProcess(first) }, true
}

// exitProcess is a process ending on its own while time advances: like Kill, with the listener
// torn down without waiting for its connections.
func (w *World) exitProcess(in *instance) {
	if srv := w.halt(in); srv != nil {
		srv.Abort()
	}
}

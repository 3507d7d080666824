package sim

import (
	"context"
	"net"
	"strconv"
	"time"
)

// advance brings every timed behaviour up to the clock's time, one event at a time in time
// order, each evaluated at its own instant (w.cur): late joins, coordinators giving up at
// start-up, replicas' recoveries, snapshots written and loaded, elections, leadership expiries, yields, reconciliation
// attempts of not-ready leaders, failovers of MAINs the leader has seen down for
// instance_down_timeout_sec, and re-promotions of restarted MAINs. Caller holds w.mu.
func (w *World) advance() {
	now := w.opts.clock.Now()
	for {
		at, apply := w.nextEvent()
		if apply == nil || at.After(now) {
			break
		}
		if at.After(w.cur) {
			w.cur = at
		}
		apply()
	}
	if now.After(w.cur) {
		w.cur = now
	}
}

// settle ends an entry point that changed state: it applies what became due and wakes blocked
// queries so they re-check. Caller holds w.mu.
func (w *World) settle() {
	w.advance()
	w.cond.Broadcast()
}

// nextEvent returns the earliest pending event and how to apply it (nil when none is pending).
// Ties go to the first found, in a fixed order: joins, start-up exits, recoveries, checks of
// replicas held MAYBE_BEHIND after a failed recovery, snapshots written, snapshots loaded, then per cluster (oldest first) election, expiry, yield,
// reconciliation, failover, re-promotion.
func (w *World) nextEvent() (time.Time, func()) {
	var best time.Time
	var apply func()
	consider := func(at time.Time, f func()) {
		if apply == nil || at.Before(best) {
			best, apply = at, f
		}
	}
	for _, j := range w.joins {
		consider(j.at, func() { w.completeJoin(j) })
	}
	for _, next := range []func() (time.Time, func(), bool){w.uninitializedExit, w.recoveryEnd, w.retryEnd, w.snapshotEnd, w.loadEnd} {
		if at, f, ok := next(); ok {
			consider(at, f)
		}
	}
	for _, c := range w.clusters() {
		w.clusterEvents(c, consider)
	}
	return best, apply
}

// clusterEvents offers one cluster's pending events.
func (w *World) clusterEvents(c *cluster, consider func(time.Time, func())) {
	if c.leader == 0 {
		if !c.electAt.IsZero() {
			consider(c.electAt, func() { w.elect(c) })
		}
		return
	}
	if !c.quorumLostAt.IsZero() {
		consider(c.quorumLostAt.Add(LeadershipExpiry), func() { w.loseLeader(c); w.scheduleElection(c) })
	}
	if !c.yieldAt.IsZero() {
		consider(c.yieldAt, func() { w.handOver(c, c.yieldTo) })
	}
	if !c.ready {
		consider(c.reconcileAt, func() { w.reconcileOnce(c) })
		return
	}
	if at, ok := w.mainDownAt(c); ok {
		consider(at, func() { c.failoverStuck = !w.failover(c) })
	}
	if at, f, ok := w.repromoteAt(c); ok {
		consider(at, f)
	}
}

// mainDownAt is when the ready leader's failure detector declares its dead MAIN down (and fails
// over); ok is false while the MAIN runs, when there is none, or while a failover found no
// candidate and nothing changed since.
func (w *World) mainDownAt(c *cluster) (time.Time, bool) {
	e := c.entry(c.main)
	if e == nil || c.failoverStuck || c.frozen != nil || w.dataAlive(c, e) {
		return time.Time{}, false
	}
	return w.dataLastSeen(c, e).Add(w.downTimeout(c)), true
}

func (w *World) downTimeout(c *cluster) time.Duration {
	return time.Duration(parseUint(c.settings["instance_down_timeout_sec"])) * time.Second
}

// dataLastSeen is the last moment the leader's connector counted e alive: the later of the
// process's death and the connector's creation.
func (w *World) dataLastSeen(c *cluster, e *dataEntry) time.Time {
	host := hostOf(e.mgmt)
	if in := w.dataInstance(e); in != nil {
		host = in.host
	}
	return later(w.deaths[host], c.connectors[e.name])
}

// dataHealthy is the ready leader's verdict on e: up while its process runs and for
// instance_down_timeout_sec after it was last seen; once its health checks stopped
// (cluster.frozen), the verdict it had then.
func (w *World) dataHealthy(c *cluster, e *dataEntry) bool {
	if c.frozen != nil {
		return c.frozen.healthy[e.name]
	}
	return w.dataAlive(c, e) || w.cur.Before(w.dataLastSeen(c, e).Add(w.downTimeout(c)))
}

// dataLastHeard is when the ready leader last heard from e: now while its process runs, else
// when it was last seen; once its health checks stopped, as of then.
func (w *World) dataLastHeard(c *cluster, e *dataEntry) time.Time {
	switch {
	case c.frozen != nil:
		return c.frozen.heard[e.name]
	case w.dataAlive(c, e):
		return w.cur
	}
	return w.dataLastSeen(c, e)
}

// memberLastSeen is the last moment the leader heard from m: the later of the process's death
// (or its departure to another cluster) and the leader becoming ready.
func (w *World) memberLastSeen(c *cluster, m *member) time.Time {
	return later(w.deaths[m.host], c.readySince)
}

func (w *World) memberHealthy(c *cluster, m *member) bool {
	return w.memberAlive(c, m) || w.cur.Before(w.memberLastSeen(c, m).Add(w.downTimeout(c)))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func hostOf(address string) string {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return address
	}
	return host
}

func msSince(now, then time.Time) int64 { return max(now.Sub(then).Milliseconds(), 0) }

// pendingJoin is a coordinator whose ADD COORDINATOR timed out but whose join NuRaft completes
// later (SetJoinDelay).
type pendingJoin struct {
	c                       *cluster
	id                      int
	host, coordServer, mgmt string
	at                      time.Time
}

// completeJoin makes the late coordinator a member of the cluster that asked for it, if it
// still runs, is still joinable and the cluster still has a leader: NuRaft knows it, the
// application log does not, so it shows with an empty bolt_server (half-joined).
func (w *World) completeJoin(j *pendingJoin) {
	w.joins = deleteFunc(w.joins, func(x *pendingJoin) bool { return x == j })
	target, ok := w.instances[j.host]
	if !ok || !target.alive || !target.coord || target.cspec.ID != j.id || target.cluster == j.c ||
		!w.joinable(target.cluster) || j.c.leader == 0 || j.c.member(j.id) != nil || !w.clusterLives(j.c) {
		return
	}
	target.cluster = j.c
	j.c.members = append(j.c.members, &member{id: j.id, host: j.host, coordServer: j.coordServer, mgmt: j.mgmt})
	w.reelect()
}

func (w *World) clusterLives(c *cluster) bool {
	for _, x := range w.clusters() {
		if x == c {
			return true
		}
	}
	return false
}

// waitUntil blocks a query (releasing w.mu) until something changed, the clock reached at, or
// the client hung up; it returns with w.mu held and the state advanced.
func (w *World) waitUntil(ctx context.Context, at time.Time) {
	stopTimer := w.opts.clock.At(at, w.wake)
	stopCtx := context.AfterFunc(ctx, w.wake)
	w.blocked++
	w.cond.Wait()
	w.blocked--
	stopTimer()
	stopCtx()
	w.advance()
}

// BlockedQueries is how many queries are waiting for the simulated cluster to change (FORCE
// RESET CLUSTER STATE until a reconciliation succeeds), each with its wake-up already scheduled
// on the World's clock. A test waits for it before it moves a ManualClock: a query that had only
// been logged could schedule its wake-up after the move, for a time the clock never reaches again.
func (w *World) BlockedQueries() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.blocked
}

func (w *World) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.settle()
}

func parseUint(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}

package sim

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// WithReplicaRecoveryTime sets how long a replica found behind its MAIN (restarted after
// missing commits, wiped, freed from a lag, or diverged) takes to recover. Meanwhile its
// committed counts stay where they were, the MAIN's SHOW REPLICAS reports it in "recovery" and
// the MAIN's cached count for it does not move (Memgraph v3.12.0
// src/storage/v2/replication/replication_client.cpp 248–252, 284–300). 0, the default, catches
// up at once.
func WithReplicaRecoveryTime(d time.Duration) Option {
	return func(o *options) { o.recoveryTime = max(d, 0) }
}

// mainOf is the cluster's MAIN in Raft when its process runs, else nil.
func (w *World) mainOf(c *cluster) *instance {
	e := c.entry(c.main)
	if e == nil {
		return nil
	}
	if in := w.dataInstance(e); in != nil && in.alive {
		return in
	}
	return nil
}

// entryOf is in's registration in c, nil when none.
func (w *World) entryOf(c *cluster, in *instance) *dataEntry {
	for _, e := range c.data {
		if in.mgmtAt(e.mgmt) {
			return e
		}
	}
	return nil
}

// promote makes name the MAIN in Raft. The instance starts a MAIN role afresh: writeable, with
// no recovery of its own and an empty per-replica cache, which the heartbeats to its replicas
// (catchUp) fill at once.
func (w *World) promote(c *cluster, name string) {
	c.main = name
	w.clusterChanged(c, "MAIN "+name)
	if in := w.dataInstance(c.entry(name)); in != nil {
		in.writeBlocked, in.recoverAt, in.retryAt, in.cache, in.diverged = false, time.Time{}, time.Time{}, nil, false
	}
	w.heartbeatAll(c)
}

// heartbeatAll is the MAIN's next heartbeat to every replica registered in c.
func (w *World) heartbeatAll(c *cluster) {
	for _, e := range c.data {
		if in := w.dataInstance(e); in != nil {
			w.catchUp(c, in)
		}
	}
}

// dataLivenessChanged runs when a data instance starts, restarts or stops: the MAINs heartbeat
// their replicas (a started one is found behind or caught up), and a failover that found no
// candidate may find one now.
func (w *World) dataLivenessChanged(in *instance) {
	for _, c := range w.dataClusters() {
		c.failoverStuck = false
		w.heartbeatAll(c)
	}
}

// catchUp is the MAIN's heartbeat to a replica (replication_client.cpp UpdateReplicaState): one
// that cannot read the MAIN's messages (versions.go) or is recovering is left alone; one found
// behind — or holding transactions the MAIN lacks, a diverged history that HA recovers by
// force-resetting it from the MAIN (branching point, 139–230) — recovers for
// WithReplicaRecoveryTime; one up to date (at once when the recovery time is 0) holds the MAIN's
// counts minus its configured lag, and the MAIN caches its count.
func (w *World) catchUp(c *cluster, in *instance) {
	main := w.mainOf(c)
	if main == nil || main == in || !in.alive || w.versionBlocked(main, in) || in.diverged {
		return
	}
	w.systemRecover(main, in)
	if !in.recoverAt.IsZero() || w.cur.Before(in.retryAt) {
		return
	}
	if (w.opts.recoveryTime > 0 || in.recoveryFails) && behind(main, in) {
		in.retryAt = time.Time{}
		if w.opts.recoveryTime == 0 {
			w.failedRecovery(in) // the attempt fails at once
			return
		}
		in.recoverAt = w.cur.Add(w.opts.recoveryTime)
		return
	}
	w.follow(c, main, in)
}

// follow sets a replica to its MAIN's counts minus its lag and records them in the MAIN's cache.
func (w *World) follow(c *cluster, main, in *instance) {
	for db, n := range main.txns {
		in.txns[db] = target(n, in.lag[db])
	}
	w.observe(c, main, in)
}

func target(mainTxns, lag int64) int64 { return max(mainTxns-lag, 0) }

// behind: the replica lacks some of what it should hold, or holds what the MAIN lacks.
func behind(main, in *instance) bool {
	for db, n := range main.txns {
		if have := in.txns[db]; have < target(n, in.lag[db]) || have > n {
			return true
		}
	}
	return false
}

// inSync: the replica takes the MAIN's next commit on db as it comes (READY in Memgraph).
func (w *World) inSync(main, in *instance, db string) bool {
	return in != nil && in.alive && in.recoverAt.IsZero() && in.retryAt.IsZero() && !in.diverged && !w.versionBlocked(main, in) &&
		in.txns[db] == target(main.txns[db], in.lag[db])
}

// observe merges the replica's counts into its MAIN's cache, advance-only (Max,
// replication_client.cpp 264–275; replication_transaction.cpp UpdateCommitTsInfo).
func (w *World) observe(c *cluster, main, in *instance) {
	e := w.entryOf(c, in)
	if e == nil {
		return
	}
	if main.cache == nil {
		main.cache = map[string]map[string]int64{}
	}
	m := main.cache[e.name]
	if m == nil {
		m = map[string]int64{}
		main.cache[e.name] = m
	}
	for db := range main.txns {
		m[db] = max(m[db], in.txns[db])
	}
}

// cached is the MAIN's cached count for a replica (0 when it has none).
func cached(main *instance, name, db string) int64 { return main.cache[name][db] }

// recoveryEnd returns the earliest end of a replica's recovery and how to apply it.
func (w *World) recoveryEnd() (time.Time, func(), bool) {
	var first *instance
	for _, in := range w.instances {
		if in.coord || !in.alive || in.recoverAt.IsZero() {
			continue
		}
		if first == nil || in.recoverAt.Before(first.recoverAt) || in.recoverAt.Equal(first.recoverAt) && in.host < first.host {
			first = in
		}
	}
	if first == nil {
		return time.Time{}, nil, false
	}
	return first.recoverAt, func() { w.finishRecovery(first) }, true
}

// finishRecovery: the replica now holds what its MAIN has (if it still has an alive MAIN it can
// read; otherwise the next heartbeat finds it behind again).
func (w *World) finishRecovery(in *instance) {
	in.recoverAt = time.Time{}
	if in.recoveryFails {
		w.failedRecovery(in)
		return
	}
	for _, c := range w.dataClusters() {
		if w.entryOf(c, in) == nil {
			continue
		}
		if main := w.mainOf(c); main != nil && main != in && !w.versionBlocked(main, in) {
			w.follow(c, main, in)
		}
	}
}

// commitOn commits n transactions on a MAIN: every replica in sync on db takes them (minus its
// lag) and the MAIN caches its count; the others are heartbeaten (a new database's count starts
// at 0).
func (w *World) commitOn(main *instance, db string, n int64) {
	type rep struct {
		c      *cluster
		in     *instance
		synced bool
	}
	var reps []rep
	for _, c := range w.dataClusters() {
		if e := c.entry(c.main); e == nil || w.dataInstance(e) != main {
			continue
		}
		for _, e := range c.data {
			if in := w.dataInstance(e); in != nil && in != main {
				if _, ok := in.txns[db]; !ok {
					in.txns[db] = 0
				}
				reps = append(reps, rep{c, in, w.inSync(main, in, db)})
			}
		}
	}
	main.txns[db] += n
	for _, r := range reps {
		if r.synced {
			r.in.txns[db] = target(main.txns[db], r.in.lag[db])
			w.observe(r.c, main, r.in)
		} else {
			w.catchUp(r.c, r.in)
		}
	}
}

// checkPromotedCaughtUp records MisusePromoteBehind when a handover's SET (right after the
// DEMOTE of demoted) makes a MAIN of e while it holds fewer transactions than the demoted MAIN
// on some database. Caller holds w.mu, before the promotion.
func (w *World) checkPromotedCaughtUp(c *cluster, demoted string, e *dataEntry, op *coordOp) {
	old, target := c.entry(demoted), w.dataInstance(e)
	if old == nil || target == nil {
		return
	}
	from := w.dataInstance(old)
	if from == nil {
		return
	}
	for _, db := range sortedKeys(from.txns) {
		if have, want := target.txns[db], from.txns[db]; have < want {
			w.misuse(op.host, op.query, MisusePromoteBehind, fmt.Sprintf(
				"SET INSTANCE %s TO MAIN after DEMOTE INSTANCE %s: %s holds %d of the %d transactions %s committed on database %s; "+
					"the cluster follows %s and the rest are lost", e.name, demoted, e.name, have, want, demoted, db, e.name))
			return
		}
	}
}

func sortedKeys(m map[string]int64) []string { return slices.Sorted(maps.Keys(m)) }

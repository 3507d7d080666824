package sim

import (
	"fmt"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// Kill stops an instance's process (its listener refuses connections; open ones are closed).
// Its state is kept for Restart. A dead leader is replaced at once (lowest alive id, majority
// permitting); a dead MAIN fails over once the leader has seen it down for
// instance_down_timeout_sec.
func (w *World) Kill(host string) error {
	w.mu.Lock()
	w.advance()
	in, err := w.aliveInstance(host)
	var srv *bolt.Server
	if err == nil {
		srv = w.stop(in)
	}
	w.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
	return err
}

// stop marks in dead and applies the consequences; the caller closes the returned server after
// releasing w.mu (its connections may be waiting for the lock).
func (w *World) stop(in *instance) *bolt.Server {
	srv := w.halt(in)
	w.settle()
	return srv
}

// halt marks in dead (a recovering replica stops recovering) and applies the consequences
// without advancing time; it returns the server to close.
func (w *World) halt(in *instance) *bolt.Server {
	srv := in.server
	in.server, in.alive, in.recoverAt, in.retryAt = nil, false, time.Time{}, time.Time{}
	abortRuns(in)
	w.deaths[in.host] = w.cur
	w.changed(in.host, "process stopped")
	if in.coord {
		w.reelect()
	} else {
		w.dataLivenessChanged(in)
	}
	return srv
}

// crash is a process exiting in the middle of a query (Memgraph's LOG_FATAL): like Kill, but the
// listener is torn down without waiting for its connections, one of which is answering.
func (w *World) crash(in *instance) {
	if srv := w.stop(in); srv != nil {
		srv.Abort()
	}
}

func (w *World) aliveInstance(host string) (*instance, error) {
	in, ok := w.instances[host]
	switch {
	case !ok:
		return nil, fmt.Errorf("sim: no instance %s", host)
	case !in.alive:
		return nil, fmt.Errorf("sim: instance %s is not running", host)
	}
	return in, nil
}

// Restart starts a killed instance again with its state (a running one is killed first). It
// listens on its previous loopback port when that is still free. A coordinator that learns no
// leader within CoordinatorInitTimeout exits; a data instance that Raft has as MAIN refuses
// writes until the leader re-promotes it (writes.go).
func (w *World) Restart(host string) error { return w.restart(host, false, nil) }

// Wipe restarts an instance with fresh state, as a pod whose volume was lost. A coordinator
// comes back as the leader of its own one-member cluster; its old cluster still lists it (as
// down). A data instance comes back with no committed transactions.
func (w *World) Wipe(host string) error { return w.restart(host, true, nil) }

// restart (re)starts host's process, wiped or on its state, at the version setVersion gives it
// (nil: unchanged).
func (w *World) restart(host string, wipe bool, setVersion func(*instance)) error {
	if err := w.killIfAlive(host); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.settle()
	w.advance()
	in, ok := w.instances[host]
	if !ok {
		return fmt.Errorf("sim: no instance %s", host)
	}
	was := in.version()
	if setVersion != nil {
		setVersion(in)
	}
	if wipe {
		if in.coord {
			in.cluster = w.newCluster(in)
		} else {
			in.txns, in.lag, in.auth = map[string]int64{defaultDB: 0}, map[string]int64{}, seedAuth(in.dspec.Auth)
			in.diverged, in.recoveryFails = false, false
			if err := w.wipeSnapshots(in); err != nil {
				return err
			}
		}
	}
	if err := w.listen(in); err != nil {
		return err
	}
	if in.coord {
		in.initialized = wipe // a wiped one leads itself; otherwise it waits to hear a leader
		w.reelect()
		return nil
	}
	in.writeBlocked, in.cache = true, nil
	if !wipe {
		w.recoverAtStart(in)
	}
	if in.version() != was {
		w.checkStartedVersion(in)
	}
	w.dataLivenessChanged(in)
	return nil
}

func (w *World) killIfAlive(host string) error {
	w.mu.Lock()
	w.advance()
	in, ok := w.instances[host]
	if !ok {
		w.mu.Unlock()
		return fmt.Errorf("sim: no instance %s", host)
	}
	var srv *bolt.Server
	if in.alive {
		srv = w.stop(in)
	}
	w.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
	return nil
}

// Remove deletes an instance for good (a pod scaled away): its address no longer resolves and
// clusters that list it see it down. The host may later be started afresh.
func (w *World) Remove(host string) error {
	if err := w.killIfAlive(host); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.instances, host)
	w.reelect()
	w.settle()
	return nil
}

// SetLag keeps a data instance txnsBehind transactions behind its MAIN on database db (0 lets
// it catch up). It applies at once and to every later Commit.
func (w *World) SetLag(host, db string, txnsBehind int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.settle()
	w.advance()
	in, ok := w.instances[host]
	if !ok || in.coord {
		return fmt.Errorf("sim: no data instance %s", host)
	}
	if txnsBehind < 0 {
		return fmt.Errorf("sim: negative lag %d", txnsBehind)
	}
	in.lag[db] = txnsBehind
	if _, ok := in.txns[db]; !ok {
		in.txns[db] = 0
	}
	for _, c := range w.dataClusters() {
		w.catchUp(c, in)
		w.recache(c, in, db)
	}
	return nil
}

// recache makes the MAIN's cached count for a replica kept behind by SetLag its count: the
// fault stands for a replica that was that far behind all along, which the advance-only cache
// would otherwise not show.
func (w *World) recache(c *cluster, in *instance, db string) {
	main, e := w.mainOf(c), w.entryOf(c, in)
	if main == nil || main == in || e == nil || main.cache[e.name] == nil || !w.inSync(main, in, db) {
		return
	}
	main.cache[e.name][db] = in.txns[db]
}

// Commit commits n transactions on database db of every alive, writeable current MAIN (one per
// cluster), as writes clients saw succeed: alive replicas in sync follow (minus their lag), the
// others do not, and no replication error is modelled. It fails when no cluster has an alive,
// writeable MAIN; otherwise the n count as acknowledged.
func (w *World) Commit(db string, n int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.settle()
	w.advance()
	done := map[*instance]bool{}
	for _, c := range w.dataClusters() {
		me := c.entry(c.main)
		if me == nil {
			continue
		}
		if main := w.dataInstance(me); main != nil && main.alive && !done[main] && !w.writeForbidden(main) {
			done[main] = true
			w.commitOn(main, db, n)
		}
	}
	if len(done) == 0 {
		return fmt.Errorf("sim: no alive, writeable MAIN to commit on")
	}
	w.acked[db] += n
	return nil
}

// Write is one client write on database db of the alive, writeable MAIN of the oldest cluster
// that has one, exactly as a Bolt write goes (boltWrite): acknowledged only when every SYNC or
// STRICT_SYNC replica confirms it, else the client's error is Memgraph's ReplicationException
// (a SYNC replica's failure still commits on the MAIN). It fails without such a MAIN.
func (w *World) Write(db string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.settle()
	w.advance()
	for _, c := range w.dataClusters() {
		me := c.entry(c.main)
		if me == nil {
			continue
		}
		if main := w.dataInstance(me); main != nil && main.alive && !w.writeForbidden(main) {
			if out := w.boltWrite(main, db); out.Err != nil {
				return fmt.Errorf("sim: write on %s: %s", me.name, out.Err.Message)
			}
			return nil
		}
	}
	return fmt.Errorf("sim: no alive, writeable MAIN to write on")
}

// SetLatency delays every reply to RUN on host by d (0 restores prompt replies).
func (w *World) SetLatency(host string, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	in, ok := w.instances[host]
	if !ok {
		return fmt.Errorf("sim: no instance %s", host)
	}
	in.latency = d
	return nil
}

// DropConnections closes every open Bolt connection of host; it keeps accepting new ones.
func (w *World) DropConnections(host string) error {
	w.mu.Lock()
	in, err := w.aliveInstance(host)
	var srv *bolt.Server
	if err == nil {
		srv = in.server
	}
	w.mu.Unlock()
	if srv != nil {
		srv.DropConnections()
	}
	return err
}

// ForceLeader makes the alive coordinator with this id the leader of its cluster (which must
// have a majority alive), in a new term: it is not ready until it reconciles, like any elected
// leader.
func (w *World) ForceLeader(id int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.settle()
	w.advance()
	var found []*cluster
	for _, c := range w.clusters() {
		if m := c.member(id); m != nil && w.memberAlive(c, m) {
			found = append(found, c)
		}
	}
	switch {
	case len(found) == 0:
		return fmt.Errorf("sim: no alive coordinator %d in any cluster", id)
	case len(found) > 1:
		return fmt.Errorf("sim: coordinator id %d is alive in %d clusters", id, len(found))
	case !w.hasQuorum(found[0]):
		return fmt.Errorf("sim: the cluster of coordinator %d has no majority alive", id)
	}
	if found[0].leader != id {
		w.setLeader(found[0], id)
	}
	return nil
}

// SetJoinDelay is a simulator fault: the coordinator at host (started or not) takes d to join a
// cluster that ADD COORDINATOR asks it to join. From AddCoordinatorWait on, ADD COORDINATOR
// answers "reached a timeout!" and NuRaft still completes the join d after the ADD, if the
// coordinator then runs and can join: a half-joined member, listed with an empty bolt_server.
// 0 restores prompt joins.
func (w *World) SetJoinDelay(host string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("sim: negative join delay %v", d)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if in, ok := w.instances[host]; ok && !in.coord {
		return fmt.Errorf("sim: %s is a data instance", host)
	}
	w.joinDelay[host] = d
	return nil
}

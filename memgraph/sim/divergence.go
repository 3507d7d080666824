package sim

import (
	"fmt"
	"time"
)

// ReplicaCheckInterval is how often a MAIN checks a replica it holds MAYBE_BEHIND ("invalid")
// again: --replication-replica-check-frequency-sec, 1 s by default (Memgraph v3.12.0
// src/flags/replication.cpp 17; replication_handler.cpp 160–190 calls
// TryCheckReplicaStateAsync for every such replica on each check).
const ReplicaCheckInterval = time.Second

// Diverge marks a data instance's data as diverged from any MAIN: its MAIN's SHOW REPLICAS
// reports it "diverged" while it runs ("invalid" while it is down, as a lost connection sets
// every client MAYBE_BEHIND), the MAIN sends it nothing (StartTransactionReplication's
// DIVERGED_FROM_MAIN case: a SYNC or STRICT_SYNC write cannot be confirmed by it) and never
// recovers it, whatever is unregistered and registered again; only fresh data (Wipe) or its
// promotion ends it. This is how Memgraph 3.12 treats a branching point on a MAIN that no
// coordinator manages (src/storage/v2/replication/replication_client.cpp 196–207, 224–232);
// a MAIN under coordinators — every MAIN of an HA cluster, this simulator's included — instead
// force-recovers such a replica (RECOVERY, 208–222), which the simulator does by itself. The
// fault stands for the state as Memgraph words it, which an HA cluster never reaches otherwise.
func (w *World) Diverge(host string) error {
	return w.dataFault(host, func(in *instance) { in.diverged = true })
}

// FailRecovery makes every recovery of a data instance by its MAIN fail (fail true) or succeed
// again (false): a replica whose volume cannot take the MAIN's snapshot and WAL files. Found
// behind its MAIN, it recovers ("recovery") for WithReplicaRecoveryTime, the attempt fails, the
// MAIN holds it MAYBE_BEHIND ("invalid") until its next check ReplicaCheckInterval later, and
// starts over — forever, as Memgraph does (replication_client.cpp 664–711, 880–912: a failed
// step sets MAYBE_BEHIND; the next check finds it behind and recovers it again). It takes no
// commit meanwhile. Wipe ends the fault.
func (w *World) FailRecovery(host string, fail bool) error {
	return w.dataFault(host, func(in *instance) { in.recoveryFails = fail })
}

// dataFault applies f to the data instance host and lets its MAINs heartbeat it.
func (w *World) dataFault(host string, f func(*instance)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.settle()
	w.advance()
	in, ok := w.instances[host]
	if !ok || in.coord {
		return fmt.Errorf("sim: no data instance %s", host)
	}
	f(in)
	for _, c := range w.dataClusters() {
		if w.entryOf(c, in) != nil {
			w.catchUp(c, in)
		}
	}
	return nil
}

// failedRecovery ends a recovery attempt of a replica whose recoveries fail: MAYBE_BEHIND until
// the MAIN's next check.
func (w *World) failedRecovery(in *instance) {
	in.recoverAt, in.retryAt = time.Time{}, w.cur.Add(ReplicaCheckInterval)
}

// retryEnd returns the earliest check of a replica held MAYBE_BEHIND after a failed recovery.
func (w *World) retryEnd() (time.Time, func(), bool) {
	var first *instance
	for _, in := range w.instances {
		if in.coord || !in.alive || in.retryAt.IsZero() {
			continue
		}
		if first == nil || in.retryAt.Before(first.retryAt) || in.retryAt.Equal(first.retryAt) && in.host < first.host {
			first = in
		}
	}
	if first == nil {
		return time.Time{}, nil, false
	}
	return first.retryAt, func() { w.recheck(first) }, true
}

// recheck is the MAIN's check of a replica it held MAYBE_BEHIND: found behind, it is recovered
// again.
func (w *World) recheck(in *instance) {
	in.retryAt = time.Time{}
	for _, c := range w.dataClusters() {
		if w.entryOf(c, in) != nil {
			w.catchUp(c, in)
		}
	}
}

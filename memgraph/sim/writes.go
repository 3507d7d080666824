package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// writeForbidden: a MAIN in Raft whose process restarted and that the leader has not re-promoted
// yet. Memgraph restores it from durability as a MAIN with writing disabled (v3.12.0
// src/replication/state.cpp 171, include/replication/state.hpp 53, 101–104) and refuses
// writes with WriteQueryOnMainException (interpreter.cpp 10357–10361).
//
// global_read_only true does the same to the MAIN of its cluster: the leader's health check
// sends it UpdateDataInstanceConfigRpc with writing disabled (coordinator_instance.cpp
// 1300–1312, data_instance_management_server_handlers.cpp 326), and its writes are refused with
// the same message. The simulator applies the setting at once rather than at the next health
// check (instance_health_check_frequency_sec later).
func (w *World) writeForbidden(in *instance) bool {
	for _, c := range w.dataClusters() {
		if e := c.entry(c.main); e != nil && w.dataInstance(e) == in && (in.writeBlocked || c.settings["global_read_only"] == "true") {
			return true
		}
	}
	return false
}

// repromoteAt is when the ready leader's health check reaches its restarted MAIN and re-promotes
// it (coordinator_instance.cpp 1226–1262): instance_health_check_frequency_sec after the later
// of the process's start and the leader becoming ready.
func (w *World) repromoteAt(c *cluster) (time.Time, func(), bool) {
	e := c.entry(c.main)
	if e == nil || c.frozen != nil {
		return time.Time{}, nil, false
	}
	in := w.dataInstance(e)
	if in == nil || !in.alive || !in.writeBlocked {
		return time.Time{}, nil, false
	}
	freq := time.Duration(parseUint(c.settings["instance_health_check_frequency_sec"])) * time.Second
	return later(in.startedAt, c.readySince).Add(freq), func() { in.writeBlocked = false }, true
}

// replicaFailure is a SYNC or STRICT_SYNC replica that could not confirm a write.
type replicaFailure struct{ name, mode string }

// boltWrite is one auto-commit write on a MAIN, at PULL. A SYNC or STRICT_SYNC replica that is
// not in sync (down, recovering, lagged or unable to read the MAIN's messages) cannot confirm it
// (replication_client.cpp StartTransactionReplication 368–444): with a STRICT_SYNC one the
// transaction is aborted everywhere; with a SYNC one the MAIN commits it anyway; either way the
// client gets Memgraph's ReplicationException (inmemory/storage.cpp 1221–1266,
// storage_error.cpp 35–101) and the write is not acknowledged.
func (w *World) boltWrite(main *instance, db string) bolt.Outcome {
	var failed []replicaFailure
	strict := false
	for _, c := range w.dataClusters() {
		if e := c.entry(c.main); e == nil || w.dataInstance(e) != main {
			continue
		}
		for _, e := range c.data {
			if e.name == c.main || e.mode == "async" || w.confirms(main, w.dataInstance(e), db) {
				continue
			}
			failed = append(failed, replicaFailure{e.name, e.mode})
			strict = strict || e.mode == "strict_sync"
		}
	}
	if strict {
		return failure(msgReplication(failed, false))
	}
	w.commitOn(main, db, 1)
	if len(failed) > 0 {
		return failure(msgReplication(failed, true))
	}
	w.acked[db]++
	return bolt.Outcome{Type: "w"}
}

// confirms: the replica is READY on db, takes the next commit at once (a lag holds it back) and
// accepts the MAIN's replication connection.
func (w *World) confirms(main, in *instance, db string) bool {
	return w.inSync(main, in, db) && in.lag[db] == 0 && peerRefusal(main, in) == ""
}

// msgReplication is ReplicationException's text for replicas that could not confirm (all for
// the same reason here: "not reachable or not in sync"), grouped by mode in order of appearance.
func msgReplication(failed []replicaFailure, committed bool) string {
	var modes []string
	names := map[string][]string{}
	for _, f := range failed {
		mode := strings.ToUpper(f.mode)
		if names[mode] == nil {
			modes = append(modes, mode)
		}
		names[mode] = append(names[mode], "'"+f.name+"'")
	}
	var parts []string
	for _, mode := range modes {
		n := names[mode]
		if len(n) == 1 {
			parts = append(parts, fmt.Sprintf("Failed to replicate to %s replica %s: replica is not reachable or not in sync with the main.", mode, n[0]))
			continue
		}
		joined := strings.Join(n[:len(n)-1], ", ") + " and " + n[len(n)-1]
		parts = append(parts, fmt.Sprintf("Failed to replicate to %s replicas %s: replicas are not reachable or not in sync with the main.", mode, joined))
	}
	msg := strings.Join(parts, " ")
	if len(failed) == 1 {
		msg += " Replica will be recovered automatically."
	} else {
		msg += " Replicas will be recovered automatically."
	}
	if committed {
		msg += " Transaction is still committed on the main instance and other alive replicas."
	} else {
		msg += " Transaction was aborted on all instances."
	}
	return "Replication Exception: " + msg + " Check the status of the replicas using 'SHOW REPLICAS' query."
}

// Acknowledged is how many writes on database db the simulator acknowledged: the n of every
// Commit that succeeded and every Bolt write on a MAIN that returned success. After any faults,
// the current MAIN holding fewer (RaftSnapshot's Committed) means acknowledged writes were lost.
func (w *World) Acknowledged(db string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked[db]
}

package sim

// replicaRows is SHOW REPLICAS on a MAIN (Memgraph v3.12.0 src/query/interpreter.cpp 2022–2120,
// src/replication_handler/replication_handler.cpp 511–560): the replicas registered next to it,
// in registration order, each with data_info per database of the MAIN's. ts is the MAIN's cached
// count for the replica (transaction counts stand in for commit timestamps) and behind is that
// minus the MAIN's own (≤ 0); status is the replica's state for the database (replicaStatus).
// system_info is {ts: 0, behind: null, status}, "invalid" when the MAIN cannot reach the replica
// or read its replies, else "ready".
func (w *World) replicaRows(main *instance) [][]any {
	var rows [][]any
	for _, c := range w.dataClusters() {
		me := c.entry(c.main)
		if me == nil || w.dataInstance(me) != main {
			continue
		}
		for _, e := range c.data {
			if e == me {
				continue
			}
			in := w.dataInstance(e)
			system := "ready"
			if in == nil || !in.alive || w.versionBlocked(main, in) {
				system = "invalid"
			}
			data := map[string]any{}
			for db, n := range main.txns {
				ts := cached(main, e.name, db)
				data[db] = map[string]any{"ts": ts, "behind": ts - n, "status": w.replicaStatus(main, in, db)}
			}
			rows = append(rows, []any{e.name, e.repl, e.mode,
				map[string]any{"ts": int64(0), "behind": nil, "status": system}, data})
		}
		break
	}
	return rows
}

// replicaStatus is the MAIN's ReplicaState for a replica's database, worded as SHOW REPLICAS
// words it (interpreter.cpp 2067–2082): "invalid" (MAYBE_BEHIND) when the replica does not run
// or cannot read the MAIN's messages (TryCheckReplicaStateSync, replication_client.cpp 341–359)
// or its last recovery failed (FailRecovery, until the next check); "diverged"
// (DIVERGED_FROM_MAIN) for Diverge's replica; "recovery" while it is behind or its history
// branched off the MAIN's (a lagged replica included: behind means RECOVERY, 289–300; under
// coordinators a branching point is force-recovered, 208–222), else "ready". "replicating" (a
// transaction on its way) is never seen: replication here is instantaneous.
func (w *World) replicaStatus(main, in *instance, db string) string {
	switch {
	case in == nil || !in.alive || w.versionBlocked(main, in) || !in.retryAt.IsZero():
		return "invalid"
	case in.diverged:
		return "diverged"
	case !in.recoverAt.IsZero() || in.txns[db] != main.txns[db]:
		return "recovery"
	}
	return "ready"
}

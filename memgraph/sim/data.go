package sim

import (
	"context"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// dataRole is the replication role the data instance itself holds: MAIN when a cluster has it
// as MAIN in Raft (or it was never registered: a standalone instance is MAIN), REPLICA when
// registered otherwise.
func (w *World) dataRole(in *instance) string {
	registered := false
	for _, c := range w.clusters() {
		for _, e := range c.data {
			if w.dataInstance(e) == in {
				if c.main == e.name {
					return "main"
				}
				registered = true
			}
		}
	}
	if registered {
		return "replica"
	}
	return "main"
}

// prepareData answers a query sent to a data instance. Coordinator queries are refused with
// "Only coordinator …" at RUN; writes on a replica are refused at RUN; a write on a MAIN
// commits one transaction on the default database and replicates it.
func (w *World) prepareData(in *instance, st *statement) (*bolt.Prepared, *bolt.Failure) {
	if msg, ok := onlyCoordinator[st.kind]; ok {
		return nil, bolt.ClientError(msg)
	}
	role := w.dataRole(in)
	switch st.kind {
	case stShowReplicationRole:
		return &bolt.Prepared{Fields: []string{"replication role"}, Exec: func(context.Context) bolt.Outcome {
			return bolt.Outcome{Rows: [][]any{{w.dataRole(in)}}, Type: "r"}
		}}, nil
	case stShowReplicas:
		if role != "main" {
			return nil, bolt.ClientError(msgShowReplicasOnRepl)
		}
		return &bolt.Prepared{Fields: []string{"name", "socket_address", "sync_mode", "system_info", "data_info"},
			Exec: func(context.Context) bolt.Outcome { return bolt.Outcome{Rows: w.replicaRows(in), Type: "r"} }}, nil
	case stRegisterReplica:
		return nil, bolt.ClientError(msgManualRegister)
	case stDropReplica:
		return nil, bolt.ClientError(msgManualDrop)
	case stSetReplicationRole:
		return nil, bolt.ClientError(msgManualSetRole)
	}
	if st.write {
		if role != "main" {
			return nil, bolt.ClientError(msgWriteOnReplica)
		}
		return &bolt.Prepared{Fields: []string{}, Exec: func(context.Context) bolt.Outcome {
			w.commitOn(in, defaultDB, 1)
			return bolt.Outcome{Type: "w"}
		}}, nil
	}
	return &bolt.Prepared{Fields: []string{}, Exec: func(context.Context) bolt.Outcome { return bolt.Outcome{Type: "r"} }}, nil
}

// replicaRows is SHOW REPLICAS on a MAIN: the replicas registered next to it.
func (w *World) replicaRows(main *instance) [][]any {
	var rows [][]any
	for _, c := range w.clusters() {
		me := c.entry(c.main)
		if me == nil || w.dataInstance(me) != main {
			continue
		}
		for _, e := range c.data {
			if e == me {
				continue
			}
			status, data := "invalid", map[string]any{}
			if in := w.dataInstance(e); in != nil && in.alive {
				status = "ready"
				for db, n := range main.txns {
					data[db] = map[string]any{"ts": in.txns[db], "behind": n - in.txns[db], "status": "ready"}
				}
			}
			rows = append(rows, []any{e.name, e.repl, e.mode,
				map[string]any{"ts": int64(0), "behind": nil, "status": status}, data})
		}
		break
	}
	return rows
}

// commitOn commits n transactions on a MAIN and replicates them to the alive replicas of every
// cluster that has it as MAIN.
func (w *World) commitOn(main *instance, db string, n int64) {
	main.txns[db] += n
	for _, c := range w.clusters() {
		me := c.entry(c.main)
		if me == nil || w.dataInstance(me) != main {
			continue
		}
		for _, e := range c.data {
			if in := w.dataInstance(e); in != nil && in != main {
				if _, ok := in.txns[db]; !ok {
					in.txns[db] = 0
				}
				w.catchUp(c, in)
			}
		}
	}
}

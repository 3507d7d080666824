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
	for _, c := range w.dataClusters() {
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
// "Only coordinator …" at RUN; writes on a replica, or on a restarted MAIN not yet re-promoted,
// are refused at RUN; a write on a MAIN commits one transaction on the session's database
// (databases.go) and replicates it (boltWrite).
func (w *World) prepareData(in *instance, st *statement, req bolt.Request) (*bolt.Prepared, *bolt.Failure) {
	if msg, ok := onlyCoordinator[st.kind]; ok {
		return nil, bolt.ClientError(msg)
	}
	db, named := sessionDatabase(req)
	if _, ok := in.txns[db]; named && !ok {
		return nil, &bolt.Failure{Code: bolt.CodeTransientError, Message: msgUnknownDatabase(db)}
	}
	switch st.kind {
	case stCreateSnapshot:
		return w.prepareCreateSnapshot(in, db, req.ExplicitTx)
	case stShowSnapshots:
		return w.prepareShowSnapshots(in, db, req.ExplicitTx)
	case stRecoverSnapshot:
		return w.prepareRecoverSnapshot(in, db, st, req)
	case stCreateDatabase:
		return w.prepareCreateDatabase(in, st)
	case stShowDatabases:
		return w.prepareShowDatabases(in)
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
		switch {
		case role != "main":
			return nil, bolt.ClientError(msgWriteOnReplica)
		case w.writeForbidden(in):
			return nil, bolt.ClientError(msgWriteOnMain)
		}
		return &bolt.Prepared{Fields: []string{}, Exec: func(context.Context) bolt.Outcome {
			return w.boltWrite(in, db)
		}}, nil
	}
	return &bolt.Prepared{Fields: []string{}, Exec: func(context.Context) bolt.Outcome { return bolt.Outcome{Type: "r"} }}, nil
}

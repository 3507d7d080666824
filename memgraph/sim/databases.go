package sim

import (
	"context"
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// Multi-tenancy (Memgraph v3.12.0, Enterprise, which HA requires anyway): a Bolt session's
// RUN (or BEGIN) extra "db" selects the database a query runs in (glue/SessionHL.cpp 643–690),
// the default one ("memgraph") without it. CREATE DATABASE on a MAIN creates one, or answers
// that it exists (interpreter.cpp 7888–7934); a REPLICA refuses it, and receives every database
// of its MAIN through replication. SHOW DATABASES lists Name, State (HOT) and Health (ready),
// sorted (8267–8345). A database's transactions are counted, snapshotted and restored on their
// own; COLD (suspended) databases are not modelled.

// msgUnknownDatabase is UnknownDatabaseException's text (dbms/dbms_handler.hpp 1086).
func msgUnknownDatabase(db string) string {
	return `Tried to retrieve an unknown database "` + db + `".`
}

// sessionDatabase is the database the request selects: its "db", else the default one.
func sessionDatabase(req bolt.Request) (string, bool) {
	db, ok := req.Extra["db"].(string)
	if !ok || db == "" {
		return defaultDB, false
	}
	return db, true
}

// prepareCreateDatabase is CREATE DATABASE: one STATUS row.
func (w *World) prepareCreateDatabase(in *instance, st *statement) (*bolt.Prepared, *bolt.Failure) {
	if w.dataRole(in) != "main" {
		return nil, bolt.ClientError("Query forbidden on the replica!")
	}
	return &bolt.Prepared{Fields: []string{"STATUS"}, Exec: func(context.Context) bolt.Outcome {
		if _, ok := in.txns[st.name]; ok {
			return bolt.Outcome{Rows: [][]any{{st.name + " already exists."}}, Type: "w"}
		}
		w.commitOn(in, st.name, 0) // the replicas in sync get it at once, the others on catching up
		return bolt.Outcome{Rows: [][]any{{"Successfully created database " + st.name}}, Type: "w"}
	}}, nil
}

// prepareShowDatabases is SHOW DATABASES.
func (w *World) prepareShowDatabases(in *instance) (*bolt.Prepared, *bolt.Failure) {
	return &bolt.Prepared{Fields: []string{"Name", "State", "Health"}, Exec: func(context.Context) bolt.Outcome {
		names := make([]string, 0, len(in.txns))
		for db := range in.txns {
			names = append(names, db)
		}
		slices.Sort(names)
		rows := make([][]any, 0, len(names))
		for _, n := range names {
			rows = append(rows, []any{n, "HOT", "ready"})
		}
		return bolt.Outcome{Rows: rows, Type: "r"}
	}}, nil
}

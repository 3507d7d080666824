package sim

import (
	"context"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// Texts of RELOAD … TLS (src/query/interpreter.cpp 5183–5255, src/communication/context.cpp
// 121–124, src/query/exceptions.hpp 148–156 and 580–583).
const (
	msgReloadBoltUnset  = "Unable to reload SSL configuration because key or certificate file aren't set."
	msgReloadExplicitTx = "Reloading SSL is not allowed in multicommand transactions. A multicommand transaction, also known as an explicit transaction, groups multiple commands into a single atomic operation. Instead, please use an implicit transaction, also known as an auto committing transaction, in order to execute this particularquery. For more details, visit https://memgraph.com/docs"
	// NoteReloadedBolt and NoteReloadedCluster are the INFO notifications of a reload that
	// succeeded.
	NoteReloadedBolt    = "Reloaded TLS on Bolt server"
	NoteReloadedCluster = "Reloaded TLS for intra-cluster communication"
)

// prepareReload is RELOAD BOLT_SERVER TLS or RELOAD INTRA_CLUSTER TLS, on a coordinator or a
// data instance of either role (no replication-role check, and the coordinator gate lets
// ReloadSSLQuery through: interpreter.cpp 9935–9939). It is refused inside an explicit
// transaction; the files are read when the result is pulled, and a failure leaves the
// previous TLS material in force.
func (w *World) prepareReload(in *instance, st *statement, explicitTx bool) (*bolt.Prepared, *bolt.Failure) {
	if explicitTx {
		return nil, bolt.ClientError(msgReloadExplicitTx)
	}
	return &bolt.Prepared{Fields: []string{}, Exec: func(context.Context) bolt.Outcome {
		if st.kind == stReloadBoltTLS {
			if msg := in.reloadBolt(); msg != "" {
				return failure(msg)
			}
			return bolt.Outcome{Type: "s"}
		}
		if msg := in.reloadCluster(); msg != "" {
			return failure(msg)
		}
		if !in.coord {
			w.dataLivenessChanged(in) // the MAINs reconnect to it with the new identity
		}
		return bolt.Outcome{Type: "s"}
	}}, nil
}

package memgraph

import "sort"

// ShowReplicasQuery lists the replicas a MAIN data instance replicates to; on a REPLICA it fails
// with KindNotMain, on a coordinator with KindNotCoordinator.
const ShowReplicasQuery = "SHOW REPLICAS"

// sync_mode values of SHOW REPLICAS (Memgraph v3.12.0 src/query/interpreter.cpp, sync_mode_to_tv).
const (
	SyncModeSync       = "sync"
	SyncModeAsync      = "async"
	SyncModeStrictSync = "strict_sync"
)

// Status values of a database in SHOW REPLICAS's data_info (Memgraph v3.12.0
// src/query/interpreter.cpp, replica_state_to_tv): the MAIN's replication client's state for
// that replica and database.
const (
	// ReplicaReady: the replica has applied everything the MAIN sent it.
	ReplicaReady = "ready"
	// ReplicaReplicating: a transaction is being sent to the replica.
	ReplicaReplicating = "replicating"
	// ReplicaRecovery: the replica is catching up from snapshots and WAL files (under HA also
	// after a divergence, which is then recovered with a force reset).
	ReplicaRecovery = "recovery"
	// ReplicaInvalid: Memgraph's MAYBE_BEHIND, the client's initial state and the one after a
	// failed replication RPC; the MAIN's heartbeat checks the replica again.
	ReplicaInvalid = "invalid"
	// ReplicaDiverged: the replica's history branched from the MAIN's. Only replication managed
	// without coordinators stays in it (src/storage/v2/replication/replication_client.cpp).
	ReplicaDiverged = "diverged"
)

// ReplicaDatabase is one database's entry in SHOW REPLICAS's data_info.
type ReplicaDatabase struct {
	Timestamp int64  // ts: the replica's last applied commit timestamp
	Behind    int64  // behind: how many commit timestamps the replica is behind the MAIN
	Status    string // status: one of the Replica* values, kept verbatim
}

// Replica is one row of SHOW REPLICAS on a MAIN data instance. The row's system_info (the
// replication of users and databases) is not kept: Memgraph never fills its behind, and it is
// NULL without an enterprise license.
type Replica struct {
	Name          string // the name the replica was registered with (REGISTER INSTANCE's name)
	SocketAddress string // the replica's replication server, "host:port"
	SyncMode      string // one of the SyncMode* values, kept verbatim
	// Databases is data_info by database name. Memgraph lists every in-memory transactional
	// database it replicates (only the default one without an enterprise license); it may be
	// empty, which proves nothing about the replica's state.
	Databases map[string]ReplicaDatabase
}

// Column names of SHOW REPLICAS and the keys of its data_info entries (Memgraph v3.12.0
// src/query/interpreter.cpp, HandleReplicationInfoQuery). name and data_info are shared with
// the other tables.
const (
	colSocketAddress = "socket_address"
	colSyncMode      = "sync_mode"
	colSystemInfo    = "system_info"

	keyTimestamp = "ts"
	keyBehind    = "behind"
	keyStatus    = "status"
)

// ParseReplicas reads SHOW REPLICAS like ParseInstances. See parseReplicas.
func ParseReplicas(columns []string, rows [][]any) ([]Replica, error) {
	return parseReplicas(table{keys: columns, rows: rows})
}

// parseReplicas reads SHOW REPLICAS strictly: every row needs a non-empty name, a socket_address
// and a sync_mode string, a system_info that is a map or NULL, and a data_info map whose every
// database carries ts and behind as integers and status as a string. Anything less is a
// KindProtocol error, never a silent "ready" or "0 behind". Extra columns are ignored.
func parseReplicas(t table) ([]Replica, error) {
	col, err := t.columns(colName, colSocketAddress, colSyncMode, colSystemInfo, colDataInfo)
	if err != nil {
		return nil, err
	}
	out := make([]Replica, 0, len(t.rows))
	for i, row := range t.rows {
		r := rowReader{row: row, index: i, col: col}
		rep := Replica{
			Name:          r.str(colName),
			SocketAddress: r.str(colSocketAddress),
			SyncMode:      r.str(colSyncMode),
		}
		r.nullableMap(colSystemInfo)
		info := r.mapValue(colDataInfo)
		if r.err != nil {
			return nil, r.err
		}
		if rep.Name == "" {
			return nil, protocolError("SHOW REPLICAS row %d has an empty name", i)
		}
		if rep.Databases, err = parseReplicaDatabases(rep.Name, info); err != nil {
			return nil, err
		}
		out = append(out, rep)
	}
	return out, nil
}

func parseReplicaDatabases(replica string, info map[string]any) (map[string]ReplicaDatabase, error) {
	dbs := make(map[string]ReplicaDatabase, len(info))
	for _, db := range sortedKeys(info) { // sorted: deterministic error messages
		entry, ok := info[db].(map[string]any)
		if !ok {
			return nil, protocolError("data_info[%q] of %s is %T, want a map", db, replica, info[db])
		}
		ts, err := counter(replica, db, entry, keyTimestamp)
		if err != nil {
			return nil, err
		}
		behind, err := counter(replica, db, entry, keyBehind)
		if err != nil {
			return nil, err
		}
		status, ok := entry[keyStatus].(string)
		if !ok {
			return nil, protocolError("data_info[%q].%s of %s is %T, want a string", db, keyStatus, replica, entry[keyStatus])
		}
		dbs[db] = ReplicaDatabase{Timestamp: ts, Behind: behind, Status: status}
	}
	return dbs, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

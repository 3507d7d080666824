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
// src/query/interpreter.cpp 2067–2082, replica_state_to_tv): the MAIN's replication client's
// state for that replica and database (src/storage/v2/replication/enums.hpp ReplicaState). These
// five are every word 3.12 sends.
const (
	// ReplicaReady (READY): the replica holds everything the MAIN committed and takes the next
	// transaction as it comes.
	ReplicaReady = "ready"
	// ReplicaReplicating (REPLICATING): a transaction is on its way to the replica
	// (replication_client.cpp 430); ready again once it is confirmed.
	ReplicaReplicating = "replicating"
	// ReplicaRecovery (RECOVERY): the MAIN found the replica behind and sends it snapshot and WAL
	// files (replication_client.cpp 282–300, 664–950) — a fresh volume from its latest snapshot on;
	// under coordinators also after a divergence, recovered from 0 with a force reset (208–222).
	ReplicaRecovery = "recovery"
	// ReplicaInvalid (MAYBE_BEHIND): every client's initial state (replication_client.hpp 251–252),
	// and the one after a failed replication RPC, a lost connection or a failed recovery step
	// (341–359, 880–912); the MAIN checks the replica again every
	// --replication-replica-check-frequency-sec (1 s) and recovers it when behind.
	ReplicaInvalid = "invalid"
	// ReplicaDiverged (DIVERGED_FROM_MAIN): the replica's history branched off the MAIN's (it was
	// MAIN once and holds writes this MAIN never had). Only a MAIN no coordinator manages stays in
	// it (replication_client.cpp 196–207, 224–232; IsDataInstanceManagedByCoordinator,
	// src/flags/coord_flag_env_handler.cpp 49–51), and it sends such a replica nothing until it is
	// unregistered and replaced by one with clean data; an HA MAIN force-recovers it (recovery).
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

package memgraph

import "fmt"

// Column names of SHOW INSTANCES and SHOW REPLICATION LAG (Memgraph v3.12.0 src/query/interpreter.cpp);
// SHOW REPLICAS's are in replicas.go.
const (
	colName              = "name"
	colBoltServer        = "bolt_server"
	colCoordinatorServer = "coordinator_server"
	colManagementServer  = "management_server"
	colHealth            = "health"
	colRole              = "role"
	colLastSuccRespMs    = "last_succ_resp_ms"

	colInstanceName = "instance_name"
	colDataInfo     = "data_info"

	keyCommittedTxns  = "num_committed_txns"
	keyTxnsBehindMain = "num_txns_behind_main"
)

// ParseInstances reads SHOW INSTANCES from a fully read result: its column names and its rows of
// Bolt values (string, int64, nil, bool, float64, []any, map[string]any), as a Bolt client hands
// them over. See parseInstances.
func ParseInstances(columns []string, rows [][]any) ([]Instance, error) {
	return parseInstances(table{keys: columns, rows: rows})
}

// ParseReplicationLag reads SHOW REPLICATION LAG like ParseInstances. See parseReplicationLag.
func ParseReplicationLag(columns []string, rows [][]any) ([]InstanceLag, error) {
	return parseReplicationLag(table{keys: columns, rows: rows})
}

// table is a fully read result: column names and rows of Bolt values. It is the seam between
// the Bolt client and the parsers.
type table struct {
	keys []string
	rows [][]any
}

// columns maps each required column to its index; a missing one is a KindProtocol error, and so
// is a column named twice (which of the two holds the value would be a guess). Extra columns are
// ignored so a newer Memgraph that appends columns still parses.
func (t table) columns(required ...string) (map[string]int, error) {
	index := make(map[string]int, len(t.keys))
	for i, k := range t.keys {
		if _, dup := index[k]; dup {
			return nil, protocolError("result has two %q columns (columns: %v)", k, t.keys)
		}
		index[k] = i
	}
	for _, name := range required {
		if _, ok := index[name]; !ok {
			return nil, protocolError("result has no %q column (columns: %v)", name, t.keys)
		}
	}
	for i, row := range t.rows {
		if len(row) != len(t.keys) {
			return nil, protocolError("row %d has %d values for %d columns", i, len(row), len(t.keys))
		}
	}
	return index, nil
}

func protocolError(format string, args ...any) *Error {
	return &Error{Kind: KindProtocol, Message: fmt.Sprintf(format, args...)}
}

// parseInstances reads SHOW INSTANCES by column name. Every documented column is required and
// must have its documented type; health and role values are kept verbatim.
func parseInstances(t table) ([]Instance, error) {
	col, err := t.columns(colName, colBoltServer, colCoordinatorServer, colManagementServer,
		colHealth, colRole, colLastSuccRespMs)
	if err != nil {
		return nil, err
	}
	out := make([]Instance, 0, len(t.rows))
	for i, row := range t.rows {
		r := rowReader{row: row, index: i, col: col}
		inst := Instance{
			Name:              r.str(colName),
			BoltServer:        r.str(colBoltServer),
			CoordinatorServer: r.str(colCoordinatorServer),
			ManagementServer:  r.str(colManagementServer),
			Health:            r.str(colHealth),
			Role:              r.str(colRole),
			LastSuccRespMs:    r.int(colLastSuccRespMs),
		}
		if r.err != nil {
			return nil, r.err
		}
		if inst.Name == "" {
			return nil, protocolError("SHOW INSTANCES row %d has an empty name", i)
		}
		out = append(out, inst)
	}
	return out, nil
}

// parseReplicationLag reads SHOW REPLICATION LAG strictly: every row needs an instance name and
// a non-empty data_info map whose every database carries both counters as integers. Anything
// less is a KindProtocol error, never a silent "0 behind".
func parseReplicationLag(t table) ([]InstanceLag, error) {
	col, err := t.columns(colInstanceName, colDataInfo)
	if err != nil {
		return nil, err
	}
	out := make([]InstanceLag, 0, len(t.rows))
	for i, row := range t.rows {
		r := rowReader{row: row, index: i, col: col}
		name := r.str(colInstanceName)
		info := r.mapValue(colDataInfo)
		if r.err != nil {
			return nil, r.err
		}
		if name == "" {
			return nil, protocolError("SHOW REPLICATION LAG row %d has an empty instance_name", i)
		}
		if len(info) == 0 {
			return nil, protocolError("SHOW REPLICATION LAG row %d (%s) has no databases in data_info", i, name)
		}
		dbs, err := parseDatabaseLags(name, info)
		if err != nil {
			return nil, err
		}
		out = append(out, InstanceLag{Instance: name, Databases: dbs})
	}
	return out, nil
}

func parseDatabaseLags(instance string, info map[string]any) (map[string]DatabaseLag, error) {
	dbs := make(map[string]DatabaseLag, len(info))
	for _, db := range sortedKeys(info) { // sorted: deterministic error messages
		counters, ok := info[db].(map[string]any)
		if !ok {
			return nil, protocolError("data_info[%q] of %s is %T, want a map", db, instance, info[db])
		}
		committed, err := counter(instance, db, counters, keyCommittedTxns)
		if err != nil {
			return nil, err
		}
		behind, err := counter(instance, db, counters, keyTxnsBehindMain)
		if err != nil {
			return nil, err
		}
		dbs[db] = DatabaseLag{CommittedTxns: committed, TxnsBehindMain: behind}
	}
	return dbs, nil
}

func counter(instance, db string, counters map[string]any, key string) (int64, error) {
	v, ok := counters[key]
	if !ok {
		return 0, protocolError("data_info[%q] of %s has no %s", db, instance, key)
	}
	n, ok := v.(int64)
	if !ok {
		return 0, protocolError("data_info[%q].%s of %s is %T, want an integer", db, key, instance, v)
	}
	return n, nil
}

// rowReader extracts typed values from one row and remembers the first type mismatch.
type rowReader struct {
	row   []any
	index int
	col   map[string]int
	err   error
}

func (r *rowReader) value(name string) any { return r.row[r.col[name]] }

func (r *rowReader) mismatch(name, want string, got any) {
	if r.err == nil {
		r.err = protocolError("row %d column %s is %T, want %s", r.index, name, got, want)
	}
}

func (r *rowReader) str(name string) string {
	v, ok := r.value(name).(string)
	if !ok {
		r.mismatch(name, "a string", r.value(name))
	}
	return v
}

func (r *rowReader) int(name string) int64 {
	v, ok := r.value(name).(int64)
	if !ok {
		r.mismatch(name, "an integer", r.value(name))
	}
	return v
}

func (r *rowReader) mapValue(name string) map[string]any {
	v, ok := r.value(name).(map[string]any)
	if !ok {
		r.mismatch(name, "a map", r.value(name))
	}
	return v
}

// nullableMap checks that the column holds a map or NULL; the value itself is not needed.
func (r *rowReader) nullableMap(name string) {
	switch r.value(name).(type) {
	case nil, map[string]any:
	default:
		r.mismatch(name, "a map or null", r.value(name))
	}
}

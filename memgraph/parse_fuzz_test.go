package memgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The parsers of SHOW INSTANCES, SHOW REPLICATION LAG and SHOW REPLICAS get arbitrary tables — any columns in
// any order, duplicated, missing or extra; rows too short or too long; every driver value type in
// every cell. Each answer is either a *Error of KindProtocol, or exactly the table's content by
// column name: the fuzz target compares it with an oracle that states the documented shape
// declaratively, so a plausible-looking but wrong parse (a value from another column, a default
// for a missing counter, a silently dropped row) fails as surely as a panic.

// tableReader turns fuzz bytes into a table; when the bytes run out it reads zeros.
type tableReader struct{ b []byte }

func (r *tableReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *tableReader) bytes(n int) []byte {
	n = min(n, len(r.b))
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

var fuzzWords = []string{
	colName, colBoltServer, colCoordinatorServer, colManagementServer, colHealth, colRole,
	colLastSuccRespMs, colInstanceName, colDataInfo, keyCommittedTxns, keyTxnsBehindMain,
	"", "memgraph", "coordinator_1", "instance_0", HealthUp, HealthDown, RoleMain, RoleReplica,
	RoleLeader, "host:7687", "extra",
	colSocketAddress, colSyncMode, colSystemInfo, keyTimestamp, keyBehind, keyStatus,
	SyncModeSync, SyncModeAsync, ReplicaReady, ReplicaInvalid,
}

// wordCount bounds fuzzWords: a byte below it reads a word, and encodeString writes any other
// string as stringTag plus its length (0..15), which str reads back as c%16 bytes.
const (
	wordCount = 48
	stringTag = 48
)

func (r *tableReader) str() string {
	c := r.byte()
	if int(c) < len(fuzzWords) { // len(fuzzWords) <= wordCount: TestFuzzWordsFitTheEncoding
		return fuzzWords[c]
	}
	return string(r.bytes(int(c % 16)))
}

var fuzzInts = []int64{0, 1, -1, 7, math.MaxInt64, math.MinInt64, math.MaxInt32 + 1}

// value is one driver value: the types the neo4j driver hands out for Memgraph's results.
func (r *tableReader) value(depth int) any {
	switch r.byte() % 9 {
	case 0:
		return nil
	case 1, 2:
		return r.str()
	case 3:
		return fuzzInts[int(r.byte())%len(fuzzInts)]
	case 4:
		var buf [8]byte
		copy(buf[:], r.bytes(8))
		return int64(binary.LittleEndian.Uint64(buf[:]))
	case 5:
		return r.byte()%2 == 0
	case 6:
		return float64(r.byte()) / 2
	case 7:
		if depth > 2 {
			return nil
		}
		list := make([]any, int(r.byte()%3))
		for i := range list {
			list[i] = r.value(depth + 1)
		}
		return list
	default:
		if depth > 2 {
			return map[string]any{}
		}
		m := map[string]any{}
		for range int(r.byte() % 4) {
			m[r.str()] = r.value(depth + 1)
		}
		return m
	}
}

// table reads the columns (usually the documented ones, in a shuffled order) and the rows.
func (r *tableReader) table(documented []string) table {
	var t table
	if r.byte()%4 != 0 {
		t.keys = append([]string(nil), documented...)
		for i := range t.keys {
			j := (i + int(r.byte())) % len(t.keys)
			t.keys[i], t.keys[j] = t.keys[j], t.keys[i]
		}
	}
	for range int(r.byte() % 3) {
		t.keys = append(t.keys, r.str())
	}
	if r.byte()%3 == 0 && len(t.keys) > 0 {
		t.keys = t.keys[:int(r.byte())%len(t.keys)]
	}
	for range int(r.byte() % 5) {
		n := len(t.keys)
		switch r.byte() % 16 {
		case 0:
			n++
		case 1:
			n = max(0, n-1)
		}
		row := make([]any, n)
		for i := range row {
			row[i] = r.value(0)
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// shape is what the oracle needs to know of a table: whether its columns are each named once and
// its rows as wide as the columns, and the value of a named column in a row.
func shape(t table, required []string) (index map[string]int, ok bool) {
	index = map[string]int{}
	for i, k := range t.keys {
		if _, dup := index[k]; dup {
			return nil, false
		}
		index[k] = i
	}
	for _, k := range required {
		if _, has := index[k]; !has {
			return nil, false
		}
	}
	for _, row := range t.rows {
		if len(row) != len(t.keys) {
			return nil, false
		}
	}
	return index, true
}

// expectInstances is the oracle for SHOW INSTANCES: every row, every documented column with its
// documented type (six strings and an integer), a non-empty name; otherwise no answer.
func expectInstances(t table) ([]Instance, bool) {
	col, ok := shape(t, []string{colName, colBoltServer, colCoordinatorServer, colManagementServer, colHealth, colRole, colLastSuccRespMs})
	if !ok {
		return nil, false
	}
	out := []Instance{}
	for _, row := range t.rows {
		var in Instance
		var ok [7]bool
		in.Name, ok[0] = row[col[colName]].(string)
		in.BoltServer, ok[1] = row[col[colBoltServer]].(string)
		in.CoordinatorServer, ok[2] = row[col[colCoordinatorServer]].(string)
		in.ManagementServer, ok[3] = row[col[colManagementServer]].(string)
		in.Health, ok[4] = row[col[colHealth]].(string)
		in.Role, ok[5] = row[col[colRole]].(string)
		in.LastSuccRespMs, ok[6] = row[col[colLastSuccRespMs]].(int64)
		if ok != [7]bool{true, true, true, true, true, true, true} || in.Name == "" {
			return nil, false
		}
		out = append(out, in)
	}
	return out, true
}

// expectLag is the oracle for SHOW REPLICATION LAG: every row names its instance and lists at
// least one database, each a map holding both counters as integers; otherwise no answer.
func expectLag(t table) ([]InstanceLag, bool) {
	col, ok := shape(t, []string{colInstanceName, colDataInfo})
	if !ok {
		return nil, false
	}
	out := []InstanceLag{}
	for _, row := range t.rows {
		name, ok1 := row[col[colInstanceName]].(string)
		info, ok2 := row[col[colDataInfo]].(map[string]any)
		if !ok1 || !ok2 || name == "" || len(info) == 0 {
			return nil, false
		}
		dbs := map[string]DatabaseLag{}
		for db, v := range info {
			counters, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			committed, ok1 := counters[keyCommittedTxns].(int64)
			behind, ok2 := counters[keyTxnsBehindMain].(int64)
			if !ok1 || !ok2 {
				return nil, false
			}
			dbs[db] = DatabaseLag{CommittedTxns: committed, TxnsBehindMain: behind}
		}
		out = append(out, InstanceLag{Instance: name, Databases: dbs})
	}
	return out, true
}

// expectReplicas is the oracle for SHOW REPLICAS: every row has a non-empty name, socket_address
// and sync_mode strings, system_info a map or NULL, and data_info a map (possibly empty) of maps
// holding ts and behind as integers and status as a string; otherwise no answer.
func expectReplicas(t table) ([]Replica, bool) {
	col, ok := shape(t, []string{colName, colSocketAddress, colSyncMode, colSystemInfo, colDataInfo})
	if !ok {
		return nil, false
	}
	out := []Replica{}
	for _, row := range t.rows {
		var rep Replica
		var ok [4]bool
		rep.Name, ok[0] = row[col[colName]].(string)
		rep.SocketAddress, ok[1] = row[col[colSocketAddress]].(string)
		rep.SyncMode, ok[2] = row[col[colSyncMode]].(string)
		info, ok3 := row[col[colDataInfo]].(map[string]any)
		_, sysMap := row[col[colSystemInfo]].(map[string]any)
		ok[3] = ok3 && (sysMap || row[col[colSystemInfo]] == nil)
		if ok != [4]bool{true, true, true, true} || rep.Name == "" {
			return nil, false
		}
		rep.Databases = map[string]ReplicaDatabase{}
		for db, v := range info {
			entry, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			var d ReplicaDatabase
			var ok3 [3]bool
			d.Timestamp, ok3[0] = entry[keyTimestamp].(int64)
			d.Behind, ok3[1] = entry[keyBehind].(int64)
			d.Status, ok3[2] = entry[keyStatus].(string)
			if ok3 != [3]bool{true, true, true} {
				return nil, false
			}
			rep.Databases[db] = d
		}
		out = append(out, rep)
	}
	return out, true
}

// checkParse compares a parser's answer with the oracle's.
func checkParse[T any](t *testing.T, tab table, got []T, err error, want []T, wantOK bool) {
	t.Helper()
	var mgErr *Error
	switch {
	case err != nil && !errors.As(err, &mgErr):
		t.Fatalf("error %T %v is not a *memgraph.Error", err, err)
	case err != nil && mgErr.Kind != KindProtocol:
		t.Fatalf("error of kind %v, want KindProtocol: %v", mgErr.Kind, err)
	case err != nil && wantOK:
		t.Fatalf("refused a well-formed table %#v: %v", tab, err)
	case err == nil && !wantOK:
		t.Fatalf("parsed a malformed table %#v into %#v", tab, got)
	case err == nil:
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("parse of %#v differs from the table (-table +parsed):\n%s", tab, diff)
		}
	}
}

func FuzzParseInstances(f *testing.F) {
	f.Add([]byte{})
	for _, tab := range instanceSeeds() {
		f.Add(encodeTable(tab, showInstancesKeys))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab := (&tableReader{data}).table(showInstancesKeys)
		got, err := parseInstances(tab)
		want, ok := expectInstances(tab)
		checkParse(t, tab, got, err, want, ok)
	})
}

func FuzzParseReplicationLag(f *testing.F) {
	f.Add([]byte{})
	for _, tab := range lagSeeds() {
		f.Add(encodeTable(tab, lagKeys))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab := (&tableReader{data}).table(lagKeys)
		got, err := parseReplicationLag(tab)
		want, ok := expectLag(tab)
		checkParse(t, tab, got, err, want, ok)
	})
}

func FuzzParseReplicas(f *testing.F) {
	f.Add([]byte{})
	for _, tab := range replicaSeeds() {
		f.Add(encodeTable(tab, replicasKeys))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab := (&tableReader{data}).table(replicasKeys)
		got, err := parseReplicas(tab)
		want, ok := expectReplicas(tab)
		checkParse(t, tab, got, err, want, ok)
	})
}

// The seeds are the documented tables, written in tableReader's format by encodeTable (which
// covers what the fixtures need: the documented columns in order, up to four rows, strings of
// at most 15 bytes, integers, nulls and maps of up to three entries).

func instanceSeeds() []table {
	return []table{{keys: showInstancesKeys, rows: [][]any{
		{"coordinator_1", "localhost:7690", "localhost:10111", "localhost:10121", "up", "follower", int64(16)},
		{"coordinator_2", "", "localhost:10112", "localhost:10122", "up", "leader", int64(0)},
		{"instance_1", "localhost:7687", "", "localhost:10011", "up", "replica", int64(120)},
		{"instance_3", "localhost:7689", "", "localhost:10013", "down", "unknown", int64(7000)},
	}}}
}

func lagSeeds() []table {
	return []table{{keys: lagKeys, rows: [][]any{
		{"instance_1", map[string]any{"memgraph": lagInfo(int64(12), int64(0)), "db2": lagInfo(int64(3), int64(1))}},
		{"instance_2", map[string]any{"memgraph": lagInfo(int64(12), int64(2))}},
	}}}
}

func replicaSeeds() []table {
	return []table{{keys: replicasKeys, rows: [][]any{
		{"instance_2", "h2:20000", "sync", systemInfo("ready"), map[string]any{
			"memgraph": replicaInfo(int64(12), int64(0), "ready"), "db2": replicaInfo(int64(3), int64(1), "replicating")}},
		{"instance_3", "h3:20000", "async", nil, map[string]any{"memgraph": replicaInfo(int64(0), int64(12), "invalid")}},
		{"instance_4", "h4:20000", "strict_sync", systemInfo("recovery"), map[string]any{}},
	}}}
}

// encodeTable writes tab, whose keys are documented in order, so that tableReader reads it back.
func encodeTable(tab table, documented []string) []byte {
	out := []byte{1}                                    // the documented columns...
	out = append(out, make([]byte, len(documented))...) // ...unshuffled
	out = append(out, 0, 1, byte(len(tab.rows)))        // no extra column, no truncation, the rows
	for _, row := range tab.rows {
		out = append(out, 2) // as wide as the columns
		for _, v := range row {
			out = encodeValue(out, v)
		}
	}
	return out
}

func encodeValue(out []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(out, 0)
	case string:
		return encodeString(append(out, 1), x)
	case int64:
		return binary.LittleEndian.AppendUint64(append(out, 4), uint64(x))
	case map[string]any:
		out = append(out, 8, byte(len(x)))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = encodeValue(encodeString(out, k), x[k])
		}
		return out
	}
	panic(fmt.Sprintf("encodeValue: %T", v))
}

func encodeString(out []byte, s string) []byte {
	if i := slices.Index(fuzzWords, s); i >= 0 {
		return append(out, byte(i))
	}
	if len(s) > 15 {
		panic(fmt.Sprintf("encodeString: %q is longer than 15 bytes", s))
	}
	return append(append(out, byte(stringTag+len(s))), s...)
}

// The seeds decode to the fixtures they were written from and parse without error, so every
// fuzz run starts from well-formed tables.
func TestFuzzParseSeedsAreTheFixtures(t *testing.T) {
	for _, tab := range instanceSeeds() {
		got := (&tableReader{encodeTable(tab, showInstancesKeys)}).table(showInstancesKeys)
		if diff := cmp.Diff(tab, got, cmp.AllowUnexported(table{})); diff != "" {
			t.Errorf("SHOW INSTANCES seed (-fixture +decoded):\n%s", diff)
		}
		if _, err := parseInstances(got); err != nil {
			t.Error(err)
		}
	}
	for _, tab := range replicaSeeds() {
		got := (&tableReader{encodeTable(tab, replicasKeys)}).table(replicasKeys)
		if diff := cmp.Diff(tab, got, cmp.AllowUnexported(table{})); diff != "" {
			t.Errorf("SHOW REPLICAS seed (-fixture +decoded):\n%s", diff)
		}
		if _, err := parseReplicas(got); err != nil {
			t.Error(err)
		}
	}
	for _, tab := range lagSeeds() {
		got := (&tableReader{encodeTable(tab, lagKeys)}).table(lagKeys)
		if diff := cmp.Diff(tab, got, cmp.AllowUnexported(table{})); diff != "" {
			t.Errorf("SHOW REPLICATION LAG seed (-fixture +decoded):\n%s", diff)
		}
		if _, err := parseReplicationLag(got); err != nil {
			t.Error(err)
		}
	}
}

// Every word must read back as itself, and no encoded string as a word.
func TestFuzzWordsFitTheEncoding(t *testing.T) {
	if len(fuzzWords) > wordCount {
		t.Fatalf("%d fuzz words, at most %d fit below stringTag", len(fuzzWords), wordCount)
	}
	for _, s := range append(slices.Clone(fuzzWords), "x", "h2:20000", "fifteen bytes!!") {
		if got := (&tableReader{encodeString(nil, s)}).str(); got != s {
			t.Errorf("%q reads back as %q", s, got)
		}
	}
}

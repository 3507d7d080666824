package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/log"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// routeOf asks instance host for its routing table, as a ROUTE message would.
func routeOf(t *testing.T, w *World, host string, db ...string) (map[string]any, *bolt.Failure) {
	t.Helper()
	w.mu.Lock()
	in := w.instances[host]
	w.mu.Unlock()
	if in == nil {
		t.Fatalf("no instance %s", host)
	}
	if len(db) > 0 {
		return w.route(in, db[0], true)
	}
	return w.route(in, "", false)
}

func servers(roles ...any) []any {
	var out []any
	for i := 0; i < len(roles); i += 2 {
		out = append(out, server(roles[i].(string), roles[i+1].([]any)))
	}
	return out
}

func TestRoutingTableIsBuiltFromRaftsBoltServers(t *testing.T) {
	w, c1 := setupCluster(t, 3, 3)
	want := map[string]any{"ttl": int64(300), "db": nil, "servers": servers(
		"WRITE", []any{dataBolt(1)},
		"READ", []any{dataBolt(2), dataBolt(3)},
		"ROUTE", []any{coordBolt(1), coordBolt(2), coordBolt(3)},
	)}
	for id := 1; id <= 3; id++ { // a follower answers the leader's table
		rt, f := routeOf(t, w, coordSpec(id).Host)
		if f != nil {
			t.Fatalf("ROUTE on coordinator %d: %v", id, f)
		}
		if diff := cmp.Diff(want, rt); diff != "" {
			t.Errorf("routing table from coordinator %d (-want +got):\n%s", id, diff)
		}
	}

	// UPDATE CONFIG changes what clients are given, live; the MAIN keeps serving.
	c1.must(`UPDATE CONFIG FOR INSTANCE instance_1 {'bolt_server': 'lb-1.example.com:7687'}`)
	c1.must(`UPDATE CONFIG FOR COORDINATOR 2 {'bolt_server': '203.0.113.2:31002'}`)
	c1.must("SET COORDINATOR SETTING 'enabled_reads_on_main' TO 'true'")
	rt, _ := routeOf(t, w, coordSpec(2).Host, "memgraph")
	want = map[string]any{"ttl": int64(300), "db": "memgraph", "servers": servers(
		"WRITE", []any{"lb-1.example.com:7687"},
		"READ", []any{dataBolt(2), dataBolt(3), "lb-1.example.com:7687"},
		"ROUTE", []any{coordBolt(1), "203.0.113.2:31002", coordBolt(3)},
	)}
	if diff := cmp.Diff(want, rt); diff != "" {
		t.Errorf("after UPDATE CONFIG (-want +got):\n%s", diff)
	}
	if rows := c1.must("SHOW INSTANCES").rows; row(t, rows, "instance_1")[5] != "main" || row(t, rows, "instance_1")[4] != "up" {
		t.Errorf("instance_1 after UPDATE CONFIG: %v", row(t, rows, "instance_1"))
	}
}

func TestRoutingTableLeavesOutLaggingReplicasAndNeedsALeader(t *testing.T) {
	w, c1 := setupCluster(t, 3, 3)
	must(t, w.Commit("memgraph", 10))
	must(t, w.SetLag(dataSpec(3).Host, "memgraph", 4))
	c1.must("SET COORDINATOR SETTING 'max_replica_read_lag' TO '3'")
	rt, _ := routeOf(t, w, coordSpec(1).Host)
	if got, want := rt["servers"].([]any)[1], server("READ", []any{dataBolt(2)}); !cmp.Equal(want, got) {
		t.Errorf("READ with instance_3 4 transactions behind and max_replica_read_lag 3: %v, want %v", got, want)
	}

	// A follower without a leader answers an empty table; a data instance refuses.
	w.Kill(coordSpec(1).Host)
	w.Kill(coordSpec(2).Host)
	advance(t, w, 2*LeadershipExpiry)
	if rt, _ := routeOf(t, w, coordSpec(3).Host); len(rt["servers"].([]any)) != 0 {
		t.Errorf("routing table of a coordinator without a leader: %v, want no servers", rt)
	}
	_, f := routeOf(t, w, dataSpec(1).Host)
	if f == nil || f.Code != bolt.CodeTransientError || f.Message != "Cannot fetch routing table from a data instance!" {
		t.Errorf("ROUTE on a data instance: %+v", f)
	}
}

func TestUpdateConfigOfACoordinatorNeverAddedIsRefused(t *testing.T) {
	w := startWorld(t, 1, 0)
	c1 := dial(t, w, coordBolt(1))
	out := c1.run(`UPDATE CONFIG FOR COORDINATOR 1 {'bolt_server': 'lb:7687'}`, nil)
	if out.err == nil || out.err.Msg != "Couldn't update config for the coordinator 1 because it doesn't exist!" {
		t.Fatalf("UPDATE CONFIG of a coordinator the application log lacks: %+v", out.err)
	}
	if r := row(t, c1.must("SHOW INSTANCES").rows, "coordinator_1"); r[1] != "" {
		t.Errorf("the refused update set its bolt_server: %v", r)
	}
}

// routeLog keeps the routing tables a real driver received, as its Bolt log shows them.
type routeLog struct {
	mu     sync.Mutex
	tables []string
}

func (l *routeLog) LogClientMessage(string, string, ...any) {}
func (l *routeLog) LogServerMessage(_ string, msg string, args ...any) {
	if line := fmt.Sprintf(msg, args...); strings.Contains(line, `"routing_table"`) {
		l.mu.Lock()
		l.tables = append(l.tables, line)
		l.mu.Unlock()
	}
}

var _ log.BoltLogger = (*routeLog)(nil)

// A routing driver (neo4j://) reads the table and sends writes to the MAIN, reads to a replica,
// at the bolt_servers the coordinators hold: here each member's own listener, set with UPDATE
// CONFIG as the hook does for external addresses. After a handover a new table names the new MAIN.
func TestRoutingDriverFollowsTheTable(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	for id := 1; id <= 3; id++ {
		c1.must(fmt.Sprintf(`UPDATE CONFIG FOR COORDINATOR %d {'bolt_server': '%s'}`, id, w.Resolve(coordBolt(id))))
	}
	for n := 1; n <= 2; n++ {
		c1.must(fmt.Sprintf(`UPDATE CONFIG FOR INSTANCE instance_%d {'bolt_server': '%s'}`, n, w.Resolve(dataBolt(n))))
	}
	hostOf := func(query string) string {
		for _, q := range w.Queries() {
			if q.Text == query {
				return q.Host
			}
		}
		return ""
	}
	writeAndRead := func(tag string) (writer, reader string, tables []string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		drv, err := neo4j.NewDriverWithContext("neo4j://"+w.Resolve(coordBolt(2)), neo4j.NoAuth())
		if err != nil {
			t.Fatal(err)
		}
		defer drv.Close(ctx)
		rl := &routeLog{}
		write, read := "CREATE (:Probe {tag: '"+tag+"'})", "MATCH (n:Probe {tag: '"+tag+"'}) RETURN count(n)"
		if _, err := neo4j.ExecuteQuery(ctx, drv, write, nil, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithWritersRouting(), neo4j.ExecuteQueryWithBoltLogger(rl)); err != nil {
			t.Fatalf("write through the routing table: %v", err)
		}
		if _, err := neo4j.ExecuteQuery(ctx, drv, read, nil, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithReadersRouting(), neo4j.ExecuteQueryWithBoltLogger(rl)); err != nil {
			t.Fatalf("read through the routing table: %v", err)
		}
		return hostOf(write), hostOf(read), rl.tables
	}
	writer, reader, tables := writeAndRead("before")
	if writer != dataSpec(1).Host || reader != dataSpec(2).Host {
		t.Errorf("write went to %q, read to %q; want the MAIN %s and the replica %s", writer, reader, dataSpec(1).Host, dataSpec(2).Host)
	}
	if len(tables) == 0 || !strings.Contains(tables[0], w.Resolve(dataBolt(1))) {
		t.Errorf("the driver's routing table %q does not name the MAIN's bolt_server %s", tables, w.Resolve(dataBolt(1)))
	}
	c1.must("DEMOTE INSTANCE instance_1")
	c1.must("SET INSTANCE instance_2 TO MAIN")
	if writer, reader, _ = writeAndRead("after"); writer != dataSpec(2).Host || reader != dataSpec(1).Host {
		t.Errorf("after the handover the write went to %q, the read to %q; want %s and %s", writer, reader, dataSpec(2).Host, dataSpec(1).Host)
	}
}

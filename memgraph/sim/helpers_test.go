package sim

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// outcome is what a client observed for one auto-commit query.
type outcome struct {
	rows   []map[string]any
	notes  []string // notification titles
	err    *neo4j.Neo4jError
	phase  string // "RUN" or "PULL" when err != nil
	keys   []string
	result neo4j.ResultWithContext
}

// client is one driver against one simulated instance, dialled through World.Resolve.
type client struct {
	t   testing.TB
	drv neo4j.DriverWithContext
}

func dial(t testing.TB, w *World, address string) *client {
	t.Helper()
	drv, err := neo4j.NewDriverWithContext("bolt://"+w.Resolve(address), neo4j.NoAuth(), func(c *neo4j.Config) {
		c.SocketConnectTimeout = 2 * time.Second
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close(context.Background()) })
	return &client{t: t, drv: drv}
}

// run sends one auto-commit query and consumes its result, recording which Bolt reply failed.
func (c *client) run(query string, params map[string]any) outcome {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s := c.drv.NewSession(ctx, neo4j.SessionConfig{})
	defer s.Close(ctx)
	res, err := s.Run(ctx, query, params)
	if err != nil {
		return outcome{err: asNeo4j(c.t, err), phase: "RUN"}
	}
	keys, _ := res.Keys()
	out := outcome{keys: keys}
	for res.Next(ctx) {
		out.rows = append(out.rows, res.Record().AsMap())
	}
	if err := res.Err(); err != nil {
		return outcome{err: asNeo4j(c.t, err), phase: "PULL"}
	}
	sum, err := res.Consume(ctx)
	if err != nil {
		return outcome{err: asNeo4j(c.t, err), phase: "PULL"}
	}
	for _, n := range sum.Notifications() {
		out.notes = append(out.notes, n.Title())
	}
	return out
}

// must runs a query that has to succeed.
func (c *client) must(query string) outcome {
	c.t.Helper()
	out := c.run(query, nil)
	if out.err != nil {
		c.t.Fatalf("%s: %s failed: %s", out.phase, query, out.err.Msg)
	}
	return out
}

func asNeo4j(t testing.TB, err error) *neo4j.Neo4jError {
	t.Helper()
	var ne *neo4j.Neo4jError
	if !errors.As(err, &ne) {
		t.Fatalf("not a Neo4jError: %T %v", err, err)
	}
	return ne
}

// Canonical fixture: coordinators coord-<id>.mg.svc with ports 7687/10000/12000 and data
// instances data-<n>.mg.svc registered as instance_<n>.
func coordSpec(id int) CoordinatorSpec {
	return CoordinatorSpec{ID: id, Host: fmt.Sprintf("coord-%d.mg.svc", id), BoltPort: 7687, ManagementPort: 10000, CoordinatorPort: 12000}
}

func dataSpec(n int) DataSpec {
	return DataSpec{Host: fmt.Sprintf("data-%d.mg.svc", n), BoltPort: 7687, ManagementPort: 10000}
}

func coordBolt(id int) string { return fmt.Sprintf("coord-%d.mg.svc:7687", id) }
func dataBolt(n int) string   { return fmt.Sprintf("data-%d.mg.svc:7687", n) }

func addQuery(id int) string {
	h := fmt.Sprintf("coord-%d.mg.svc", id)
	return fmt.Sprintf(`ADD COORDINATOR %d WITH CONFIG {"bolt_server": "%s:7687", "coordinator_server": "%s:12000", "management_server": "%s:10000"}`, id, h, h, h)
}

func registerQuery(n int) string {
	h := fmt.Sprintf("data-%d.mg.svc", n)
	return fmt.Sprintf(`REGISTER INSTANCE instance_%d WITH CONFIG {"bolt_server": "%s:7687", "management_server": "%s:10000", "replication_server": "%s:20000"}`, n, h, h, h)
}

// epoch is where the tests' manual clocks start.
var sessionConfig = neo4j.SessionConfig{}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// startWorld starts coords coordinators and data data instances, without any setup query, on a
// manual clock (advance moves it) unless opts bring another.
func startWorld(t testing.TB, coords, data int, opts ...Option) *World {
	t.Helper()
	w := NewWorld(append([]Option{WithClock(NewManualClock(epoch))}, opts...)...)
	t.Cleanup(w.Close)
	for id := 1; id <= coords; id++ {
		if err := w.StartCoordinator(coordSpec(id)); err != nil {
			t.Fatal(err)
		}
	}
	for n := 1; n <= data; n++ {
		if err := w.StartData(dataSpec(n)); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// setupCluster builds the usual cluster through coordinator 1: every coordinator ADDed, every
// data instance registered, instance_1 MAIN.
func setupCluster(t testing.TB, coords, data int, opts ...Option) (*World, *client) {
	t.Helper()
	w := startWorld(t, coords, data, opts...)
	c1 := dial(t, w, coordBolt(1))
	for id := 1; id <= coords; id++ {
		c1.must(addQuery(id))
	}
	for n := 1; n <= data; n++ {
		c1.must(registerQuery(n))
	}
	if data > 0 {
		c1.must("SET INSTANCE instance_1 TO MAIN")
	}
	w.ResetLog()
	return w, c1
}

// table renders SHOW INSTANCES rows without last_succ_resp_ms, as the e2e tests compare them.
func table(rows []map[string]any) [][6]string {
	var out [][6]string
	for _, r := range rows {
		out = append(out, [6]string{r["name"].(string), r["bolt_server"].(string), r["coordinator_server"].(string),
			r["management_server"].(string), r["health"].(string), r["role"].(string)})
	}
	return out
}

// advance moves the world's manual clock forward.
func advance(t testing.TB, w *World, d time.Duration) {
	t.Helper()
	clock, ok := w.opts.clock.(*ManualClock)
	if !ok {
		t.Fatalf("the world runs on %T, not a manual clock", w.opts.clock)
	}
	clock.Advance(d)
}

// row finds one SHOW INSTANCES row by name.
func row(t testing.TB, rows []map[string]any, name string) [6]string {
	t.Helper()
	for _, r := range table(rows) {
		if r[0] == name {
			return r
		}
	}
	t.Fatalf("no row %s in %v", name, table(rows))
	return [6]string{}
}

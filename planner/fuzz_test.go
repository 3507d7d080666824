package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// FuzzPlan plans against arbitrary observations — any declared and current sizes, members
// present, missing, drifted, fresh or foreign, any health and role (several MAINs, several
// leaders, values Memgraph never reports), any leader name, any lag — through the public API only,
// and checks the invariants the package doc promises for every input:
//
//   - nothing Memgraph refuses: no SET INSTANCE TO MAIN beside a MAIN or while a registered
//     instance's role is unknown, no UNREGISTER of a MAIN except right behind its handover, no
//     REMOVE COORDINATOR of a leader or while no leader is known, no ADD or REGISTER of a member
//     already registered, no second handover, a handover only from the MAIN and only to declared
//     survivors proven up, replicas and caught up on every database of the MAIN;
//   - commands only for our own members (declared, or retiring with our identity), with exactly
//     their declared identity; YIELD LEADERSHIP only last and only by a retiring leader;
//   - replica counts never below the declared ones and never below a member still registered,
//     never above what the declared, current and registered sizes explain;
//   - the same input always gives the same plan.
func FuzzPlan(f *testing.F) {
	for _, seed := range [][]byte{
		{},                          // 3+2 converged, led by coordinator_1, MAIN instance_0
		{0, 1},                      // one data instance retiring
		{1, 0, 2},                   // coordinators 5 declared, growing
		{0, 3, 0, 0, 0, 0, 0, 0, 0}, // data retiring with MAIN on it
		[]byte(strings.Repeat("\x05", 64)),
		[]byte(strings.Repeat("\x13\x07\x02", 40)),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := decodeObservation(data)
		res := planner.Plan(in.declared, in.observed)
		if again := planner.Plan(in.declared, in.observed); !samePlan(res, again) {
			t.Fatalf("two plans of one input differ:\n%s\n%s", describe(res), describe(again))
		}
		for _, v := range violations(in, res) {
			t.Errorf("%s", v)
		}
		if t.Failed() {
			t.Logf("input: %s\nplan: %s", in, describe(res))
		}
	})
}

// fuzzInput is one decoded observation.
type fuzzInput struct {
	declared topology.Declared
	observed planner.Observed
}

func (in fuzzInput) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "declared %d+%d, current %d+%d, leader %q\n", len(in.declared.Coordinators), len(in.declared.DataInstances),
		in.observed.Current.Coordinators, in.observed.Current.DataInstances, in.observed.Leader)
	for _, r := range in.observed.Instances {
		fmt.Fprintf(&b, "  %+v\n", r)
	}
	if in.observed.Lag != nil {
		fmt.Fprintf(&b, "  lag %+v\n", in.observed.Lag)
	}
	return b.String()
}

var fuzzNet = topology.Network{Cluster: "mg", Namespace: "db", ClusterDomain: "cluster.local",
	Ports: topology.Ports{Bolt: 7687, Management: 10000, Replication: 20000, Coordinator: 12000}}

// byteReader reads choices from the fuzz input; past its end every choice is 0, and choice 0 is
// always the healthy, ordinary one, so an empty input is a converged cluster.
type byteReader struct{ b []byte }

func (r *byteReader) next(n int) int {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return int(c) % n
}

func pick[T any](r *byteReader, choices ...T) T { return choices[r.next(len(choices))] }

const weird = "weird"

func decodeObservation(data []byte) fuzzInput {
	r := &byteReader{data}
	declared := topology.Replicas{
		Coordinators:  pick[int32](r, 3, 5, 1, 7, 9, 0),
		DataInstances: pick[int32](r, 2, 1, 3, 0, 4, 6, 8),
	}
	current := topology.Replicas{
		Coordinators:  max(0, declared.Coordinators+pick[int32](r, 0, 2, -2, 4, 1, -1)),
		DataInstances: max(0, declared.DataInstances+pick[int32](r, 0, 1, 2, -1, 3)),
	}
	in := fuzzInput{declared: topology.Declare(fuzzNet, declared, current)}
	in.observed.Current = current
	if r.next(5) == 4 { // the cache lags: what it says is not what the cluster has
		in.observed.Current = topology.Replicas{Coordinators: int32(r.next(10)), DataInstances: int32(r.next(12))}
	}

	leader := 1 + r.next(11) // 11: no leader
	switch r.next(8) {
	case 6:
		in.observed.Leader = weird
	case 7:
		in.observed.Leader = ""
	default:
		if leader <= 10 {
			in.observed.Leader = topology.CoordinatorName(leader)
		}
	}
	for id := topology.FirstCoordinatorID; id <= 10; id++ {
		row, ok := coordinatorRow(r, id, in.observed.Leader)
		if ok {
			in.observed.Instances = append(in.observed.Instances, row)
		}
	}
	mainAt := r.next(14) // 12, 13: no MAIN forced
	for ord := topology.FirstDataOrdinal; ord < 12; ord++ {
		row, ok := dataRow(r, ord, ord == mainAt)
		if ok {
			in.observed.Instances = append(in.observed.Instances, row)
		}
	}
	if r.next(4) == 3 { // an instance a human registered under a name of their own
		in.observed.Instances = append(in.observed.Instances, memgraph.Instance{
			Name: "human_1", BoltServer: "x:7687", ManagementServer: "x:10000",
			Health: pick(r, memgraph.HealthUp, memgraph.HealthDown), Role: pick(r, memgraph.RoleReplica, memgraph.RoleMain, memgraph.RoleUnknown),
		})
	}
	if r.next(3) != 2 {
		in.observed.Lag = lagRows(r, in.observed.Instances)
	}
	return in
}

// coordinatorRow: most coordinators beyond the sizes are absent; the others are registered with
// our identity, fresh (empty bolt_server), or drifted, with any health and role.
func coordinatorRow(r *byteReader, id int, leader string) (memgraph.Instance, bool) {
	c := fuzzNet.Coordinator(id)
	row := memgraph.Instance{Name: c.Name, BoltServer: c.BoltServer, CoordinatorServer: c.CoordinatorServer,
		ManagementServer: c.ManagementServer, Health: memgraph.HealthUp, Role: memgraph.RoleFollower}
	if c.Name == leader {
		row.Role = memgraph.RoleLeader
	}
	switch r.next(8) {
	case 4, 5:
		return row, false
	case 6:
		row.BoltServer = ""
	case 7:
		row.CoordinatorServer = "elsewhere:12000"
	}
	row.Health = pick(r, memgraph.HealthUp, memgraph.HealthUp, memgraph.HealthDown, memgraph.HealthUnknown, weird)
	switch r.next(6) {
	case 4:
		row.Role = memgraph.RoleLeader
	case 5:
		row.Role = pick(r, memgraph.RoleUnknown, memgraph.RoleFollower, weird)
	}
	return row, true
}

// dataRow: registered with our identity or drifted, or absent; any health; role replica unless
// it is the MAIN, or anything else now and then.
func dataRow(r *byteReader, ord int, main bool) (memgraph.Instance, bool) {
	d := fuzzNet.DataInstance(ord)
	row := memgraph.Instance{Name: d.Name, BoltServer: d.BoltServer, ManagementServer: d.ManagementServer,
		Health: memgraph.HealthUp, Role: memgraph.RoleReplica}
	if main {
		row.Role = memgraph.RoleMain
	}
	switch r.next(8) {
	case 5, 6:
		return row, false
	case 7:
		row.ManagementServer = "elsewhere:10000"
	}
	row.Health = pick(r, memgraph.HealthUp, memgraph.HealthUp, memgraph.HealthUp, memgraph.HealthDown, memgraph.HealthUnknown, weird)
	switch r.next(8) {
	case 5:
		row.Role = memgraph.RoleMain
	case 6:
		row.Role = memgraph.RoleUnknown
	case 7:
		row.Role = pick(r, weird, memgraph.RoleReplica, "")
	}
	return row, true
}

// lagRows reports most data rows, each on "memgraph" and sometimes "db2", mostly caught up.
func lagRows(r *byteReader, rows []memgraph.Instance) []memgraph.InstanceLag {
	lag := []memgraph.InstanceLag{}
	for _, row := range rows {
		if row.IsCoordinator() || r.next(6) == 5 {
			continue
		}
		dbs := map[string]memgraph.DatabaseLag{"memgraph": {CommittedTxns: 10, TxnsBehindMain: int64(pick(r, 0, 0, 0, 1, 7))}}
		if r.next(3) == 2 {
			dbs["db2"] = memgraph.DatabaseLag{CommittedTxns: 3, TxnsBehindMain: int64(pick(r, 0, 0, 2))}
		}
		if r.next(8) == 7 {
			delete(dbs, "memgraph")
		}
		lag = append(lag, memgraph.InstanceLag{Instance: row.Name, Databases: dbs})
	}
	return lag
}

func samePlan(a, b planner.Result) bool {
	return describe(a) == describe(b) && cmp.Equal(a.Replicas, b.Replicas) && cmp.Equal(a.Progress, b.Progress)
}

func describe(res planner.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "replicas %d+%d", res.Replicas.Coordinators, res.Replicas.DataInstances)
	for _, c := range res.Commands {
		fmt.Fprintf(&b, "\n  %s", c)
	}
	return b.String()
}

package planner_test

import (
	"fmt"
	"slices"
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
//   - the rollout, on StatefulSets at any point of one (pod revisions, readiness, terminating or
//     missing pods, stale revisions, rollbacks; rollout_invariants_test.go): partitions within
//     [0, returned replicas]; never two pods released at once, none while a role is stale or
//     retiring, none beside the rollout's handover or yield, none without a ready leader's view;
//     never the pod of a MAIN of several data instances or of a leader; a Ready pod only while
//     every other declared pod is Ready and every other member registered and up; a rollout's
//     handover only from the MAIN whose pod is next, a yield only by the leader whose pod is next;
//   - the same input always gives the same plan, and its NeedsCatchUpReads is the function's.
func FuzzPlan(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := decodeObservation(data)
		res := planner.Decide(in.declared, in.observed)
		if again := planner.Decide(in.declared, in.observed); !samePlan(res, again) {
			t.Fatalf("two plans of one input differ:\n%s\n%s", describe(res), describe(again))
		}
		if want := planner.NeedsCatchUpReads(in.declared, in.observed); res.NeedsCatchUpReads != want {
			t.Errorf("Plan.NeedsCatchUpReads %v, NeedsCatchUpReads %v", res.NeedsCatchUpReads, want)
		}
		for _, v := range violations(in, res) {
			t.Errorf("%s", v)
		}
		if t.Failed() {
			t.Logf("input: %s\nplan: %s", in, describe(res))
		}
	})
}

// fuzzSeeds are FuzzPlan's seeds by what they plan (TestFuzzPlanSeeds checks that they do).
// An input is a sequence of choices (decodeObservation); after the header of sizes and leader,
// each coordinator inside the StatefulSet's size takes three (present, health, role), each one
// beyond it one (absent), and so on; an input that ends early is healthy from there on.
var fuzzSeeds = map[string][]byte{
	"converged": {}, // 3+2 led by coordinator_1, MAIN instance_0
	// 5 coordinators declared, the set at 3, coordinators 4 and 5 not members yet.
	"grow": slices.Concat([]byte{1, 0, 2, 0, 0, 0, 0}, make([]byte, 3*3), []byte{4, 4}),
	// 2 data instances declared, the set at 3: instance_2 retires.
	"retire": {0, 0, 0, 1},
	// the same with MAIN on instance_2, every replica caught up: MAIN is handed over first.
	"handover": slices.Concat([]byte{0, 0, 0, 1, 0, 0, 0}, make([]byte, 3*3+7), []byte{2}),
	// data rolling, neither pod replaced yet, MAIN on instance_0: instance_1's pod is released.
	"rollout-release": slices.Concat(restPrefix(0, 0), []byte{0}, settledSet(3), rollingSet("oo")),
	// the same with MAIN on instance_1: MAIN is handed over to instance_0 first.
	"rollout-handover": slices.Concat(restPrefix(0, 1), []byte{0}, settledSet(3), rollingSet("no")),
	// coordinators rolling, coordinator_3 next and leading: it yields first.
	"rollout-yield": slices.Concat(restPrefix(2, 0), []byte{0}, rollingSet("nno"), settledSet(2)),
	"repeat-05":     []byte(strings.Repeat("\x05", 64)),
	"repeat-13":     []byte(strings.Repeat("\x13\x07\x02", 40)),
}

// fuzzInput is one decoded observation.
type fuzzInput struct {
	declared topology.Declared
	observed planner.Observed
}

func (in fuzzInput) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "declared %d+%d, current %d+%d, leader %q\n", len(in.declared.Coordinators), len(in.declared.DataInstances),
		in.observed.Span.Coordinators, in.observed.Span.DataInstances, in.observed.Leader)
	for _, r := range in.observed.Instances {
		fmt.Fprintf(&b, "  %+v\n", r)
	}
	if in.observed.Lag != nil {
		fmt.Fprintf(&b, "  lag %+v\n", in.observed.Lag)
	}
	if w := in.observed.Workloads; w != nil {
		for _, s := range []planner.RolloutSet{w.Coordinators, w.Data} {
			fmt.Fprintf(&b, "  set exists=%v update=%q current=%q generations %d/%d/%d changing=%v pods=%d\n", s.Exists,
				s.UpdateRevision, s.CurrentRevision, s.TemplateGeneration, s.Generation, s.ObservedGeneration, s.TemplateChanging, s.Span)
			for _, p := range s.Pods {
				fmt.Fprintf(&b, "    pod %d %q ready=%v terminating=%v\n", p.Index, p.Revision, p.Ready, p.Terminating)
			}
		}
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
	span := topology.Replicas{
		Coordinators:  max(0, declared.Coordinators+pick[int32](r, 0, 2, -2, 4, 1, -1)),
		DataInstances: max(0, declared.DataInstances+pick[int32](r, 0, 1, 2, -1, 3)),
	}
	in := fuzzInput{declared: topology.Declare(fuzzNet, declared, span)}
	in.observed.Span = span
	if r.next(5) == 4 { // the cache lags: what it says is not what the cluster has
		in.observed.Span = topology.Replicas{Coordinators: int32(r.next(10)), DataInstances: int32(r.next(12))}
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
		inside := id-topology.FirstCoordinatorID < int(max(declared.Coordinators, span.Coordinators))
		row, ok := coordinatorRow(r, id, inside, in.observed.Leader)
		if ok {
			in.observed.Instances = append(in.observed.Instances, row)
		}
	}
	mainAt := r.next(14) // 12, 13: no MAIN forced
	for ord := topology.FirstDataOrdinal; ord < 12; ord++ {
		inside := ord-topology.FirstDataOrdinal < int(max(declared.DataInstances, span.DataInstances))
		row, ok := dataRow(r, ord, inside, ord == mainAt)
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
	if r.next(8) != 7 { // the hook always knows the workloads; without them Decide plans no rollout
		in.observed.Workloads = workloads(r, declared, span)
	}
	in.observed.Replicas = replicasEvidence(r, in.observed)
	return in
}

// replicasEvidence is the MAIN's SHOW REPLICAS read beside the lag: mostly what Memgraph
// answers with those counts (ready when 0 behind, recovering otherwise), now and then a replica
// recovering although its lag reads 0 (a wiped replica: the lag is the MAIN's cached count),
// missing or lacking a database, a read that failed, or one made on another instance.
func replicasEvidence(r *byteReader, o planner.Observed) *planner.MainReplicas {
	main := ""
	for _, row := range o.Instances {
		if !row.IsCoordinator() && row.Role == memgraph.RoleMain && (main == "" || row.Name < main) {
			main = row.Name
		}
	}
	if o.Lag == nil || main == "" {
		return nil
	}
	ev := &planner.MainReplicas{Main: main, Rows: []memgraph.Replica{}}
	switch r.next(10) {
	case 7:
		return &planner.MainReplicas{Main: main, Problem: "Authentication failure"}
	case 8:
		ev.Main = pick(r, "instance_0", "instance_1", "human_1")
	}
	for _, l := range o.Lag {
		if l.Instance == main {
			continue
		}
		row := memgraph.Replica{Name: l.Instance, SyncMode: "sync", Databases: map[string]memgraph.ReplicaDatabase{}}
		for db, d := range l.Databases {
			status := memgraph.ReplicaReady
			if d.TxnsBehindMain != 0 {
				status = memgraph.ReplicaRecovery
			}
			row.Databases[db] = memgraph.ReplicaDatabase{Timestamp: d.CommittedTxns, Behind: -d.TxnsBehindMain, Status: status}
		}
		switch r.next(12) {
		case 9:
			continue // not listed
		case 10:
			row.Databases["memgraph"] = memgraph.ReplicaDatabase{Status: pick(r, memgraph.ReplicaRecovery,
				memgraph.ReplicaInvalid, memgraph.ReplicaDiverged, memgraph.ReplicaReplicating)}
		case 11:
			delete(row.Databases, "memgraph")
		}
		ev.Rows = append(ev.Rows, row)
	}
	return ev
}

// coordinatorRow: most coordinators beyond the sizes (not inside) are absent, most inside
// present; present ones are registered with our identity, fresh (empty bolt_server), or drifted,
// with any health and role.
func coordinatorRow(r *byteReader, id int, inside bool, leader string) (memgraph.Instance, bool) {
	c := fuzzNet.Coordinator(id)
	row := memgraph.Instance{Name: c.Name, BoltServer: c.BoltServer, CoordinatorServer: c.CoordinatorServer,
		ManagementServer: c.ManagementServer, Health: memgraph.HealthUp, Role: memgraph.RoleFollower}
	if c.Name == leader {
		row.Role = memgraph.RoleLeader
	}
	switch c := r.next(8); {
	case (c == 4 || c == 5) == inside:
		return row, false
	case c == 6:
		row.BoltServer = ""
	case c == 7:
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

// dataRow: registered with our identity or drifted, or absent (most beyond the sizes, i.e. not
// inside, are); any health; role replica unless it is the MAIN, or anything else now and then.
func dataRow(r *byteReader, ord int, inside, main bool) (memgraph.Instance, bool) {
	d := fuzzNet.DataInstance(ord)
	row := memgraph.Instance{Name: d.Name, BoltServer: d.BoltServer, ManagementServer: d.ManagementServer,
		Health: memgraph.HealthUp, Role: memgraph.RoleReplica}
	if main {
		row.Role = memgraph.RoleMain
	}
	switch c := r.next(8); {
	case (c == 5 || c == 6) == inside:
		return row, false
	case c == 7:
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

func samePlan(a, b planner.Plan) bool {
	return describe(a) == describe(b) && cmp.Equal(a.Replicas, b.Replicas) && cmp.Equal(a.Progress, b.Progress) &&
		cmp.Equal(a.Rollout, b.Rollout)
}

func describe(res planner.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "replicas %d+%d", res.Replicas.Coordinators, res.Replicas.DataInstances)
	if ro := res.Rollout; ro.Reason != "" {
		fmt.Fprintf(&b, ", partitions %d+%d, %s: %s", ro.Partitions.Coordinators, ro.Partitions.DataInstances, ro.Reason, ro.Message)
	}
	for _, c := range res.Commands {
		fmt.Fprintf(&b, "\n  %s", c)
	}
	return b.String()
}

// The fuzzer starts from seeds that reach each part of the planner, so its invariants are
// exercised from the first execution on.
func TestFuzzPlanSeeds(t *testing.T) {
	want := map[string][]string{
		"converged": {"replicas 3+2"},
		"grow":      {"replicas 5+2", "ADD COORDINATOR", "ADD COORDINATOR"},
		"retire":    {"replicas 3+3", "UNREGISTER INSTANCE"},
		"handover":  {"replicas 3+3", "DEMOTE INSTANCE", "UNREGISTER INSTANCE"},
		// partitions coordinators+data: the StatefulSet controller replaces pods at or above them
		"rollout-release":  {"replicas 3+2", "partitions 3+1"},
		"rollout-handover": {"replicas 3+2", "partitions 3+2", "DEMOTE INSTANCE"},
		"rollout-yield":    {"replicas 3+2", "partitions 3+2", "YIELD LEADERSHIP"},
	}
	got := map[string][]string{}
	for name := range want {
		in := decodeObservation(fuzzSeeds[name])
		res := planner.Decide(in.declared, in.observed)
		got[name] = []string{fmt.Sprintf("replicas %d+%d", res.Replicas.Coordinators, res.Replicas.DataInstances)}
		if p := res.Rollout.Partitions; res.Rollout.InProgress() {
			got[name] = append(got[name], fmt.Sprintf("partitions %d+%d", p.Coordinators, p.DataInstances))
		}
		for _, c := range res.Commands {
			got[name] = append(got[name], string(c.Kind()))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the seeds plan (-want +got):\n%s", diff)
	}
}

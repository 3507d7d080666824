package planner

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// answer is coordinator id's reply: rows, or err when it did not answer.
func answer(id int, rows []memgraph.Instance, err error) Answer {
	return Answer{Coordinator: testNet.Coordinator(id), Instances: rows, Err: err}
}

func TestDiscover(t *testing.T) {
	refused := &memgraph.Error{Kind: memgraph.KindUnreachable, Message: "connection refused"}
	established := rows(coords(3, 2), one(mainRow(0), replica(1)))
	noLeader := rows(coords(3, 0), one(mainRow(0)))
	notReady := unknownHealth(established)
	fresh := func(id int) []memgraph.Instance { return one(freshSelf(id)) }
	for _, tc := range []struct {
		name     string
		answers  []Answer
		total    int
		chosen   int // the coordinator whose view is chosen; 0: none
		asked    int
		reach    bool
		notReady string
		problems []string
	}{{
		name:    "the first answer of an established cluster is chosen, even a follower's",
		answers: []Answer{answer(1, established, nil)}, total: 3,
		chosen: 1, asked: 1, reach: true,
	}, {
		name:    "an unreachable coordinator is passed over",
		answers: []Answer{answer(1, nil, refused), answer(2, established, nil)}, total: 3,
		chosen: 2, asked: 2, reach: true, problems: []string{"coordinator_1: connection refused"},
	}, {
		name:    "a view naming no leader is a stale state machine",
		answers: []Answer{answer(1, noLeader, nil), answer(2, noLeader, nil), answer(3, noLeader, nil)}, total: 3,
		asked: 3, reach: true,
		problems: []string{"coordinator_1: names no leader", "coordinator_2: names no leader", "coordinator_3: names no leader"},
	}, {
		name:    "a not-ready leader's copy is no leader yet",
		answers: []Answer{answer(1, notReady, nil)}, total: 3,
		asked: 1, reach: true, notReady: "coordinator_2", problems: []string{"coordinator_1: coordinator_2 leads but is not ready"},
	}, {
		name:    "every coordinator fresh: bootstrap on the first",
		answers: []Answer{answer(1, fresh(1), nil), answer(2, fresh(2), nil), answer(3, fresh(3), nil)}, total: 3,
		chosen: 1, asked: 3, reach: true,
	}, {
		name:    "fresh but not every coordinator asked yet: keep asking",
		answers: []Answer{answer(1, fresh(1), nil), answer(2, fresh(2), nil)}, total: 3,
		asked: 2, reach: true,
		problems: []string{"coordinator_1: fresh, not bootstrapped while the other coordinators are not all fresh"},
	}, {
		name:    "a wiped coordinator beside an unreachable one is never bootstrapped",
		answers: []Answer{answer(1, fresh(1), nil), answer(2, nil, refused), answer(3, noLeader, nil)}, total: 3,
		asked: 3, reach: true,
		problems: []string{"coordinator_2: connection refused", "coordinator_3: names no leader",
			"coordinator_1: fresh, not bootstrapped while the other coordinators are not all fresh"},
	}, {
		name:    "a wiped coordinator beside the established cluster: the cluster's view wins",
		answers: []Answer{answer(1, fresh(1), nil), answer(2, established, nil)}, total: 3,
		chosen: 2, asked: 2, reach: true,
	}, {
		// coordinator_2's pod went and a fresh coordinator_3 got its address: bootstrapping on
		// that answer would pull coordinator_1 into a second Raft cluster.
		name:    "a fresh coordinator answering at another's address speaks for nobody",
		answers: []Answer{answer(1, noLeader, nil), answer(2, fresh(3), nil), answer(3, fresh(3), nil)}, total: 3,
		asked: 3, reach: true,
		problems: []string{"coordinator_1: names no leader", notItself(testNet.Coordinator(2)),
			"coordinator_3: fresh, not bootstrapped while the other coordinators are not all fresh"},
	}, {
		name:    "every answer fresh, one from a reused address: no bootstrap",
		answers: []Answer{answer(1, fresh(1), nil), answer(2, fresh(3), nil), answer(3, fresh(3), nil)}, total: 3,
		asked: 3, reach: true,
		problems: []string{notItself(testNet.Coordinator(2)),
			"coordinator_1: fresh, not bootstrapped while the other coordinators are not all fresh"},
	}, {
		name:    "nobody answers",
		answers: []Answer{answer(1, nil, refused), answer(2, nil, refused)}, total: 2,
		asked: 2, problems: []string{"coordinator_1: connection refused", "coordinator_2: connection refused"},
	}, {
		name: "nobody asked (the budget ran out first)", total: 3,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Discover(tc.answers, tc.total)
			var want View
			if tc.chosen != 0 {
				for _, a := range tc.answers {
					if a.Coordinator.ID() == tc.chosen {
						want = NewView(a.Coordinator, a.Instances)
					}
				}
			}
			if diff := cmp.Diff(want, got.View, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
			if got.Found() != (tc.chosen != 0) || got.Asked != tc.asked || got.Reachable != tc.reach || got.NotReady != tc.notReady {
				t.Errorf("found %v, asked %d, reachable %v, not ready %q", got.Found(), got.Asked, got.Reachable, got.NotReady)
			}
			if diff := cmp.Diff(tc.problems, got.Problems, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func withoutRow(rows []memgraph.Instance, name string) []memgraph.Instance {
	var out []memgraph.Instance
	for _, r := range rows {
		if r.Name != name {
			out = append(out, r)
		}
	}
	return out
}

func TestCheckLeaderViewRefusesAnotherServersAnswer(t *testing.T) {
	leader := testNet.Coordinator(2)
	for _, tc := range []struct {
		name string
		rows []memgraph.Instance
		want string
	}{
		{"the leader's own table", coords(3, 2), ""},
		{"leadership moved", coords(3, 1), `coordinator_2 was named leader but reports leader "coordinator_1"`},
		{"a fresh coordinator at the leader's address", one(freshSelf(3)), notItself(leader)},
		{"a table without the leader, as a removed coordinator keeps", withoutRow(coords(3, 2), "coordinator_2"), notItself(leader)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckLeaderView("coordinator_2", NewView(leader, tc.rows))
			if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
				t.Errorf("CheckLeaderView = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLeaderOf(t *testing.T) {
	d := declared(3, 2, 5, 2)
	foreign := coord(7, memgraph.RoleLeader)
	foreign.BoltServer = "elsewhere:7687"
	unreachableLeader := coord(7, memgraph.RoleLeader)
	unreachableLeader.BoltServer = ""
	for _, tc := range []struct {
		name    string
		view    View
		address string
		err     string
	}{
		{"a declared leader", NewView(testNet.Coordinator(1), coords(3, 2)), addr(coordHost(2), 7687), ""},
		{"a retiring leader", NewView(testNet.Coordinator(1), coords(5, 5)), addr(coordHost(5), 7687), ""},
		{"a leader outside the ranges, at the address its row reports", NewView(testNet.Coordinator(1), rows(coords(3, 0), one(foreign))), "elsewhere:7687", ""},
		{"a leader without a known address", NewView(testNet.Coordinator(1), rows(coords(3, 0), one(unreachableLeader))), "", "leader coordinator_7 has no known Bolt address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LeaderOf(d, tc.view)
			if got := errorText(err); got != tc.err || c.BoltServer != tc.address {
				t.Errorf("LeaderOf = %q, %q; want %q, %q", c.BoltServer, got, tc.address, tc.err)
			}
		})
	}
	if err := CheckLeaderView("coordinator_2", NewView(testNet.Coordinator(2), coords(3, 3))); errorText(err) != `coordinator_2 was named leader but reports leader "coordinator_3"` {
		t.Errorf("CheckLeaderView of a moved leadership: %v", err)
	}
	if err := CheckLeaderView("coordinator_2", NewView(testNet.Coordinator(2), coords(3, 2))); err != nil {
		t.Errorf("CheckLeaderView of the leader: %v", err)
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestSettled(t *testing.T) {
	converged := rows(coords(3, 1), one(mainRow(0), replica(1)))
	shrunk := rows(coords(3, 2), one(mainRow(0), replica(1)))
	for _, tc := range []struct {
		name   string
		d      []int32 // declared and current counts
		asked  int     // the coordinator whose answer it is
		rows   []memgraph.Instance
		held   [2]int32
		settle bool
	}{
		{"converged, from the leader", []int32{3, 2, 3, 2}, 1, converged, [2]int32{3, 2}, true},
		{"converged, from a follower", []int32{3, 2, 3, 2}, 1, shrunk, [2]int32{3, 2}, true},
		{"work to do", []int32{3, 3, 3, 3}, 1, converged, [2]int32{3, 3}, false},
		{"a shrink seen by a follower rests on the leader", []int32{3, 2, 3, 3}, 1, shrunk, [2]int32{3, 3}, false},
		{"a shrink seen by the leader itself", []int32{3, 2, 3, 3}, 2, shrunk, [2]int32{3, 3}, true},
		{"a handover is due: lag is the leader's", []int32{3, 1, 3, 2}, 1, rows(coords(3, 1), one(replica(0), mainRow(1))), [2]int32{3, 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := declared(tc.d[0], tc.d[1], tc.d[2], tc.d[3])
			o := Observe(tc.rows, nil, replicas(tc.d[2], tc.d[3]))
			v := NewView(testNet.Coordinator(tc.asked), tc.rows)
			if got := SettlesPass(Decide(d, o), v, replicas(tc.held[0], tc.held[1])); got != tc.settle {
				t.Errorf("Settled = %v, want %v", got, tc.settle)
			}
		})
	}
}

func TestObserveNamesTheLeaderRow(t *testing.T) {
	o := Observe(rows(coords(3, 2), one(mainRow(0))), nil, replicas(3, 1))
	if o.Leader != "coordinator_2" || o.Span != replicas(3, 1) || o.Lag != nil {
		t.Errorf("Observe = %+v", o)
	}
	if got := Observe(rows(coords(3, 0), one(mainRow(0))), nil, replicas(3, 1)).Leader; got != "" {
		t.Errorf("no leader row, yet leader %q", got)
	}
}

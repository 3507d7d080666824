package planner

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

func TestJudgeStep(t *testing.T) {
	reg := RegisterInstance{Name: "instance_1"}
	err := func(kind memgraph.Kind, msg string) error { return &memgraph.Error{Kind: kind, Message: msg} }
	cases := []struct {
		name string
		cmd  Command
		err  error
		want StepVerdict
	}{
		{"FORCE RESET past its own deadline", ForceResetClusterState{}, err(memgraph.KindTimeout, "no answer"), StepInProgress},
		{"FORCE RESET lost the leadership", ForceResetClusterState{}, err(memgraph.KindNotLeader, "Force reset failed since the instance is not leader anymore!"), StepLeaderMoved},
		{"FORCE RESET on a not-ready leader", ForceResetClusterState{}, err(memgraph.KindNoLeader, "…leader couldn't be found!"), StepLeaderMoved},
		{"a write on a not-ready leader", reg, err(memgraph.KindNoLeader, "…leader couldn't be found!"), StepLeaderMoved},
		{"a write forwarded after the leader changed", UnregisterInstance{Name: "instance_2"}, err(memgraph.KindForwardFailed, "Request forwarded…"), StepLeaderMoved},
		{"a concurrent writer registered the name", reg, err(memgraph.KindNameExists, "Couldn't register replica instance since instance with such name already exists!"), StepDone},
		{"an endpoint registered under another name", reg, err(memgraph.KindAlreadyExists, "Couldn't register replica instance since instance with such management server already exists!"), StepFailed},
		{"a concurrent writer elected a MAIN", SetInstanceToMain{Name: "instance_0"}, err(memgraph.KindMainExists, "…already a main instance in cluster!"), StepDone},
		{"ADD refused for a half-joined member", AddCoordinator{ID: 5}, &HalfJoinedError{Coordinator: "coordinator_5", Err: err(memgraph.KindIDExists, "…such id already exists!")}, StepFailed},
		{"ADD of an id that exists: registered (done) or half-joined, SHOW INSTANCES tells", AddCoordinator{ID: 5}, err(memgraph.KindIDExists, "Couldn't add coordinator since instance with such id already exists!"), StepRecheck},
		{"ADD of an endpoint that exists", AddCoordinator{ID: 5}, err(memgraph.KindAlreadyExists, "Couldn't add coordinator since instance with such management endpoint already exists!"), StepFailed},
		{"a demote inside a handover on a moved leader", Handover{From: "instance_2", To: "instance_0"}, fmt.Errorf("handover of MAIN from instance_2: demote: %w", err(memgraph.KindNotLeader, "…not a leader!")), StepLeaderMoved},
		{"ADD timed out", AddCoordinator{ID: 5}, err(memgraph.KindMembershipTimeout, "Request for adding coordinator 5 reached a timeout!"), StepFailed},
		{"a handover whose SET met a not-ready leader", Handover{From: "instance_2", To: "instance_0"}, &HandoverError{From: "instance_2", To: "instance_0", PromoteErr: err(memgraph.KindNoLeader, "…")}, StepFailed},
		// A yielding leader refuses every Raft write until the transfer ends (NuRaft v2.1.0
		// raft_server.cxx 1169–1264), and one without a majority until it steps down: not yet.
		{"a Raft write refused while the leader yields", reg, err(memgraph.KindRaftWrite, "Writing to Raft log failed. Please retry the operation."), StepLeaderMoved},
		{"a handover's demote refused while the leader yields", Handover{From: "instance_2", To: "instance_0"},
			fmt.Errorf("handover of MAIN from instance_2: demote: %w", err(memgraph.KindRaftWrite, "Writing to Raft log failed. Please retry the operation.")), StepLeaderMoved},
		{"a removal refused while the leader yields", RemoveCoordinator{ID: 5}, err(memgraph.KindRaftWrite, "Writing to Raft log failed. Please retry the operation."), StepLeaderMoved},
		{"another write timed out", reg, err(memgraph.KindTimeout, "no reply"), StepFailed},
		{"not a memgraph error", reg, errors.New("boom"), StepFailed},
	}
	for _, tc := range cases {
		if got := JudgeStep(tc.cmd, tc.err); got != tc.want {
			t.Errorf("%s: JudgeStep = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestReadLeadership(t *testing.T) {
	notReady := rows(coords(3, 2), one(replica(0)))
	for i := range notReady {
		notReady[i].Health = memgraph.HealthUnknown
	}
	for _, tc := range []struct {
		name   string
		rows   []memgraph.Instance
		leader string
		state  Leadership
	}{
		{"ready", rows(coords(3, 2), one(mainRow(0))), "coordinator_2", LeaderReady},
		{"not ready", notReady, "coordinator_2", LeaderNotReady},
		{"none", rows(coords(3, 0), one(mainRow(0))), "", NoLeader},
	} {
		if leader, state := ReadLeadership(tc.rows); leader != tc.leader || state != tc.state {
			t.Errorf("%s: ReadLeadership = %q, %v; want %q, %v", tc.name, leader, state, tc.leader, tc.state)
		}
	}
}

func TestJudgeRecheck(t *testing.T) {
	idExists := &memgraph.Error{Kind: memgraph.KindIDExists, Message: "Couldn't add coordinator since instance with such id already exists!"}
	add := AddCoordinator{ID: 5}
	for _, tc := range []struct {
		name       string
		cmd        Command
		rows       []memgraph.Instance
		readErr    error
		want       StepVerdict
		halfJoined bool
	}{
		{"registered meanwhile by a concurrent writer: done", add, coords(5, 1), nil, StepDone, false},
		{"listed without a bolt_server: half-joined", add, rows(coords(4, 1), one(halfJoined(5))), nil, StepFailed, true},
		{"not listed at all: the refusal stands", add, coords(4, 1), nil, StepFailed, false},
		{"a data row of that name is no coordinator", add, rows(coords(4, 1), one(data(5, memgraph.HealthUp, memgraph.RoleReplica))), nil, StepFailed, false},
		{"the read failed: the refusal stands", add, nil, errors.New("unreachable"), StepFailed, false},
		{"nothing to recheck for another command", RegisterInstance{Name: "instance_5"}, coords(5, 1), nil, StepFailed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verdict, err := JudgeRecheck(tc.cmd, idExists, tc.rows, tc.readErr)
			if verdict != tc.want {
				t.Errorf("verdict %v, want %v", verdict, tc.want)
			}
			var hj *HalfJoinedError
			switch {
			case verdict == StepDone && err != nil:
				t.Errorf("done, yet reports %v", err)
			case tc.halfJoined && (!errors.As(err, &hj) || hj.Coordinator != "coordinator_5" || !errors.Is(err, idExists)):
				t.Errorf("error %v, want a *HalfJoinedError for coordinator_5 wrapping the refusal", err)
			case !tc.halfJoined && verdict == StepFailed && err != idExists:
				t.Errorf("error %v, want the refusal as it is", err)
			}
		})
	}
}

// A new cluster's first election follows the registrations of its pass: one read suffices,
// no other writer's handover can be halfway through while members are still being registered.
// Any other MAIN is made on two reads a pause apart.
func TestAMainIsMadeOnTwoReadsUnlessThePassRegistered(t *testing.T) {
	set := SetInstanceToMain{Name: "instance_0"}
	for _, tc := range []struct {
		name string
		ran  []Command
		want stepReads
	}{
		{"nothing ran before", nil, readTableSettled},
		{"the pass registered the target", []Command{RegisterInstance{Name: "instance_0"}}, readTable},
		{"the pass registered another data instance", []Command{RegisterInstance{Name: "instance_1"}}, readTable},
		{"the pass added a coordinator only", []Command{AddCoordinator{ID: 3}}, readTableSettled},
	} {
		if got := preconditionReads(set, tc.ran); got != tc.want {
			t.Errorf("%s: preconditionReads = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := preconditionReads(ForceResetClusterState{}, []Command{RegisterInstance{Name: "instance_0"}}); got != readTableSettled {
		t.Errorf("FORCE RESET: preconditionReads = %v, want readTableSettled", got)
	}
}

func TestPrecondition(t *testing.T) {
	d := declared(3, 2, 3, 3)
	handover := Handover{From: "instance_2", To: "instance_0"}
	settled := rows(coords(3, 1), one(replica(0), replica(1), mainRow(2)))
	for _, tc := range []struct {
		name  string
		cmd   Command
		reads stepReads
		f     Fresh
		want  string
	}{
		{"ADD COORDINATOR reads nothing", AddCoordinator{ID: 2}, readNothing, Fresh{}, ""},
		{"a failed read proves nothing: the step runs", SetInstanceToMain{Name: "instance_0"}, readTableSettled,
			Fresh{InstancesErr: errors.New("unreachable")}, ""},
		{"SET MAIN while still none", SetInstanceToMain{Name: "instance_0"}, readTableSettled,
			Fresh{Instances: rows(coords(3, 1), one(replica(0), replica(1)))}, ""},
		{"SET MAIN after another writer elected one", SetInstanceToMain{Name: "instance_0"}, readTableSettled,
			Fresh{Instances: rows(coords(3, 1), one(replica(0), mainRow(1)))}, "instance_1 is MAIN already"},
		{"FORCE RESET after the coordinators failed over", ForceResetClusterState{}, readTableSettled,
			Fresh{Instances: rows(coords(3, 1), one(mainRow(0), replica(2)))}, "instance_0 is MAIN already"},
		{"UNREGISTER of a replica", UnregisterInstance{Name: "instance_2"}, readTable,
			Fresh{Instances: rows(coords(3, 1), one(mainRow(0), replica(2)))}, ""},
		{"UNREGISTER of an instance failed over to", UnregisterInstance{Name: "instance_2"}, readTable,
			Fresh{Instances: rows(coords(3, 1), one(replica(0), mainRow(2)))}, "instance_2 became MAIN"},
		{"UNREGISTER while another writer is between DEMOTE and SET", UnregisterInstance{Name: "instance_2"}, readTable,
			Fresh{Instances: rows(coords(3, 1), one(replica(0), replica(1), replica(2)))},
			"no instance is MAIN; instance_2 may hold the latest writes"},
		{"REMOVE of a follower", RemoveCoordinator{ID: 3}, readTable, Fresh{Instances: coords(3, 1)}, ""},
		{"REMOVE of a member elected meanwhile", RemoveCoordinator{ID: 3}, readTable, Fresh{Instances: coords(3, 3)},
			"coordinator_3 became leader"},
		{"the same handover is still due", handover, readTableAndCatchUp,
			Fresh{Instances: settled, Lag: lag(9, caughtUp(0, 1, 2))}, ""},
		{"the target fell behind since the plan", handover, readTableAndCatchUp,
			Fresh{Instances: settled, Lag: lag(9, with(caughtUp(1, 2), "instance_0", 3))},
			"the cluster changed since the handover was planned; planning again next pass"},
		{"the MAIN moved off the retiring instance", handover, readTableAndCatchUp,
			Fresh{Instances: rows(coords(3, 1), one(mainRow(0), replica(1), replica(2))), Lag: lag(9, caughtUp(0, 1, 2))},
			"the cluster changed since the handover was planned; planning again next pass"},
		{"no lag read, no proof", handover, readTableAndCatchUp,
			Fresh{Instances: settled, LagErr: &memgraph.Error{Kind: memgraph.KindUnreachable, Message: "connection refused"}},
			"SHOW REPLICATION LAG failed right before the handover: connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := preconditionReads(tc.cmd, nil); got != tc.reads {
				t.Errorf("preconditionReads = %v, want %v", got, tc.reads)
			}
			if got := Precondition(d, replicas(3, 3), nil, tc.cmd, reportedFresh(tc.f)); got != tc.want {
				t.Errorf("Precondition = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHandoverRestoresOnlyWhenNoMainWasSet(t *testing.T) {
	for kind, want := range map[memgraph.Kind]bool{
		memgraph.KindNoSuchInstance: true,  // the target vanished
		memgraph.KindRaftWrite:      true,  // nothing was committed
		memgraph.KindMainExists:     false, // a MAIN exists: never a second one
		memgraph.KindNoLeader:       false, // the leader is not ready: its reconciliation settles the MAIN
		memgraph.KindForwardFailed:  false, // the leadership moved
		memgraph.KindNotLeader:      false,
		memgraph.KindTimeout:        false, // outcome unknown: a restore could be a second MAIN
	} {
		if got := RestoreAfter(&memgraph.Error{Kind: kind}); got != want {
			t.Errorf("RestoreAfter(%v) = %v, want %v", kind, got, want)
		}
	}
}

func TestHandoverProof(t *testing.T) {
	h := Handover{From: "instance_2", To: "instance_0"}
	readFailed := &memgraph.Error{Kind: memgraph.KindUnreachable, Message: "connection reset"}
	got := map[string]string{
		"serving":           h.UnprovenByInstances(rows(coords(3, 1), one(mainRow(0), replica(2))), nil),
		"down":              h.UnprovenByInstances(rows(coords(3, 1), one(data(0, memgraph.HealthDown, memgraph.RoleUnknown))), nil),
		"still a replica":   h.UnprovenByInstances(rows(coords(3, 1), one(replica(0), mainRow(2))), nil),
		"gone":              h.UnprovenByInstances(coords(3, 1), nil),
		"rows unread":       h.UnprovenByInstances(nil, readFailed),
		"answers as MAIN":   h.UnprovenByLag(lag(4, caughtUp(0, 2)), nil),
		"no lag row for it": h.UnprovenByLag(lag(4, caughtUp(2)), nil),
		"lag unread":        h.UnprovenByLag(nil, readFailed),
	}
	want := map[string]string{
		"serving":           "",
		"down":              "instance_0 reports down/unknown, not up/main",
		"still a replica":   "instance_0 reports up/replica, not up/main",
		"gone":              "instance_0 is no longer listed",
		"rows unread":       "SHOW INSTANCES after the SET failed: connection reset",
		"answers as MAIN":   "",
		"no lag row for it": "instance_0 does not answer as MAIN (SHOW REPLICATION LAG has no row for it)",
		"lag unread":        "SHOW REPLICATION LAG after the SET failed: connection reset",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handover proof (-want +got):\n%s", diff)
	}
}

func TestCommandKinds(t *testing.T) {
	got := map[string]CommandKind{}
	for _, c := range []Command{AddCoordinator{ID: 1}, RegisterInstance{Name: "instance_0"}, SetInstanceToMain{Name: "instance_0"},
		Handover{From: "instance_1", To: "instance_0"}, UnregisterInstance{Name: "instance_1"}, RemoveCoordinator{ID: 5},
		ForceResetClusterState{}, YieldLeadership{}} {
		got[c.String()] = c.Kind()
	}
	// The metric label is the query's verb, as the hook has always counted it.
	want := map[string]CommandKind{}
	for query := range got {
		want[query] = verb(query)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kinds (-verb of the query +Kind):\n%s", diff)
	}
}

// verb is the first two words of a query, or "SET INSTANCE TO MAIN".
func verb(query string) CommandKind {
	words := strings.Fields(query)
	if words[0] == "SET" {
		return "SET INSTANCE TO MAIN"
	}
	return CommandKind(words[0] + " " + words[1])
}

func TestExplain(t *testing.T) {
	refusal := &memgraph.Error{Kind: memgraph.KindRaftWrite, Query: qMain(0), Message: "Writing to Raft log failed. Please retry the operation."}
	handover := &HandoverError{From: "instance_2", To: "instance_0", PromoteErr: refusal, RestoreTried: true}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"Memgraph's own message, without the query", refusal, "Writing to Raft log failed. Please retry the operation."},
		{"through any wrapping", fmt.Errorf("leader coordinator_1: %w", refusal), "Writing to Raft log failed. Please retry the operation."},
		{"a handover tells its whole story", fmt.Errorf("step: %w", handover),
			"handover of MAIN from instance_2 to instance_0: SET INSTANCE instance_0 TO MAIN failed: Writing to Raft log failed. " +
				"Please retry the operation.; instance_2 restored as MAIN, handover postponed"},
		{"a half-joined coordinator too", &HalfJoinedError{Coordinator: "coordinator_5", Err: refusal},
			"coordinator_5 is half-joined (a Raft member without a bolt_server): Writing to Raft log failed. Please retry the operation."},
		{"anything else as it reads", errors.New(" dial tcp: refused \n"), "dial tcp: refused"},
	} {
		if got := Explain(tc.err); got != tc.want {
			t.Errorf("%s: Explain = %q, want %q", tc.name, got, tc.want)
		}
	}
}

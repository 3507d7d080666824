package planner

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

func TestWrites(t *testing.T) {
	refused := &memgraph.Error{Kind: memgraph.KindNoSuchInstance, Message: "Couldn't set instance to main since instance doesn't exist!"}
	h := Handover{From: "instance_2", To: "instance_0"}
	for _, tc := range []struct {
		name string
		cmd  Command
		err  error
		want []string
	}{
		{"add", AddCoordinator{ID: 4}, nil, []string{"ADD coordinator_4"}},
		{"a refused add was still sent", AddCoordinator{ID: 4}, refused, []string{"ADD coordinator_4"}},
		{"register", RegisterInstance{Name: "instance_3"}, nil, []string{"REGISTER instance_3"}},
		{"promote", SetInstanceToMain{Name: "instance_0"}, nil, []string{"SET instance_0 TO MAIN"}},
		{"handover", h, nil, []string{"DEMOTE instance_2", "SET instance_0 TO MAIN"}},
		{"handover whose DEMOTE failed", h, errors.New("handover of MAIN from instance_2: demote: timeout"), []string{"DEMOTE instance_2"}},
		{"handover whose SET was refused, no restore", h, &HandoverError{From: "instance_2", To: "instance_0", PromoteErr: refused},
			[]string{"DEMOTE instance_2", "SET instance_0 TO MAIN"}},
		{"handover restored", h, &HandoverError{From: "instance_2", To: "instance_0", PromoteErr: refused, RestoreTried: true},
			[]string{"DEMOTE instance_2", "SET instance_0 TO MAIN", "SET instance_2 TO MAIN"}},
		{"handover not proven", h, &HandoverError{From: "instance_2", To: "instance_0", Unproven: "instance_0 reports down/main"},
			[]string{"DEMOTE instance_2", "SET instance_0 TO MAIN"}},
		{"unregister", UnregisterInstance{Name: "instance_2"}, nil, []string{"UNREGISTER instance_2"}},
		{"remove", RemoveCoordinator{ID: 5}, nil, []string{"REMOVE coordinator_5"}},
		{"force reset", ForceResetClusterState{}, nil, []string{"FORCE RESET CLUSTER STATE"}},
		{"yield", YieldLeadership{}, nil, []string{"YIELD LEADERSHIP"}},
	} {
		if diff := cmp.Diff(tc.want, Writes(tc.cmd, tc.err)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestLastOperation(t *testing.T) {
	retirement := []string{"DEMOTE instance_2", "SET instance_0 TO MAIN", "UNREGISTER instance_2"}
	refusal := &memgraph.Error{Kind: memgraph.KindUnknown, Message: "Couldn't unregister replica instance since coordinator is not a leader!"}
	for _, tc := range []struct {
		name string
		ex   Execution
		want *v1alpha1.Operation
	}{
		{"nothing written: the prior record stands", Execution{}, nil},
		{"every write succeeded", Execution{Ran: []string{"a", "b"}, Writes: retirement},
			&v1alpha1.Operation{Writes: "DEMOTE instance_2; SET instance_0 TO MAIN; UNREGISTER instance_2", Result: v1alpha1.OperationSucceeded}},
		{"a refused write: Memgraph's message", Execution{Ran: []string{"a"}, Writes: retirement,
			Stopped: &Stop{Query: "UNREGISTER INSTANCE instance_2", Verdict: StepFailed, Err: refusal}},
			&v1alpha1.Operation{Writes: "DEMOTE instance_2; SET instance_0 TO MAIN; UNREGISTER instance_2", Result: v1alpha1.OperationFailed,
				Message: "Couldn't unregister replica instance since coordinator is not a leader!"}},
		{"the leader moved", Execution{Writes: []string{"REMOVE coordinator_5"},
			Stopped: &Stop{Verdict: StepLeaderMoved, Err: &memgraph.Error{Kind: memgraph.KindNotLeader, Message: "not leader anymore"}}},
			&v1alpha1.Operation{Writes: "REMOVE coordinator_5", Result: v1alpha1.OperationInterrupted, Message: "not leader anymore"}},
		{"the budget ran out", Execution{Ran: []string{"a"}, Writes: []string{"REGISTER instance_0"}, BudgetExhausted: true},
			&v1alpha1.Operation{Writes: "REGISTER instance_0", Result: v1alpha1.OperationInterrupted,
				Message: "the sync budget ran out after 1 of 4 steps; the next sync continues"}},
	} {
		if diff := cmp.Diff(tc.want, LastOperation(tc.ex, 4)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// A pass that registers a hundred instances lists the first writes and how many more.
func TestLastOperationIsBounded(t *testing.T) {
	var writes []string
	for i := range 100 {
		writes = append(writes, Writes(RegisterInstance{Name: topology.DataInstanceName(i)}, nil)...)
	}
	got := LastOperation(Execution{Writes: writes}, 100).Writes
	if !strings.HasPrefix(got, "REGISTER instance_0; REGISTER instance_1; ") || !strings.HasSuffix(got, "REGISTER instance_11; and 88 more") {
		t.Errorf("writes %q", got)
	}
}

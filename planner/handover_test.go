package planner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// scriptedClient records the queries a command runs and refuses those listed in refuse with
// the given error; everything else succeeds. It also records whether each call's context was
// still live.
type scriptedClient struct {
	memgraph.Client // nil: any method a test does not expect panics
	refuse          map[string]error
	calls           []string
	cancelAfter     string             // cancel the pass's context once this query has run
	cancel          context.CancelFunc // the pass's cancel
	deadCtx         []string           // queries that ran on an ended context
}

func (s *scriptedClient) do(ctx context.Context, query string) error {
	s.calls = append(s.calls, query)
	if ctx.Err() != nil {
		s.deadCtx = append(s.deadCtx, query)
		return &memgraph.Error{Kind: memgraph.KindTimeout, Query: query, Message: "context ended", Err: ctx.Err()}
	}
	if query == s.cancelAfter && s.cancel != nil {
		defer s.cancel()
	}
	return s.refuse[query]
}

func (s *scriptedClient) DemoteInstance(ctx context.Context, name string) error {
	return s.do(ctx, memgraph.DemoteInstanceQuery(name))
}

func (s *scriptedClient) SetInstanceToMain(ctx context.Context, name string) error {
	return s.do(ctx, memgraph.SetInstanceToMainQuery(name))
}

func refusal(kind memgraph.Kind, query, message string) *memgraph.Error {
	return &memgraph.Error{Kind: kind, Query: query, Code: "Memgraph.ClientError.MemgraphError.MemgraphError", Message: message}
}

const notReplicating = "Couldn't set instance to main since the instance could not be promoted."

func TestHandoverRun(t *testing.T) {
	h := Handover{From: "instance_2", Candidates: []string{"instance_0", "instance_1"}}
	refused0 := refusal(memgraph.KindUnknown, qMain(0), notReplicating)
	refused1 := refusal(memgraph.KindUnknown, qMain(1), notReplicating)

	t.Run("first candidate accepted", func(t *testing.T) {
		c := &scriptedClient{}
		if err := h.Run(context.Background(), c); err != nil {
			t.Fatalf("Run: %v", err)
		}
		assertCalls(t, c, "DEMOTE INSTANCE instance_2", qMain(0))
	})

	t.Run("refused candidate falls through to the next", func(t *testing.T) {
		c := &scriptedClient{refuse: map[string]error{qMain(0): refused0}}
		if err := h.Run(context.Background(), c); err != nil {
			t.Fatalf("Run: %v", err)
		}
		assertCalls(t, c, "DEMOTE INSTANCE instance_2", qMain(0), qMain(1))
	})

	t.Run("all refused: old MAIN restored and the pass fails with Memgraph's error", func(t *testing.T) {
		c := &scriptedClient{refuse: map[string]error{qMain(0): refused0, qMain(1): refused1}}
		err := h.Run(context.Background(), c)
		assertCalls(t, c, "DEMOTE INSTANCE instance_2", qMain(0), qMain(1), qMain(2))
		var he *HandoverError
		if !errors.As(err, &he) || !he.Restored() {
			t.Fatalf("Run = %v, want a *HandoverError with the old MAIN restored", err)
		}
		if !errors.Is(err, refused1) {
			t.Errorf("error does not wrap the last refusal: %v", err)
		}
		for _, part := range []string{"instance_0: " + notReplicating, "instance_1: " + notReplicating, "instance_2 restored as MAIN"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("error %q does not say %q", err, part)
			}
		}
	})

	t.Run("restore refused too: the error says the cluster has no MAIN", func(t *testing.T) {
		restoreRefused := refusal(memgraph.KindRaftWrite, qMain(2), "Writing to Raft log failed. Please retry the operation.")
		c := &scriptedClient{refuse: map[string]error{qMain(0): refused0, qMain(1): refused1, qMain(2): restoreRefused}}
		err := h.Run(context.Background(), c)
		var he *HandoverError
		if !errors.As(err, &he) || he.Restored() {
			t.Fatalf("Run = %v, want a *HandoverError without restore", err)
		}
		if memgraph.KindOf(err) != memgraph.KindRaftWrite || !strings.Contains(err.Error(), "the cluster has no MAIN") {
			t.Errorf("error = %v (kind %v), want the restore failure to lead", err, memgraph.KindOf(err))
		}
	})

	t.Run("refused demote changes nothing else", func(t *testing.T) {
		demoteRefused := refusal(memgraph.KindAlreadyReplica, "DEMOTE INSTANCE instance_2", "Instance instance_2 is already a replica!")
		c := &scriptedClient{refuse: map[string]error{"DEMOTE INSTANCE instance_2": demoteRefused}}
		err := h.Run(context.Background(), c)
		assertCalls(t, c, "DEMOTE INSTANCE instance_2")
		if memgraph.KindOf(err) != memgraph.KindAlreadyReplica {
			t.Errorf("error = %v, want the demote refusal", err)
		}
	})

	t.Run("budget ends after the demote: no candidate tried, restore still runs", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := &scriptedClient{cancelAfter: "DEMOTE INSTANCE instance_2", cancel: cancel}
		err := h.Run(ctx, c)
		assertCalls(t, c, "DEMOTE INSTANCE instance_2", qMain(2))
		var he *HandoverError
		if !errors.As(err, &he) || !he.Restored() || !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want a restored *HandoverError caused by the context", err)
		}
		if len(c.deadCtx) != 0 {
			t.Errorf("queries ran on an ended context: %v", c.deadCtx)
		}
	})
}

func assertCalls(t *testing.T, c *scriptedClient, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, c.calls); diff != "" {
		t.Errorf("queries run (-want +got):\n%s", diff)
	}
}

func TestCommandsRunTheQueryTheyPrint(t *testing.T) {
	plan := Plan(declared(5, 3, 5, 4), Observed{
		Instances: rows(one(freshSelf(5)), one(replica(0), replica(1), replica(2), replica(3))),
		Leader:    "coordinator_5", Current: replicas(5, 4),
	})
	rec := &recordingClient{}
	for _, cmd := range plan.Commands {
		before := len(rec.calls)
		if err := cmd.Run(context.Background(), rec); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if got := rec.calls[before:]; len(got) != 1 || got[0] != cmd.String() {
			t.Errorf("%T printed %q but ran %q", cmd, cmd.String(), got)
		}
	}
	if len(plan.Commands) == 0 {
		t.Fatal("fixture produced no commands")
	}
}

// recordingClient renders every call with the memgraph package's own renderers.
type recordingClient struct {
	memgraph.Client
	calls []string
}

func (r *recordingClient) AddCoordinator(_ context.Context, id int, cfg memgraph.CoordinatorConfig) error {
	r.calls = append(r.calls, memgraph.AddCoordinatorQuery(id, cfg))
	return nil
}

func (r *recordingClient) RegisterInstance(_ context.Context, name string, cfg memgraph.InstanceConfig) error {
	r.calls = append(r.calls, memgraph.RegisterInstanceQuery(name, cfg))
	return nil
}

func (r *recordingClient) SetInstanceToMain(_ context.Context, name string) error {
	r.calls = append(r.calls, memgraph.SetInstanceToMainQuery(name))
	return nil
}

func (r *recordingClient) UnregisterInstance(_ context.Context, name string) error {
	r.calls = append(r.calls, memgraph.UnregisterInstanceQuery(name))
	return nil
}

func (r *recordingClient) RemoveCoordinator(_ context.Context, id int) error {
	r.calls = append(r.calls, memgraph.RemoveCoordinatorQuery(id))
	return nil
}

func (r *recordingClient) ForceResetClusterState(context.Context) error {
	r.calls = append(r.calls, memgraph.ForceResetClusterStateQuery)
	return nil
}

func (r *recordingClient) YieldLeadership(context.Context) error {
	r.calls = append(r.calls, memgraph.YieldLeadershipQuery)
	return nil
}

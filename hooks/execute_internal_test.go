package hooks

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// scriptedClient records the queries a command runs and refuses those listed in refuse with
// the given error; everything else succeeds, and the reads answer rows and lag. It also records
// whether each call's context was still live.
type scriptedClient struct {
	memgraph.Client // nil: any method a test does not expect panics
	refuse          map[string]error
	rows            []memgraph.Instance
	lag             []memgraph.InstanceLag
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

func (s *scriptedClient) AddCoordinator(ctx context.Context, id int, cfg memgraph.CoordinatorConfig) error {
	return s.do(ctx, memgraph.AddCoordinatorQuery(id, cfg))
}

func (s *scriptedClient) ShowInstances(ctx context.Context) ([]memgraph.Instance, error) {
	return s.rows, s.do(ctx, memgraph.ShowInstancesQuery)
}

func (s *scriptedClient) ShowReplicationLag(ctx context.Context) ([]memgraph.InstanceLag, error) {
	return s.lag, s.do(ctx, memgraph.ShowReplicationLagQuery)
}

func refusal(kind memgraph.Kind, query, message string) *memgraph.Error {
	return &memgraph.Error{Kind: kind, Query: query, Code: "Memgraph.ClientError.MemgraphError.MemgraphError", Message: message}
}

const (
	qDemote2 = "DEMOTE INSTANCE instance_2"
	qShow    = memgraph.ShowInstancesQuery
	qLag     = memgraph.ShowReplicationLagQuery
)

func TestHandoverSteps(t *testing.T) {
	h := planner.Handover{From: "instance_2", To: "instance_0"}
	// What the leader reports once instance_0 serves as MAIN.
	served := rows(coords(3, 1), one(mainRow(0), replica(1), replica(2)))
	servedLag := caughtUpLag(9, 0, 1, 2)
	noSuch := refusal(memgraph.KindNoSuchInstance, qMain(0), "No instance with such name!")
	raftFailed := refusal(memgraph.KindRaftWrite, qMain(0), "Writing to Raft log failed. Please retry the operation.")

	t.Run("accepted and serving", func(t *testing.T) {
		c := &scriptedClient{rows: served, lag: servedLag}
		if err := run(context.Background(), c, h); err != nil {
			t.Fatalf("handover: %v", err)
		}
		assertCalls(t, c, qDemote2, qMain(0), qShow, qLag)
	})

	t.Run("accepted but the new MAIN shows down: not done, nothing undone", func(t *testing.T) {
		c := &scriptedClient{rows: rows(coords(3, 1), one(data(0, memgraph.HealthDown, memgraph.RoleUnknown), replica(1), replica(2))), lag: servedLag}
		err := run(context.Background(), c, h)
		assertCalls(t, c, qDemote2, qMain(0), qShow)
		var he *planner.HandoverError
		if !errors.As(err, &he) || he.PromoteErr != nil || he.RestoreTried {
			t.Fatalf("handover = %v, want an unproven *HandoverError without restore", err)
		}
		for _, part := range []string{"instance_0 reports down/unknown", "the coordinators fail over"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("error %q does not say %q", err, part)
			}
		}
	})

	t.Run("accepted, reported up/main, but not answering as MAIN", func(t *testing.T) {
		c := &scriptedClient{rows: served} // SHOW REPLICATION LAG: no rows (the MAIN does not answer)
		err := run(context.Background(), c, h)
		assertCalls(t, c, qDemote2, qMain(0), qShow, qLag)
		var he *planner.HandoverError
		if !errors.As(err, &he) || !strings.Contains(he.Unproven, "does not answer as MAIN") {
			t.Fatalf("handover = %v, want unproven: not answering as MAIN", err)
		}
	})

	t.Run("candidate vanished: the old MAIN is restored", func(t *testing.T) {
		c := &scriptedClient{refuse: map[string]error{qMain(0): noSuch}}
		err := run(context.Background(), c, h)
		assertCalls(t, c, qDemote2, qMain(0), qMain(2))
		var he *planner.HandoverError
		if !errors.As(err, &he) || !he.Restored() || !errors.Is(err, noSuch) {
			t.Fatalf("handover = %v, want a restored *HandoverError wrapping the refusal", err)
		}
		for _, part := range []string{"No instance with such name!", "instance_2 restored as MAIN"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("error %q does not say %q", err, part)
			}
		}
	})

	t.Run("Raft write failed: restore tried, and its failure leads", func(t *testing.T) {
		restoreFailed := refusal(memgraph.KindRaftWrite, qMain(2), "Writing to Raft log failed. Please retry the operation.")
		c := &scriptedClient{refuse: map[string]error{qMain(0): raftFailed, qMain(2): restoreFailed}}
		err := run(context.Background(), c, h)
		assertCalls(t, c, qDemote2, qMain(0), qMain(2))
		var he *planner.HandoverError
		if !errors.As(err, &he) || he.Restored() || !errors.Is(err, restoreFailed) || !strings.Contains(err.Error(), "the cluster has no MAIN") {
			t.Fatalf("handover = %v, want the failed restore to lead", err)
		}
	})

	for _, tc := range []struct {
		name string
		err  error
	}{
		{"a MAIN exists: never fight it", refusal(memgraph.KindMainExists, qMain(0), "Couldn't set instance to main since there is already a main instance in cluster!")},
		{"the leader is not ready: its reconciliation settles the MAIN", refusal(memgraph.KindNoLeader, qMain(0), "Tried to forward the request to the current leader but the leader couldn't be found!")},
		{"leadership moved", refusal(memgraph.KindForwardFailed, qMain(0), "Request forwarded to the leader but leader failed with request processing! Check logs on the leader to find out what happened!")},
		{"outcome unknown: a restore could be a second MAIN", &memgraph.Error{Kind: memgraph.KindTimeout, Query: qMain(0), Message: "no reply"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &scriptedClient{refuse: map[string]error{qMain(0): tc.err}}
			err := run(context.Background(), c, h)
			assertCalls(t, c, qDemote2, qMain(0))
			var he *planner.HandoverError
			if !errors.As(err, &he) || he.RestoreTried || !errors.Is(err, tc.err) || !strings.Contains(err.Error(), "not restored") {
				t.Fatalf("handover = %v, want an unrestored *HandoverError wrapping the refusal", err)
			}
		})
	}

	t.Run("refused demote changes nothing else", func(t *testing.T) {
		demoteRefused := refusal(memgraph.KindAlreadyReplica, qDemote2, "Instance instance_2 is already a replica!")
		c := &scriptedClient{refuse: map[string]error{qDemote2: demoteRefused}}
		err := run(context.Background(), c, h)
		assertCalls(t, c, qDemote2)
		if memgraph.KindOf(err) != memgraph.KindAlreadyReplica {
			t.Errorf("error = %v, want the demote refusal", err)
		}
	})

	t.Run("budget ends after the demote: the handover still completes", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := &scriptedClient{cancelAfter: qDemote2, cancel: cancel, rows: served, lag: servedLag}
		if err := run(ctx, c, h); err != nil {
			t.Fatalf("handover: %v", err)
		}
		assertCalls(t, c, qDemote2, qMain(0), qShow, qLag)
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

func TestAddCoordinatorTellsRegisteredFromHalfJoined(t *testing.T) {
	add := planner.Decide(declared(5, 2, 5, 2), planner.Observe(rows(coords(4, 1), one(mainRow(0), replica(1))), nil, replicas(5, 2))).Commands[0]
	x := executor{}
	idExists := refusal(memgraph.KindIDExists, qAdd(5), "Couldn't add coordinator since instance with such id already exists!")

	c := &scriptedClient{refuse: map[string]error{qAdd(5): idExists}, rows: coords(5, 1)}
	x.client = c
	if verdict, err := x.attempt(context.Background(), add); verdict != planner.StepDone || err != nil {
		t.Errorf("id exists and the member is registered (a concurrent writer): %v, %v, want done", verdict, err)
	}
	assertCalls(t, c, qAdd(5), qShow)

	c = &scriptedClient{refuse: map[string]error{qAdd(5): idExists}, rows: rows(coords(4, 1), one(halfJoined(5)))}
	x.client = c
	verdict, err := x.attempt(context.Background(), add)
	var hj *planner.HalfJoinedError
	if verdict != planner.StepFailed || !errors.As(err, &hj) || hj.Coordinator != "coordinator_5" || !errors.Is(err, idExists) {
		t.Errorf("id exists and the member is half-joined: %v, want a *HalfJoinedError", err)
	}

	mgmtExists := refusal(memgraph.KindAlreadyExists, qAdd(5), "Couldn't add coordinator since instance with such management endpoint already exists!")
	c = &scriptedClient{refuse: map[string]error{qAdd(5): mgmtExists}}
	x.client = c
	if verdict, err := x.attempt(context.Background(), add); verdict != planner.StepFailed || !errors.Is(err, mgmtExists) {
		t.Errorf("another conflict: %v, want it as is", err)
	}
	assertCalls(t, c, qAdd(5))
}

func TestCommandsRunTheQueryTheyPrint(t *testing.T) {
	plan := planner.Decide(declared(5, 3, 5, 4), planner.Observe(
		rows(one(freshSelf(5)), one(replica(0), replica(1), replica(2), replica(3))), nil, replicas(5, 4)))
	rec := &recordingClient{}
	for _, cmd := range plan.Commands {
		before := len(rec.calls)
		if err := run(context.Background(), rec, cmd); err != nil {
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

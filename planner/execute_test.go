package planner

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// scriptedClient performs a pass's steps as a leader that refuses the queries listed in refuse
// with the given error; everything else succeeds, and the reads answer rows and lag. It records
// the queries in the order run, and those that ran once the pass's budget had run out, other
// than on the handover's grace.
type scriptedClient struct {
	refuse      map[string]error
	rows        []memgraph.Instance
	lag         []memgraph.InstanceLag
	calls       []string
	cancelAfter string   // the pass's budget runs out once this query has run
	expired     bool     // it has
	deadCtx     []string // queries that ran on an ended context
}

func (s *scriptedClient) perform(step Step) Result {
	var got Result
	var query string
	grace := false
	switch st := step.(type) {
	case Read:
		grace = st.Grace
		switch st.What {
		case ReadInstances:
			query, got.Rows = memgraph.ShowInstancesQuery, s.rows
		case ReadLag:
			query, got.Lag = memgraph.ShowReplicationLagQuery, s.lag
		}
	case Write:
		query, grace = st.Command.String(), st.Grace
	}
	s.calls = append(s.calls, query)
	if s.expired && !grace {
		s.deadCtx = append(s.deadCtx, query)
		got.Err = &memgraph.Error{Kind: memgraph.KindTimeout, Query: query, Message: "context ended"}
	} else {
		got.Err = s.refuse[query]
	}
	if query == s.cancelAfter {
		s.expired = true
	}
	got.Expired = s.expired
	return got
}

// attempt runs cmd's steps as a pass attempts it, against s: the verdict, and the error.
func (s *scriptedClient) attempt(cmd Command) (StepVerdict, error) {
	var record []Result
	for {
		p := &pass{record: record}
		f, verdict, err := p.attempt("leader:7687", cmd)
		if f != waiting {
			return verdict, err
		}
		record = append(record, s.perform(p.pending))
	}
}

// runSteps runs cmd's queries against s and returns the error they end with.
func runSteps(s *scriptedClient, cmd Command) error {
	_, err := s.attempt(cmd)
	return err
}

func refusedWith(kind memgraph.Kind, query, message string) *memgraph.Error {
	return &memgraph.Error{Kind: kind, Query: query, Code: "Memgraph.ClientError.MemgraphError.MemgraphError", Message: message}
}

const (
	qDemote2 = "DEMOTE INSTANCE instance_2"
	qShow    = memgraph.ShowInstancesQuery
	qLag     = memgraph.ShowReplicationLagQuery
)

// caughtUpLag is SHOW REPLICATION LAG with instances ns all caught up on database "memgraph".
func caughtUpLag(committed int64, ns ...int) []memgraph.InstanceLag {
	var out []memgraph.InstanceLag
	for _, n := range ns {
		out = append(out, memgraph.InstanceLag{Instance: topology.DataInstanceName(n),
			Databases: map[string]memgraph.DatabaseLag{"memgraph": {CommittedTxns: committed}}})
	}
	return out
}

func TestHandoverSteps(t *testing.T) {
	h := Handover{From: "instance_2", To: "instance_0"}
	// What the leader reports once instance_0 serves as MAIN.
	served := rows(coords(3, 1), one(mainRow(0), replica(1), replica(2)))
	servedLag := caughtUpLag(9, 0, 1, 2)
	noSuch := refusedWith(memgraph.KindNoSuchInstance, qMain(0), "No instance with such name!")
	raftFailed := refusedWith(memgraph.KindRaftWrite, qMain(0), "Writing to Raft log failed. Please retry the operation.")

	t.Run("accepted and serving", func(t *testing.T) {
		c := &scriptedClient{rows: served, lag: servedLag}
		if err := runSteps(c, h); err != nil {
			t.Fatalf("handover: %v", err)
		}
		assertCalls(t, c, qDemote2, qMain(0), qShow, qLag)
	})

	t.Run("accepted but the new MAIN shows down: not done, nothing undone", func(t *testing.T) {
		c := &scriptedClient{rows: rows(coords(3, 1), one(data(0, memgraph.HealthDown, memgraph.RoleUnknown), replica(1), replica(2))), lag: servedLag}
		err := runSteps(c, h)
		assertCalls(t, c, qDemote2, qMain(0), qShow)
		var he *HandoverError
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
		err := runSteps(c, h)
		assertCalls(t, c, qDemote2, qMain(0), qShow, qLag)
		var he *HandoverError
		if !errors.As(err, &he) || !strings.Contains(he.Unproven, "does not answer as MAIN") {
			t.Fatalf("handover = %v, want unproven: not answering as MAIN", err)
		}
	})

	t.Run("candidate vanished: the old MAIN is restored", func(t *testing.T) {
		c := &scriptedClient{refuse: map[string]error{qMain(0): noSuch}}
		err := runSteps(c, h)
		assertCalls(t, c, qDemote2, qMain(0), qMain(2))
		var he *HandoverError
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
		restoreFailed := refusedWith(memgraph.KindRaftWrite, qMain(2), "Writing to Raft log failed. Please retry the operation.")
		c := &scriptedClient{refuse: map[string]error{qMain(0): raftFailed, qMain(2): restoreFailed}}
		err := runSteps(c, h)
		assertCalls(t, c, qDemote2, qMain(0), qMain(2))
		var he *HandoverError
		if !errors.As(err, &he) || he.Restored() || !errors.Is(err, restoreFailed) || !strings.Contains(err.Error(), "the cluster has no MAIN") {
			t.Fatalf("handover = %v, want the failed restore to lead", err)
		}
	})

	for _, tc := range []struct {
		name string
		err  error
	}{
		{"a MAIN exists: never fight it", refusedWith(memgraph.KindMainExists, qMain(0), "Couldn't set instance to main since there is already a main instance in cluster!")},
		{"the leader is not ready: its reconciliation settles the MAIN", refusedWith(memgraph.KindNoLeader, qMain(0), "Tried to forward the request to the current leader but the leader couldn't be found!")},
		{"leadership moved", refusedWith(memgraph.KindForwardFailed, qMain(0), "Request forwarded to the leader but leader failed with request processing! Check logs on the leader to find out what happened!")},
		{"outcome unknown: a restore could be a second MAIN", &memgraph.Error{Kind: memgraph.KindTimeout, Query: qMain(0), Message: "no reply"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &scriptedClient{refuse: map[string]error{qMain(0): tc.err}}
			err := runSteps(c, h)
			assertCalls(t, c, qDemote2, qMain(0))
			var he *HandoverError
			if !errors.As(err, &he) || he.RestoreTried || !errors.Is(err, tc.err) || !strings.Contains(err.Error(), "not restored") {
				t.Fatalf("handover = %v, want an unrestored *HandoverError wrapping the refusal", err)
			}
		})
	}

	t.Run("refused demote changes nothing else", func(t *testing.T) {
		demoteRefused := refusedWith(memgraph.KindAlreadyReplica, qDemote2, "Instance instance_2 is already a replica!")
		c := &scriptedClient{refuse: map[string]error{qDemote2: demoteRefused}}
		err := runSteps(c, h)
		assertCalls(t, c, qDemote2)
		if memgraph.KindOf(err) != memgraph.KindAlreadyReplica {
			t.Errorf("error = %v, want the demote refusal", err)
		}
	})

	t.Run("budget ends after the demote: the handover still completes", func(t *testing.T) {
		c := &scriptedClient{cancelAfter: qDemote2, rows: served, lag: servedLag}
		if err := runSteps(c, h); err != nil {
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
	add := Decide(declared(5, 2, 5, 2), Observe(rows(coords(4, 1), one(mainRow(0), replica(1))), nil, replicas(5, 2))).Commands[0]
	idExists := refusedWith(memgraph.KindIDExists, qAdd(5), "Couldn't add coordinator since instance with such id already exists!")

	c := &scriptedClient{refuse: map[string]error{qAdd(5): idExists}, rows: coords(5, 1)}
	if verdict, err := c.attempt(add); verdict != StepDone || err != nil {
		t.Errorf("id exists and the member is registered (a concurrent writer): %v, %v, want done", verdict, err)
	}
	assertCalls(t, c, qAdd(5), qShow)

	c = &scriptedClient{refuse: map[string]error{qAdd(5): idExists}, rows: rows(coords(4, 1), one(halfJoined(5)))}
	verdict, err := c.attempt(add)
	var hj *HalfJoinedError
	if verdict != StepFailed || !errors.As(err, &hj) || hj.Coordinator != "coordinator_5" || !errors.Is(err, idExists) {
		t.Errorf("id exists and the member is half-joined: %v, want a *HalfJoinedError", err)
	}

	mgmtExists := refusedWith(memgraph.KindAlreadyExists, qAdd(5), "Couldn't add coordinator since instance with such management endpoint already exists!")
	c = &scriptedClient{refuse: map[string]error{qAdd(5): mgmtExists}}
	if verdict, err := c.attempt(add); verdict != StepFailed || !errors.Is(err, mgmtExists) {
		t.Errorf("another conflict: %v, want it as is", err)
	}
	assertCalls(t, c, qAdd(5))
}

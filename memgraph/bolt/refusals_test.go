package bolt_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

func asNeo4jError(err error, target **neo4j.Neo4jError) bool { return errors.As(err, target) }

// wantRefusal checks that err is an *Error of kind with Memgraph's message verbatim, naming the
// address and query, and that the simulator refused it in the expected Bolt phase.
func wantRefusal(t *testing.T, w *sim.World, err error, kind memgraph.Kind, message, phase string) {
	t.Helper()
	var e *memgraph.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a *memgraph.Error of kind %v", err, kind)
	}
	if e.Kind != kind || e.Message != message {
		t.Fatalf("got kind %v message %q\nwant kind %v message %q", e.Kind, e.Message, kind, message)
	}
	if e.Code == "" || e.Address == "" || e.Query == "" {
		t.Errorf("error lacks code, address or query: %+v", e)
	}
	qs := w.Queries()
	last := qs[len(qs)-1]
	if last.Text != e.Query || !last.Failed || last.Phase != phase {
		t.Errorf("simulator's last query = %+v, want %q refused at %s", last, e.Query, phase)
	}
}

// TestRefusals sends every refusal Memgraph 3.12 gives to the client's commands and checks
// the Kind and the verbatim message, in the phase Memgraph v3.12.0 PrepareCoordinatorQuery
// reports it (shape errors on RUN, outcomes on PULL).
func TestRefusals(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "r", 3, 3)
	pool := newPool(t, w)
	ctx := testContext(t)
	bootstrap(t, ctx, pool, "r", 3, 2) // data-2 is started but not registered
	leader, follower := pool.Client(coordAddr("r", 1)), pool.Client(coordAddr("r", 2))
	data := pool.Client(dataAddr("r", 0))    // the MAIN
	replica := pool.Client(dataAddr("r", 1)) // instance_2

	cases := []struct {
		name    string
		run     func() error
		kind    memgraph.Kind
		message string
		phase   string
	}{
		{"duplicate instance name", func() error {
			cfg := instanceConfig("r", 2)
			return leader.RegisterInstance(ctx, "instance_1", cfg)
		}, memgraph.KindNameExists, "Couldn't register replica instance since instance with such name already exists!", "PULL"},
		{"duplicate management server", func() error {
			cfg := instanceConfig("r", 2)
			cfg.ManagementServer = instanceConfig("r", 0).ManagementServer
			return leader.RegisterInstance(ctx, "instance_9", cfg)
		}, memgraph.KindAlreadyExists, "Couldn't register replica instance since instance with such management server already exists!", "PULL"},
		{"duplicate replication server", func() error {
			cfg := instanceConfig("r", 2)
			cfg.ReplicationServer = instanceConfig("r", 1).ReplicationServer
			return leader.RegisterInstance(ctx, "instance_9", cfg)
		}, memgraph.KindAlreadyExists, "Couldn't register replica instance since instance with such replication endpoint already exists!", "PULL"},
		{"duplicate coordinator id", func() error {
			return leader.AddCoordinator(ctx, 2, coordConfig("r", 2))
		}, memgraph.KindIDExists, "Couldn't add coordinator since instance with such id already exists!", "PULL"},
		{"coordinator never joins", func() error {
			return leader.AddCoordinator(ctx, 7, memgraph.CoordinatorConfig{BoltServer: "nowhere:7687", CoordinatorServer: "nowhere:12000", ManagementServer: "nowhere:10000"})
		}, memgraph.KindMembershipTimeout, "Request for adding coordinator 7 reached a timeout!", "PULL"},
		{"second main", func() error {
			return leader.SetInstanceToMain(ctx, "instance_2")
		}, memgraph.KindMainExists, "Couldn't set instance to main since there is already a main instance in cluster!", "PULL"},
		{"demote unknown instance", func() error {
			return leader.DemoteInstance(ctx, "instance_9")
		}, memgraph.KindNoSuchInstance, "No instance with such name!", "PULL"},
		{"demote a replica", func() error {
			return leader.DemoteInstance(ctx, "instance_2")
		}, memgraph.KindAlreadyReplica, "Instance instance_2 is already a replica!", "PULL"},
		{"unregister unknown", func() error {
			return leader.UnregisterInstance(ctx, "instance_9")
		}, memgraph.KindNoSuchInstance, "No instance with such name!", "PULL"},
		{"unregister alive main", func() error {
			return leader.UnregisterInstance(ctx, "instance_1")
		}, memgraph.KindAliveMainUnregister, "Alive main instance can't be unregistered! Shut it down to trigger failover and then unregister it!", "PULL"},
		{"remove the leader on the leader", func() error {
			return leader.RemoveCoordinator(ctx, 1)
		}, memgraph.KindLeaderRemoval, "Request for removing coordinator 1 failed because the current leader cannot be removed!", "PULL"},
		{"remove unknown coordinator", func() error {
			return leader.RemoveCoordinator(ctx, 7)
		}, memgraph.KindNoSuchInstance, "Couldn't remove coordinator instance because coordinator with id 7 doesn't exist!", "PULL"},
		{"remove the leader via a follower", func() error {
			return follower.RemoveCoordinator(ctx, 1)
		}, memgraph.KindForwardFailed, "Request forwarded to the leader but leader failed with request processing! Check logs on the leader to find out what happened!", "PULL"},
		{"second main via a follower", func() error {
			return follower.SetInstanceToMain(ctx, "instance_2")
		}, memgraph.KindForwardFailed, "Request forwarded to the leader but leader failed with request processing! Check logs on the leader to find out what happened!", "PULL"},
		{"update config of an unknown instance", func() error {
			return leader.UpdateInstanceConfig(ctx, "instance_9", "lb.example.com:7687")
		}, memgraph.KindNoSuchInstance, "Couldn't update config for the repl instance instance_9 because it doesn't exist!", "PULL"},
		{"update config of an unknown coordinator", func() error {
			return leader.UpdateCoordinatorConfig(ctx, 7, "lb.example.com:7687")
		}, memgraph.KindNoSuchInstance, "Couldn't update config for the coordinator 7 because it doesn't exist!", "PULL"},
		{"update config of an unknown instance via a follower", func() error {
			return follower.UpdateInstanceConfig(ctx, "instance_9", "lb.example.com:7687")
		}, memgraph.KindForwardFailed, "Request forwarded to the leader but leader failed with request processing! Check logs on the leader to find out what happened!", "PULL"},
		{"UPDATE CONFIG on a data instance", func() error {
			return data.UpdateInstanceConfig(ctx, "instance_1", "lb.example.com:7687")
		}, memgraph.KindNotCoordinator, "Only coordinator can update config!", "RUN"},
		{"yield on a follower", func() error {
			return follower.YieldLeadership(ctx)
		}, memgraph.KindNotLeader, "Only the current leader can yield the leadership!", "PULL"},
		{"SHOW INSTANCES on a data instance", func() error {
			_, err := data.ShowInstances(ctx)
			return err
		}, memgraph.KindNotCoordinator, "Only coordinator can run SHOW INSTANCES.", "RUN"},
		{"SHOW REPLICATION LAG on a data instance", func() error {
			_, err := data.ShowReplicationLag(ctx)
			return err
		}, memgraph.KindNotCoordinator, "Only coordinator can run SHOW REPLICATION LAG query.", "RUN"},
		{"REGISTER on a data instance", func() error {
			return data.RegisterInstance(ctx, "instance_9", instanceConfig("r", 2))
		}, memgraph.KindNotCoordinator, "Only coordinator can register coordinator server!", "RUN"},
		{"SET MAIN on a data instance", func() error {
			return data.SetInstanceToMain(ctx, "instance_9")
		}, memgraph.KindNotCoordinator, "Only coordinator can register coordinator server!", "RUN"},
		{"DEMOTE on a data instance", func() error {
			return data.DemoteInstance(ctx, "instance_1")
		}, memgraph.KindNotCoordinator, "Only coordinator can demote instance!", "RUN"},
		{"UNREGISTER on a data instance", func() error {
			return data.UnregisterInstance(ctx, "instance_1")
		}, memgraph.KindNotCoordinator, "Only coordinator can unregister instance!", "RUN"},
		{"ADD COORDINATOR on a data instance", func() error {
			return data.AddCoordinator(ctx, 4, coordConfig("r", 3))
		}, memgraph.KindNotCoordinator, "Only coordinator can add coordinator instance!", "RUN"},
		{"REMOVE COORDINATOR on a data instance", func() error {
			return data.RemoveCoordinator(ctx, 3)
		}, memgraph.KindNotCoordinator, "Only coordinator can remove coordinator instance!", "RUN"},
		{"YIELD on a data instance", func() error {
			return data.YieldLeadership(ctx)
		}, memgraph.KindNotCoordinator, "Only coordinator can run YIELD LEADERSHIP query.", "RUN"},
		{"SHOW REPLICAS on a replica", func() error {
			_, err := replica.ShowReplicas(ctx)
			return err
		}, memgraph.KindNotMain, "Show replicas query should only be run on the main instance.", "RUN"},
		{"SHOW REPLICAS on a coordinator", func() error {
			_, err := leader.ShowReplicas(ctx)
			return err
		}, memgraph.KindNotCoordinator, "Coordinator can run only coordinator queries!", "RUN"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantRefusal(t, w, tc.run(), tc.kind, tc.message, tc.phase)
		})
	}
	// A refused query leaves its connection usable: the next query on the pool works.
	if _, err := leader.ShowInstances(ctx); err != nil {
		t.Fatalf("after refusals: %v", err)
	}
}

func TestSelfAddWithWrongAddressIsRefused(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "s", 1, 0)
	pool := newPool(t, w)
	ctx := testContext(t)
	cfg := coordConfig("s", 1)
	cfg.ManagementServer = "elsewhere:10000"
	err := pool.Client(coordAddr("s", 1)).AddCoordinator(ctx, 1, cfg)
	wantRefusal(t, w, err, memgraph.KindBadConfig,
		"Request for adding coordinator 1 failed because the coordinator was started with different network configuration. Check logs for more details.", "PULL")
}

// TestQuorumLoss: with two of three coordinators dead the leader's writes fail to commit to
// Raft until its leadership expires, after which writes find no leader.
func TestQuorumLoss(t *testing.T) {
	w, clock := newManualWorld(t)
	startProcesses(t, w, "ql", 3, 2)
	pool := newPool(t, w)
	ctx := testContext(t)
	bootstrap(t, ctx, pool, "ql", 3, 1)
	for _, id := range []int{2, 3} {
		if err := w.Kill(coordSpec("ql", id).Host); err != nil {
			t.Fatal(err)
		}
	}
	c := pool.Client(coordAddr("ql", 1))
	err := c.RegisterInstance(ctx, instanceName(1), instanceConfig("ql", 1))
	wantRefusal(t, w, err, memgraph.KindRaftWrite, "Writing to Raft log failed. Please retry the operation.", "PULL")
	clock.Advance(sim.LeadershipExpiry)
	err = c.RegisterInstance(ctx, instanceName(1), instanceConfig("ql", 1))
	wantRefusal(t, w, err, memgraph.KindNoLeader, "Tried to forward the request to the current leader but the leader couldn't be found!", "PULL")

	// SHOW INSTANCES still answers, with the follower view.
	got, err := c.ShowInstances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range got {
		if row.Health != memgraph.HealthUnknown {
			t.Errorf("follower view row %+v, want health unknown", row)
		}
	}
}

// TestKilledCoordinatorIsUnreachable: a dead address is KindUnreachable, not a Memgraph error.
func TestKilledCoordinatorIsUnreachable(t *testing.T) {
	w := newWorld(t)
	startProcesses(t, w, "k", 2, 0)
	pool := newPool(t, w)
	ctx := testContext(t)
	c := pool.Client(coordAddr("k", 2))
	if _, err := c.ShowInstances(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Kill(coordSpec("k", 2).Host); err != nil {
		t.Fatal(err)
	}
	_, err := c.ShowInstances(ctx)
	if memgraph.KindOf(err) != memgraph.KindUnreachable {
		t.Fatalf("got %v (kind %v), want KindUnreachable", err, memgraph.KindOf(err))
	}
	// After a restart the same Client works again.
	if err := w.Restart(coordSpec("k", 2).Host); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ShowInstances(ctx); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

// TestForceResetRunsUnderItsOwnDeadline: FORCE RESET CLUSTER STATE returns at once when Raft has
// a MAIN, and while the leader cannot settle one it is cut off by ForceResetTimeout (KindTimeout:
// still in progress) long before the caller's own deadline; the leader keeps reconciling.
func TestForceResetRunsUnderItsOwnDeadline(t *testing.T) {
	w, clock := newManualWorld(t)
	startProcesses(t, w, "fr", 3, 2)
	pool := newPool(t, w, func(o *bolt.PoolOptions) { o.ForceResetTimeout = 200 * time.Millisecond })
	ctx := testContext(t)
	bootstrap(t, ctx, pool, "fr", 3, 2)
	c := pool.Client(coordAddr("fr", 1))
	if err := c.ForceResetClusterState(ctx); err != nil {
		t.Fatalf("FORCE RESET with a MAIN: %v", err)
	}

	if err := c.DemoteInstance(ctx, instanceName(0)); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := w.Kill(dataHost("fr", i)); err != nil {
			t.Fatal(err)
		}
	}
	err := c.ForceResetClusterState(ctx)
	var e *memgraph.Error
	if !errors.As(err, &e) || e.Kind != memgraph.KindTimeout || !strings.Contains(e.Message, "still reconciling") {
		t.Fatalf("FORCE RESET with nothing to promote: %v, want KindTimeout saying it is still reconciling", err)
	}
	if ctx.Err() != nil {
		t.Fatal("FORCE RESET waited for the caller's deadline instead of its own")
	}
	rows, err := c.ShowInstances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Role != memgraph.RoleLeader || rows[0].Health != memgraph.HealthUnknown {
		t.Fatalf("leader row while reconciling: %+v, want a not-ready leader", rows[0])
	}
	if err := w.Restart(dataHost("fr", 1)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if main := w.Raft().Clusters[0].Main; main != instanceName(1) {
		t.Fatalf("MAIN %q after the reconciliation's retry", main)
	}
}

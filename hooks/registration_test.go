package hooks_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// bootstrap takes a new cluster through its registering sync (register) and, when that sync moved
// the MAIN's PodDisruptionBudget, the one after it that the data budget follows in.
func (h *harness) bootstrap() {
	h.t.Helper()
	h.register()
	h.settleBudgets()
}

// register runs the two syncs of a new cluster: the first creates the StatefulSets and the pods
// come up, the second registers every member and elects a MAIN.
func (h *harness) register() {
	h.t.Helper()
	h.sync() // no children yet: the StatefulSets are created, pods come up
	if st, reason, _ := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonWorkloadsNotReady {
		h.t.Fatalf("first sync: Converged %s/%s, want False/WorkloadsNotReady", st, reason)
	}
	h.sync()
}

// settleBudgets syncs once more when the last sync moved the MAIN's PodDisruptionBudget: the data
// budget follows in the next sync (the two change one per sync), and only then is the cluster
// converged.
func (h *harness) settleBudgets() {
	h.t.Helper()
	if _, reason, _ := h.condition(v1alpha1.ConditionConverged); reason == v1alpha1.ReasonDisruptionBudgetMoving {
		h.sync()
	}
}

func (h *harness) assertConverged() {
	h.t.Helper()
	if st, reason, msg := h.condition(v1alpha1.ConditionConverged); st != "True" {
		h.t.Fatalf("Converged=%s %s: %s", st, reason, msg)
	}
	if st, reason, msg := h.condition(v1alpha1.ConditionReady); st != "True" {
		h.t.Fatalf("Ready=%s %s: %s", st, reason, msg)
	}
}

// showInstances reads the cluster through the first coordinator.
func (h *harness) showInstances() []memgraph.Instance {
	h.t.Helper()
	c := h.network().Coordinator(1)
	rows, err := h.pool.Client(c.BoltServer).ShowInstances(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return rows
}

func (h *harness) mains() []string {
	var mains []string
	for _, r := range h.showInstances() {
		if r.Role == memgraph.RoleMain {
			mains = append(mains, r.Name)
		}
	}
	return mains
}

func (h *harness) registered() []string {
	var names []string
	for _, r := range h.showInstances() {
		if !r.IsCoordinator() || r.BoltServer != "" {
			names = append(names, r.Name)
		}
	}
	return sortedCopy(names)
}

func TestBootstrapConvergesInOneSync(t *testing.T) {
	for _, tc := range []struct {
		name               string
		coordinators, data int
		want               []string
	}{
		{"3+2", 3, 2, []string{"coordinator_1", "coordinator_2", "coordinator_3", "instance_0", "instance_1"}},
		{"5+3", 5, 3, []string{"coordinator_1", "coordinator_2", "coordinator_3", "coordinator_4", "coordinator_5",
			"instance_0", "instance_1", "instance_2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.coordinators, tc.data)
			h.bootstrap()
			h.assertConverged()
			if diff := cmp.Diff(tc.want, h.registered()); diff != "" {
				t.Errorf("registered members (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"instance_0"}, h.mains()); diff != "" {
				t.Errorf("MAINs (-want +got):\n%s", diff)
			}
			if got := h.lastResp.Status["main"]; got != "instance_0" {
				t.Errorf("status.main = %v, want instance_0", got)
			}
			if got := h.lastResp.Status["leader"]; got != "coordinator_1" {
				t.Errorf("status.leader = %v, want coordinator_1", got)
			}
			if h.lastResp.ResyncAfterSeconds < 10 {
				t.Errorf("converged resyncAfterSeconds = %v, want tens of seconds", h.lastResp.ResyncAfterSeconds)
			}
			h.assertNoMisuse()
		})
	}
}

func TestConvergedSyncIssuesOneQuery(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.bootstrap()
	h.world.ResetLog()
	for i := 0; i < 3; i++ {
		h.sync()
		h.assertConverged()
	}
	var queries []string
	for _, q := range h.world.Queries() {
		queries = append(queries, q.Host+": "+q.Text)
	}
	want := []string{}
	for i := 0; i < 3; i++ {
		want = append(want, h.network().Coordinator(1).Host+": SHOW INSTANCES")
	}
	if diff := cmp.Diff(want, queries); diff != "" {
		t.Errorf("queries of three converged syncs (-want +got):\n%s", diff)
	}
}

func TestLostRegistrationsAreReissuedWithoutSecondMain(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.bootstrap()
	h.assertConverged()
	// A human (or a pod on a fresh volume) loses two registrations.
	leader := h.pool.Client(h.network().Coordinator(1).BoltServer)
	ctx := context.Background()
	h.must(leader.UnregisterInstance(ctx, "instance_2"))
	h.must(leader.RemoveCoordinator(ctx, 3))
	h.sync()
	h.assertConverged()
	if diff := cmp.Diff([]string{"coordinator_1", "coordinator_2", "coordinator_3", "instance_0", "instance_1", "instance_2"}, h.registered()); diff != "" {
		t.Errorf("registered after re-registration (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"instance_0"}, h.mains()); diff != "" {
		t.Errorf("MAINs (-want +got):\n%s", diff)
	}
	h.assertNoMisuse()
}

func TestWipedDataInstanceIsReregistered(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.bootstrap()
	h.must(h.pool.Client(h.network().Coordinator(1).BoltServer).UnregisterInstance(context.Background(), "instance_1"))
	h.world.Wipe(h.network().DataInstance(1).Host)
	h.sync()
	h.assertConverged()
	if diff := cmp.Diff([]string{"instance_0"}, h.mains()); diff != "" {
		t.Errorf("MAINs (-want +got):\n%s", diff)
	}
	h.assertNoMisuse()
}

func TestUnreachableAndLeaderlessClustersIssueNothing(t *testing.T) {
	t.Run("no coordinator answers", func(t *testing.T) {
		h := newHarness(t, 3, 2)
		h.sync()
		for c := 1; c <= 3; c++ {
			h.world.Kill(h.network().Coordinator(c).Host)
		}
		h.sync()
		for _, typ := range []v1alpha1.ConditionType{v1alpha1.ConditionReady, v1alpha1.ConditionConverged} {
			if st, reason, _ := h.condition(typ); st != "False" || reason != v1alpha1.ReasonCoordinatorUnreachable {
				t.Errorf("%s = %s/%s, want False/CoordinatorUnreachable", typ, st, reason)
			}
		}
		if c, d := h.replicas(); c != 3 || d != 2 {
			t.Errorf("replicas %d/%d, want the declared 3/2 returned regardless", c, d)
		}
		assertOnlyReads(t, h.world.Queries())
	})
	t.Run("coordinators answer but none leads", func(t *testing.T) {
		h := newHarness(t, 3, 2)
		h.bootstrap()
		h.world.Kill(h.network().Coordinator(1).Host)
		h.world.Kill(h.network().Coordinator(2).Host)
		h.world.ResetLog()
		h.sync()
		if st, reason, _ := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonNoCoordinatorLeader {
			t.Errorf("Converged = %s/%s, want False/NoCoordinatorLeader", st, reason)
		}
		assertOnlyReads(t, h.world.Queries())
		h.assertNoMisuse()
	})
}

func assertOnlyReads(t *testing.T, queries []sim.Query) {
	t.Helper()
	for _, q := range queries {
		if !strings.HasPrefix(q.Text, "SHOW ") {
			t.Errorf("issued %q on %s, want reads only", q.Text, q.Host)
		}
	}
}

func TestSlowLeaderMakesPartialProgressThenFinishes(t *testing.T) {
	h := newHarness(t, 3, 2, withBudget(900*time.Millisecond))
	h.sync()
	h.world.SetLatency(h.network().Coordinator(1).Host, 200*time.Millisecond)
	h.sync()
	if st, reason, _ := h.condition(v1alpha1.ConditionConverged); st != "False" || reason != v1alpha1.ReasonRegistrationInProgress {
		t.Fatalf("slow pass: Converged %s/%s, want False/RegistrationInProgress", st, reason)
	}
	if h.lastResp.ResyncAfterSeconds > 2 {
		t.Errorf("resyncAfterSeconds = %v after an exhausted budget, want a quick resync", h.lastResp.ResyncAfterSeconds)
	}
	partial := len(h.registered())
	if partial == 0 || partial == 5 {
		t.Errorf("registered %d of 5 members in the slow pass, want partial progress", partial)
	}
	h.world.SetLatency(h.network().Coordinator(1).Host, 0)
	h.sync()
	h.settleBudgets()
	h.assertConverged()
	h.assertNoMisuse()
}

// Two syncs of one cluster arriving at one hook process at once are serialised: the second
// finds the first one's work done, and Memgraph is never asked anything it refuses.
func TestConcurrentSyncsInOneHookProcess(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.sync()
	req := h.request()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.postTo(h.handler, "/sync", req)
		}()
	}
	wg.Wait()
	h.sync()
	h.settleBudgets()
	h.assertConverged()
	if diff := cmp.Diff([]string{"instance_0"}, h.mains()); diff != "" {
		t.Errorf("MAINs (-want +got):\n%s", diff)
	}
	h.assertNoMisuse()
}

// Two hook replicas racing on one new cluster (Metacontroller retrying on the other replica
// while the first still works) leave it correct: every step is read-before-write, the
// promotion re-reads the leader right before it runs, and a step the other replica completed
// first counts as done. The one refusal the race can still provoke is a promotion of the very
// instance the other replica has just promoted, which Memgraph refuses and nothing else
// follows from; anything else is a misuse.
func TestConcurrentSyncsFromTwoHookReplicasConverge(t *testing.T) {
	for round := 0; round < 5; round++ {
		h := newHarness(t, 3, 3)
		h.sync()
		other := hooks.NewHandler(hooks.Config{
			Connector:  bolt.NewPool(bolt.PoolOptions{Resolver: h.world}),
			SyncBudget: 5 * time.Second,
		})
		req := h.request()
		var wg sync.WaitGroup
		for _, handler := range []httpHandler{h.handler, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h.postTo(handler, "/sync", req)
			}()
		}
		wg.Wait()
		h.sync()
		h.settleBudgets()
		h.assertConverged()
		if diff := cmp.Diff([]string{"instance_0"}, h.mains()); diff != "" {
			t.Errorf("MAINs (-want +got):\n%s", diff)
		}
		for _, m := range h.world.Misuses() {
			if m.Kind != sim.MisuseSecondMain || m.Query != "SET INSTANCE instance_0 TO MAIN" {
				t.Errorf("misuse beyond a duplicate promotion of the elected MAIN: %+v", m)
			}
		}
	}
}

func TestDryRunPlansButExecutesNothing(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.sync()
	h.world.ResetLog()
	resp := h.dryRun()
	n := h.network()
	want := []string{
		memgraph.AddCoordinatorQuery(1, memgraph.CoordinatorConfig{BoltServer: n.Coordinator(1).BoltServer, CoordinatorServer: n.Coordinator(1).CoordinatorServer, ManagementServer: n.Coordinator(1).ManagementServer}),
	}
	if len(resp.Plan) != 6 || resp.Plan[0] != want[0] {
		t.Errorf("dry-run plan = %q, want 6 queries starting with %q", resp.Plan, want[0])
	}
	assertOnlyReads(t, h.world.Queries())
}

// A member registered by hand with another bolt_server gets its declared one back in place
// (UPDATE CONFIG): nothing is unregistered, and the MAIN stays where it is.
func TestBoltServerRegisteredElsewhereIsUpdatedInPlace(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.bootstrap()
	n := h.network()
	leader := h.pool.Client(n.Coordinator(1).BoltServer)
	ctx := context.Background()
	h.must(leader.UnregisterInstance(ctx, "instance_1"))
	d := n.DataInstance(1)
	h.must(leader.RegisterInstance(ctx, "instance_1", memgraph.InstanceConfig{
		BoltServer: d.Host + ":7688", ManagementServer: d.ManagementServer, ReplicationServer: d.ReplicationServer}))
	h.world.ResetLog()
	h.sync()
	h.assertConverged()
	var writes []string
	for _, q := range h.world.Queries() {
		if !strings.HasPrefix(q.Text, "SHOW ") {
			writes = append(writes, q.Text)
		}
	}
	if diff := cmp.Diff([]string{memgraph.UpdateInstanceConfigQuery("instance_1", d.BoltServer)}, writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	for _, r := range h.showInstances() {
		if r.Name == "instance_1" && r.BoltServer != d.BoltServer {
			t.Errorf("instance_1 bolt_server %q, want %q", r.BoltServer, d.BoltServer)
		}
	}
	if diff := cmp.Diff([]string{"instance_0"}, h.mains()); diff != "" {
		t.Errorf("MAINs (-want +got):\n%s", diff)
	}
}

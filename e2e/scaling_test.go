//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// create makes a MemgraphCluster with spec YAML and registers its deletion.
func (s *scenario) create(name, spec string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := mgcClient(s.ns).Create(ctx, mgcObject(s.t, s.ns, name, spec), metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create MemgraphCluster %s: %v", name, err)
	}
}

// patchSpec merges fields into the spec, as `kubectl patch --type=merge` would.
func (s *scenario) patchSpec(name, patch string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"spec":%s}`, patch)
	if _, err := mgcClient(s.ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("patch %s with %s: %v", name, body, err)
	}
}

func (s *scenario) network(name string) topology.Network {
	return topology.Network{
		Cluster: name, Namespace: s.ns, ClusterDomain: v1alpha1.DefaultClusterDomain,
		Ports: topology.Ports{
			Bolt: v1alpha1.DefaultBoltPort, Management: v1alpha1.DefaultManagementPort,
			Replication: v1alpha1.DefaultReplicationPort, Coordinator: v1alpha1.DefaultCoordinatorPort,
		},
	}
}

// stsReplicas returns the StatefulSet's spec.replicas.
func (s *scenario) stsReplicas(name string) int64 {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sts, err := testEnv.Dynamic.Resource(stsGVR).Namespace(s.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	n, _, _ := unstructured.NestedInt64(sts.Object, "spec", "replicas")
	return n
}

// asOperator runs f with every sync held, as a human acting between two syncs.
func (s *scenario) asOperator(f func(ctx context.Context) error) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s.mc.Pause()
	defer s.mc.Resume()
	if err := f(ctx); err != nil {
		s.t.Fatalf("operator action: %v", err)
	}
}

// waitPodGone waits until the simulated instance at host has stopped because its Pod went, so
// that the retirement guard has actually been exercised.
func (s *scenario) waitPodGone(host string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := eventually(ctx, 100*time.Millisecond, func() error {
		if s.pods.Running(host) {
			return fmt.Errorf("%s still runs", host)
		}
		return nil
	})
	if err != nil {
		s.t.Errorf("the retired member's Pod did not go: %v", err)
	}
}

// goneGuard records members whose Pod went while they were still registered.
type goneGuard struct {
	mu         sync.Mutex
	violations []string
}

func (s *scenario) guardRetirement() *goneGuard {
	g := &goneGuard{}
	s.pods.OnGone(func(host string) {
		for _, c := range s.world.Raft().Clusters {
			if c.Leader == 0 {
				continue
			}
			for _, m := range c.Members {
				if m.Host == host || strings.HasPrefix(m.BoltServer, host+":") {
					g.add(fmt.Sprintf("coordinator_%d's pod went while it was a Raft member (leader %d)", m.ID, c.Leader))
				}
			}
			for _, d := range c.Data {
				if strings.HasPrefix(d.BoltServer, host+":") {
					g.add(fmt.Sprintf("%s's pod went while it was registered (role %s)", d.Name, d.Role))
				}
			}
		}
	})
	return g
}

func (g *goneGuard) add(v string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.violations = append(g.violations, v)
}

func (g *goneGuard) check(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, v := range g.violations {
		t.Error(v)
	}
}

func TestScaling(t *testing.T) {
	s := startScenario(t, "scaling")
	const name = "scale"
	net := s.network(name)
	s.create(name, "{}")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 2)

	t.Log("scale-up 3/2 -> 5/3 in one edit")
	s.patchSpec(name, `{"coordinators":5,"dataInstances":3}`)
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 5, 3)
	s.assertNoMisuse()
	if t.Failed() {
		return
	}
	guard := s.guardRetirement()

	t.Log("data 3 -> 2 with MAIN parked on the retiring instance_2")
	s.parkMain(name, "instance_2")
	s.patchSpec(name, `{"dataInstances":2}`)
	mgc := s.waitConverged(name, convergeTimeout)
	s.declaredMembers(mgc, 5, 2)
	if got := s.stsReplicas(topology.DataSetName(name)); got != 2 {
		t.Errorf("data StatefulSet replicas %d, want 2", got)
	}
	s.waitPodGone(net.DataInstance(2).Host)
	guard.check(t)
	s.assertNoMisuse()
	if t.Failed() {
		return
	}

	t.Log("coordinators 5 -> 3 with the leader on the retiring coordinator_5")
	s.asOperator(func(context.Context) error { return s.world.ForceLeader(5) })
	s.patchSpec(name, `{"coordinators":3}`)
	mgc = s.waitConverged(name, convergeTimeout)
	s.declaredMembers(mgc, 3, 2)
	if leader := s.raft().Leader; leader < 1 || leader > 3 {
		t.Errorf("leader is coordinator_%d, want one of the survivors 1..3", leader)
	}
	if got := s.stsReplicas(topology.CoordinatorSetName(name)); got != 3 {
		t.Errorf("coordinator StatefulSet replicas %d, want 3", got)
	}
	s.waitPodGone(net.Coordinator(4).Host)
	s.waitPodGone(net.Coordinator(5).Host)
	guard.check(t)
	s.assertNoMisuse()
	if t.Failed() {
		return
	}

	t.Log("back to 5/3 on the retained volumes, then both roles shrink in one edit with MAIN and leader retiring")
	s.patchSpec(name, `{"coordinators":5,"dataInstances":3}`)
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 5, 3)
	s.parkMain(name, "instance_2")
	s.asOperator(func(context.Context) error { return s.world.ForceLeader(4) })
	s.patchSpec(name, `{"coordinators":3,"dataInstances":2}`)
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 2)
	s.waitPodGone(net.DataInstance(2).Host)
	s.waitPodGone(net.Coordinator(4).Host)
	s.waitPodGone(net.Coordinator(5).Host)
	guard.check(t)
	s.assertNoMisuse()
	if !t.Failed() {
		s.assertNoChurn(2)
	}
}

// parkMain moves MAIN onto instance as a human operator would (DEMOTE, then SET TO MAIN on the
// leader), with syncs held so the hook cannot interleave.
func (s *scenario) parkMain(name, instance string) {
	s.t.Helper()
	net := s.network(name)
	s.asOperator(func(ctx context.Context) error {
		leaderID, ok := s.world.Leader()
		if !ok {
			return fmt.Errorf("no leader")
		}
		leader := s.pool.Client(net.Coordinator(leaderID).BoltServer)
		main := s.raft().Main
		if main == instance {
			return nil
		}
		if err := leader.DemoteInstance(ctx, main); err != nil {
			return fmt.Errorf("demote %s: %w", main, err)
		}
		if err := leader.SetInstanceToMain(ctx, instance); err != nil {
			return fmt.Errorf("promote %s: %w", instance, err)
		}
		return nil
	})
	if got := s.raft().Main; got != instance {
		s.t.Fatalf("MAIN is %q after parking it on %s", got, instance)
	}
}

func TestLostRegistrationsAreReissuedOnResync(t *testing.T) {
	s := startScenario(t, "drift")
	const name = "drift"
	net := s.network(name)
	s.create(name, "{}")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 2)
	// A human unregisters a replica and removes a follower: nothing in Kubernetes changes, so
	// only a resync (resyncAfterSeconds or resyncPeriodSeconds) can bring them back.
	s.asOperator(func(ctx context.Context) error {
		leaderID, ok := s.world.Leader()
		if !ok {
			return fmt.Errorf("no leader")
		}
		leader := s.pool.Client(net.Coordinator(leaderID).BoltServer)
		main := s.raft().Main
		replica := "instance_0"
		if main == replica {
			replica = "instance_1"
		}
		if err := leader.UnregisterInstance(ctx, replica); err != nil {
			return err
		}
		follower := 1
		for follower == leaderID {
			follower++
		}
		return leader.RemoveCoordinator(ctx, follower)
	})
	mainBefore := s.raft().Main
	ctx, cancel := context.WithTimeout(context.Background(), convergeTimeout)
	defer cancel()
	err := eventually(ctx, 200*time.Millisecond, func() error {
		g := s.raft()
		if len(g.Members) != 3 || len(g.Data) != 2 {
			return fmt.Errorf("%d coordinators and %d data instances registered", len(g.Members), len(g.Data))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("lost registrations were not re-issued: %v", err)
	}
	mgc := s.waitConverged(name, convergeTimeout)
	s.declaredMembers(mgc, 3, 2)
	if got := s.raft().Main; got != mainBefore {
		t.Errorf("MAIN moved from %s to %s: re-registration must not touch an existing MAIN", mainBefore, got)
	}
	s.assertNoMisuse()
}

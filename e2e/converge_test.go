//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const convergeTimeout = 2 * time.Minute

// declaredMembers checks the simulator's Raft state against the declared topology: exactly the
// declared coordinators (added, with the declared addresses), exactly the declared data instances
// registered, and one MAIN, which status.main names.
func (s *scenario) declaredMembers(mgc *unstructured.Unstructured, coordinators, data int) {
	s.t.Helper()
	network := topology.Network{
		Cluster: mgc.GetName(), Namespace: s.ns, ClusterDomain: v1alpha1.DefaultClusterDomain,
		Ports: topology.Ports{
			Bolt: v1alpha1.DefaultBoltPort, Management: v1alpha1.DefaultManagementPort,
			Replication: v1alpha1.DefaultReplicationPort, Coordinator: v1alpha1.DefaultCoordinatorPort,
		},
	}
	group := s.raft()
	type member struct {
		ID                int
		Bolt, Coord, Mgmt string
	}
	var gotMembers, wantMembers []member
	for _, m := range group.Members {
		if !m.Added {
			s.t.Errorf("coordinator_%d is in the Raft configuration without ADD COORDINATOR", m.ID)
		}
		gotMembers = append(gotMembers, member{m.ID, m.BoltServer, m.CoordinatorServer, m.ManagementServer})
	}
	// Raft keeps configuration order; a re-added member goes last, so compare by id.
	sort.Slice(gotMembers, func(i, j int) bool { return gotMembers[i].ID < gotMembers[j].ID })
	for id := 1; id <= coordinators; id++ {
		c := network.Coordinator(id)
		wantMembers = append(wantMembers, member{id, c.BoltServer, c.CoordinatorServer, c.ManagementServer})
	}
	if diff := cmp.Diff(wantMembers, gotMembers); diff != "" {
		s.t.Errorf("Raft members (-declared +observed):\n%s", diff)
	}
	type dataMember struct{ Name, Bolt, Mgmt, Repl string }
	var gotData, wantData []dataMember
	var mains []string
	for _, d := range group.Data {
		gotData = append(gotData, dataMember{d.Name, d.BoltServer, d.ManagementServer, d.ReplicationServer})
		if d.Role == "main" {
			mains = append(mains, d.Name)
		}
	}
	sort.Slice(gotData, func(i, j int) bool { return gotData[i].Name < gotData[j].Name })
	for o := 0; o < data; o++ {
		d := network.DataInstance(o)
		wantData = append(wantData, dataMember{d.Name, d.BoltServer, d.ManagementServer, d.ReplicationServer})
	}
	if diff := cmp.Diff(wantData, gotData); diff != "" {
		s.t.Errorf("registered data instances (-declared +observed):\n%s", diff)
	}
	if len(mains) != 1 {
		s.t.Errorf("want exactly one MAIN, got %v", mains)
	} else if main, _, _ := unstructured.NestedString(mgc.Object, "status", "main"); main != mains[0] {
		s.t.Errorf("status.main = %q, the coordinators' MAIN is %q", main, mains[0])
	}
	if group.Main == "" || len(mains) == 1 && group.Main != mains[0] {
		s.t.Errorf("Raft MAIN %q, data roles say %v", group.Main, mains)
	}
}

// childVersions maps each StatefulSet and Service of the namespace to its resourceVersion.
func childVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[string]string{}
	for _, gvr := range []schema.GroupVersionResource{stsGVR, svcGVR} {
		list, err := testEnv.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			out[gvr.Resource+"/"+item.GetName()] = item.GetResourceVersion()
		}
	}
	return out
}

// waitSyncs waits until n more syncs than before have completed.
func (s *scenario) waitSyncs(before, n int, timeout time.Duration) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := eventually(ctx, 50*time.Millisecond, func() error {
		if got := s.mc.Stats().Snapshot().SyncsCompleted; got < before+n {
			return fmt.Errorf("%d of %d syncs completed", got-before, n)
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// assertNoChurn resyncs a converged cluster several times and checks that no child was
// written and no child's resourceVersion moved.
func (s *scenario) assertNoChurn(resyncs int) {
	s.t.Helper()
	before := childVersions(s.t, s.ns)
	since := time.Now()
	s.world.ResetLog()
	s.resyncs(resyncs)
	snap := s.mc.Stats().Snapshot()
	if writes := snap.ChildWrites(since); len(writes) > 0 {
		for _, w := range writes {
			s.t.Errorf("child write on a converged cluster: %s", w)
		}
	}
	if diff := cmp.Diff(before, childVersions(s.t, s.ns)); diff != "" {
		s.t.Errorf("children's resourceVersions moved across resyncs (-before +after):\n%s", diff)
	}
	if n := snap.CountSince("status", since); n > 0 {
		s.t.Errorf("%d status writes on a converged cluster: status is not deterministic", n)
	}
	if f := snap.HookFailures(since); len(f) > 0 {
		s.t.Errorf("hook calls failed on a converged cluster: %+v", f)
	}
	// A converged sync only reads: one SHOW INSTANCES on the leader.
	queries := s.world.Queries()
	if len(queries) < resyncs {
		s.t.Errorf("%d Bolt queries across %d resyncs: the hook did not observe the coordinators", len(queries), resyncs)
	}
	for _, q := range queries {
		if q.Text != "SHOW INSTANCES" {
			s.t.Errorf("a converged sync sent %q to %s", q.Text, q.Host)
		}
	}
	s.t.Logf("no churn: %d syncs, %d Bolt queries, 0 child writes", snap.SyncsCompleted, len(queries))
}

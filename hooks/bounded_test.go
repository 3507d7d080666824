package hooks_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A hook that served many clusters holds nothing for them once they are gone: the per-cluster
// lock map is empty as soon as no pass runs (memgraph_hooks_clusters_in_flight), and the Bolt
// pool closes the connections to coordinators nobody asks for any more.
func TestStateShrinksBackAfterClustersAreDeleted(t *testing.T) {
	const clusters = 12
	const idle = 200 * time.Millisecond
	world := sim.NewWorld()
	t.Cleanup(world.Close)
	pool := bolt.NewPool(bolt.PoolOptions{Resolver: world, IdleTimeout: idle})
	t.Cleanup(func() { _ = pool.Close() })
	reg := prometheus.NewRegistry()
	handler := hooks.NewHandler(hooks.Config{Connector: pool, Registerer: reg, SyncBudget: 5 * time.Second})

	var hosts []string
	var rest []func(parent, coordinators, data, pods map[string]any)
	for i := range clusters {
		hosts = append(hosts, startFleetCluster(t, world, fleetNamespace(i))...)
		rest = append(rest, atRest(t, fleetNamespace(i)))
	}
	// Every cluster is synced from several goroutines at once, as Metacontroller's workers and a
	// burst of events would: passes of one cluster queue on its lock, the others run.
	var wg sync.WaitGroup
	for i := range clusters {
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					if rec := postSync(handler, "", clusterRequestIn(fleetNamespace(i), rest[i])); rec.Code != http.StatusOK {
						t.Errorf("%s: %d %s", fleetNamespace(i), rec.Code, rec.Body)
					}
				}
			}()
		}
	}
	wg.Wait()
	for i := range clusters {
		// Metacontroller's next request carries the MAIN's budget the passes returned.
		req := clusterRequestIn(fleetNamespace(i), rest[i])
		rec := postSync(handler, "", observingBudgets(t, req, decodeSync(t, postSync(handler, "", req).Body.Bytes())))
		if st, reason := convergedOf(decodeSync(t, rec.Body.Bytes())); st != "True" {
			t.Errorf("%s: Converged=%s %s", fleetNamespace(i), st, reason)
		}
	}
	if m := world.Misuses(); len(m) > 0 {
		t.Fatalf("concurrent passes misused Memgraph: %+v", m)
	}
	if n := metricValue(t, reg, "memgraph_hooks_clusters_in_flight", nil); n != 0 {
		t.Errorf("%v clusters in the lock map with no pass running, want 0", n)
	}
	// Drivers idle for longer than idle are evicted even while other clusters are synced (on a
	// loaded machine the passes above take longer than that), so what shows the pool grew with
	// the clusters is how many it opened.
	if n := pool.Stats().Opened; n < clusters {
		t.Fatalf("the pool opened %d drivers while syncing %d clusters", n, clusters)
	}

	// The clusters are deleted: their pods go and nobody syncs them any more.
	for _, host := range hosts {
		if err := world.Remove(host); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * idle)
	for pool.Stats().Addresses > 0 && time.Now().Before(deadline) {
		time.Sleep(idle / 4)
	}
	if st := pool.Stats(); st.Addresses != 0 || st.Evicted != st.Opened {
		t.Errorf("pool after the clusters went: %+v, want no address left and every opened one evicted", st)
	}
}

func fleetNamespace(i int) string { return fmt.Sprintf("fleet-%d", i) }

// startFleetCluster starts the simulated pods of the 3+2 cluster "memgraph" in ns and returns
// their hosts.
func startFleetCluster(t *testing.T, world *sim.World, ns string) []string {
	t.Helper()
	n := topology.Network{Cluster: "memgraph", Namespace: ns, ClusterDomain: "cluster.local",
		Ports: topology.Ports{Bolt: 7687, Management: 10000, Replication: 20000, Coordinator: 12000}}
	var hosts []string
	for id := topology.FirstCoordinatorID; id < topology.FirstCoordinatorID+3; id++ {
		c := n.Coordinator(id)
		if err := world.StartCoordinator(sim.CoordinatorSpec{ID: id, Host: c.Host, BoltPort: 7687, ManagementPort: 10000, CoordinatorPort: 12000}); err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, c.Host)
	}
	for ord := topology.FirstDataOrdinal; ord < topology.FirstDataOrdinal+2; ord++ {
		d := n.DataInstance(ord)
		if err := world.StartData(sim.DataSpec{Host: d.Host, BoltPort: 7687, ManagementPort: 10000}); err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, d.Host)
	}
	return hosts
}

func convergedOf(resp syncResponse) (status, reason string) {
	conds, _ := resp.Status["conditions"].([]any)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == string(v1alpha1.ConditionConverged) {
			status, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
		}
	}
	return status, reason
}

// atRest gives the StatefulSets of the 3+2 cluster "memgraph" in ns the revisions their
// controller reports once every pod runs the pod template the hook renders: no rollout.
func atRest(t *testing.T, ns string) func(parent, coordinators, data, pods map[string]any) {
	t.Helper()
	c, err := topology.NewCluster(&v1alpha1.MemgraphCluster{ObjectMeta: metav1.ObjectMeta{Name: "memgraph", Namespace: ns, Generation: 1},
		Spec: v1alpha1.MemgraphClusterSpec{Coordinators: 3, DataInstances: 2}})
	if err != nil {
		t.Fatal(err)
	}
	coordinatorHash, dataHash, err := topology.PodTemplateHashes(c, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return func(_, coordinators, data, pods map[string]any) {
		for _, set := range []struct {
			sts  map[string]any
			hash string
		}{{coordinators, coordinatorHash}, {data, dataHash}} {
			set.sts["metadata"].(map[string]any)["annotations"] = map[string]any{
				topology.AnnotationTemplateHash: set.hash, topology.AnnotationTemplateGeneration: "1"}
			status := set.sts["status"].(map[string]any)
			status["updateRevision"], status["currentRevision"] = set.hash, set.hash
		}
		for key, pod := range pods {
			hash := dataHash
			if strings.Contains(key, "coordinator") {
				hash = coordinatorHash
			}
			pod.(map[string]any)["metadata"].(map[string]any)["labels"] = map[string]any{"controller-revision-hash": hash}
		}
	}
}

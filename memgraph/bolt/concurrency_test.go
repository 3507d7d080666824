package bolt_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
)

// TestConcurrentClustersSharePool runs many goroutines against several simulated clusters
// through one Pool (as concurrent hook requests do): each registers its own instance through
// a follower, sees it, and unregisters it through another coordinator, while readers poll
// SHOW INSTANCES and SHOW REPLICATION LAG. Run under -race. Every call must succeed, each
// cluster ends as it started, and nothing is a misuse.
func TestConcurrentClustersSharePool(t *testing.T) {
	const clusters, writers, readers, rounds = 3, 4, 4, 5
	w := newWorld(t)
	pool := newPool(t, w, func(o *bolt.PoolOptions) { o.MaxConnsPerAddress = 3 })
	ctx := testContext(t)
	names := make([]string, clusters)
	for i := range names {
		names[i] = fmt.Sprintf("cc%d", i)
		startProcesses(t, w, names[i], 3, 2)
		bootstrap(t, ctx, pool, names[i], 3, 2)
	}
	initial := make([][]memgraph.Instance, clusters)
	for i, name := range names {
		initial[i] = showInstances(t, ctx, pool.Client(coordAddr(name, 1)))
	}

	var wg sync.WaitGroup
	errs := make(chan error, clusters*(writers+readers)*rounds*3)
	for ci, cluster := range names {
		for g := range writers {
			wg.Go(func() {
				name := fmt.Sprintf("g%d_%d", ci, g)
				host := fmt.Sprintf("extra-%d.%s.svc", g, cluster)
				cfg := memgraph.InstanceConfig{BoltServer: host + ":7687", ManagementServer: host + ":10000", ReplicationServer: host + ":20000"}
				register := pool.Client(coordAddr(cluster, 2+g%2))
				unregister := pool.Client(coordAddr(cluster, 1+(g+1)%3))
				for r := range rounds {
					if err := register.RegisterInstance(ctx, name, cfg); err != nil {
						errs <- fmt.Errorf("%s round %d register: %w", name, r, err)
						return
					}
					rows, err := register.ShowInstances(ctx)
					if err != nil {
						errs <- fmt.Errorf("%s round %d show: %w", name, r, err)
						return
					}
					if !hasInstance(rows, name) {
						errs <- fmt.Errorf("%s round %d: registered instance missing from %v", name, r, rows)
					}
					if err := unregister.UnregisterInstance(ctx, name); err != nil {
						errs <- fmt.Errorf("%s round %d unregister: %w", name, r, err)
						return
					}
				}
			})
		}
		for g := range readers {
			wg.Go(func() {
				c := pool.Client(coordAddr(cluster, 1+g%3))
				for r := range rounds * 3 {
					if _, err := c.ShowInstances(ctx); err != nil {
						errs <- fmt.Errorf("reader %s/%d round %d: %w", cluster, g, r, err)
					}
					if _, err := c.ShowReplicationLag(ctx); err != nil {
						errs <- fmt.Errorf("reader %s/%d lag round %d: %w", cluster, g, r, err)
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, name := range names {
		got := showInstances(t, ctx, pool.Client(coordAddr(name, 1)))
		if diff := cmp.Diff(initial[i], got, ignoreLastResp); diff != "" {
			t.Errorf("cluster %s changed (-before +after)\n%s", name, diff)
		}
	}
	if s := pool.Stats(); s.Addresses != clusters*3 {
		t.Errorf("pool has %d addresses, want one per coordinator (%d)", s.Addresses, clusters*3)
	}
	assertNoMisuse(t, w)
}

func hasInstance(rows []memgraph.Instance, name string) bool {
	for _, r := range rows {
		if r.Name == name {
			return true
		}
	}
	return false
}

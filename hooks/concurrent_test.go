package hooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
)

// Another writer (a second hook replica in the middle of its own handover, or a human) demotes
// the retiring MAIN after this pass planned its handover. The handover is skipped, and the
// UNREGISTER of the old MAIN planned behind it must not run either: it would remove the instance
// holding the latest writes while the cluster has no MAIN (and the other writer's restore needs it).
func TestUnregisterWaitsWhileAnotherWriterIsMidHandover(t *testing.T) {
	h := newHarness(t, 3, 3)
	tap := &tapConnector{inner: bolt.NewPool(bolt.PoolOptions{Resolver: h.world})}
	h.handler = hooks.NewHandler(hooks.Config{Connector: tap, SyncBudget: 5 * time.Second})
	h.bootstrap()
	h.parkMain("instance_2")
	h.scale(3, 2)
	tap.afterLag = func() {
		leader := h.pool.Client(h.network().Coordinator(1).BoltServer)
		h.must(leader.DemoteInstance(context.Background(), "instance_2"))
	}
	h.sync()
	if !h.registeredSet()["instance_2"] {
		t.Fatal("instance_2, demoted by another writer, was unregistered while the cluster had no MAIN")
	}
	for range 4 {
		h.sync()
	}
	h.assertConverged()
	h.assertNoMisuse()
}

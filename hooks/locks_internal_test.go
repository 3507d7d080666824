package hooks

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Passes of one cluster never overlap, passes of different clusters do not wait for each other,
// and once every pass is done the map is empty again.
func TestClusterLocksSerialiseAndEmpty(t *testing.T) {
	l := newClusterLocks()
	const clusters, passes = 8, 25
	inside := make([]atomic.Int32, clusters)
	var wg sync.WaitGroup
	for c := range clusters {
		for range passes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				unlock, err := l.lock(context.Background(), fmt.Sprintf("ns/cluster-%d", c))
				if err != nil {
					t.Error(err)
					return
				}
				if n := inside[c].Add(1); n != 1 {
					t.Errorf("cluster %d: %d passes at once", c, n)
				}
				time.Sleep(50 * time.Microsecond)
				inside[c].Add(-1)
				unlock()
			}()
		}
	}
	wg.Wait()
	if n := l.size(); n != 0 {
		t.Errorf("%d entries left after every pass ended, want 0", n)
	}
}

// A waiter whose budget runs out leaves nothing behind, and the holder's entry goes when it
// releases: the map holds only clusters with a pass in flight.
func TestClusterLocksForgetAbandonedWaiters(t *testing.T) {
	l := newClusterLocks()
	unlock, err := l.lock(context.Background(), "ns/a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.lock(ctx, "ns/a"); err == nil {
		t.Fatal("a second pass got the lock of a cluster whose pass is running")
	}
	if n := l.size(); n != 1 {
		t.Errorf("%d entries while one pass runs, want 1", n)
	}
	unlock()
	if n := l.size(); n != 0 {
		t.Errorf("%d entries after the pass ended, want 0", n)
	}
	// The cluster can be locked again after its entry went.
	again, err := l.lock(context.Background(), "ns/a")
	if err != nil {
		t.Fatal(err)
	}
	again()
}

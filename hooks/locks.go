package hooks

import (
	"context"
	"sync"
)

// clusterLocks serialises the passes of one cluster inside this process. Correctness does not
// depend on it (every step is read-before-write and idempotent, and another hook replica may
// run concurrently); it only spares the cluster two passes racing from one replica.
type clusterLocks struct {
	mu    sync.Mutex
	slots map[string]chan struct{}
}

func newClusterLocks() *clusterLocks { return &clusterLocks{slots: map[string]chan struct{}{}} }

// lock waits for the cluster's slot until ctx ends and returns the release function.
func (l *clusterLocks) lock(ctx context.Context, key string) (func(), error) {
	l.mu.Lock()
	slot, ok := l.slots[key]
	if !ok {
		slot = make(chan struct{}, 1)
		l.slots[key] = slot
	}
	l.mu.Unlock()
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

package hooks

import (
	"context"
	"sync"
)

// clusterLocks serialises the passes of one cluster inside this process. Correctness does not
// depend on it (every step is read-before-write and idempotent, and another hook replica may
// run concurrently); it only spares the cluster two passes racing from one replica.
//
// Its size is bounded by the passes in flight, not by the clusters ever seen: a cluster's entry
// lives only while a pass holds or waits for it, so a hook serving clusters that come and go
// for months holds no memory for the deleted ones.
type clusterLocks struct {
	mu    sync.Mutex
	slots map[string]*clusterSlot
}

// clusterSlot is one cluster's lock; refs counts its holder and waiters (guarded by
// clusterLocks.mu), and the entry is deleted when it drops to zero.
type clusterSlot struct {
	token chan struct{}
	refs  int
}

func newClusterLocks() *clusterLocks { return &clusterLocks{slots: map[string]*clusterSlot{}} }

// lock waits for the cluster's slot until ctx ends and returns the release function.
func (l *clusterLocks) lock(ctx context.Context, key string) (func(), error) {
	l.mu.Lock()
	slot, ok := l.slots[key]
	if !ok {
		slot = &clusterSlot{token: make(chan struct{}, 1)}
		l.slots[key] = slot
	}
	slot.refs++
	l.mu.Unlock()
	select {
	case slot.token <- struct{}{}:
		return func() {
			<-slot.token
			l.unref(key, slot)
		}, nil
	case <-ctx.Done():
		l.unref(key, slot)
		return nil, ctx.Err()
	}
}

func (l *clusterLocks) unref(key string, slot *clusterSlot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if slot.refs--; slot.refs == 0 {
		delete(l.slots, key)
	}
}

// size is the number of clusters with a pass holding or waiting for their lock.
func (l *clusterLocks) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.slots)
}

// Package pending remembers values the hook generated and returned in a child that Metacontroller
// has not created yet, so that every call until the child is observed returns the same value.
package pending

import "sync"

// maxEntries bounds a Cache: past it the cache starts over (a key whose child is never created
// gets a new value).
const maxEntries = 1024

// Cache holds generated values by key until they are observed. The zero value is not usable:
// use New.
type Cache[T any] struct {
	mu      sync.Mutex
	pending map[string]T
}

// New returns an empty cache.
func New[T any]() *Cache[T] {
	return &Cache[T]{pending: map[string]T{}}
}

// Get is key's value: remembered, or generated and remembered. A failed generate remembers
// nothing.
func (c *Cache[T]) Get(key string, generate func() (T, error)) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.pending[key]; ok {
		return v, nil
	}
	v, err := generate()
	if err != nil {
		return v, err
	}
	if len(c.pending) >= maxEntries {
		clear(c.pending)
	}
	c.pending[key] = v
	return v, nil
}

// Forget drops key's value: its child is observed.
func (c *Cache[T]) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, key)
}

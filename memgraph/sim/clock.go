package sim

import (
	"slices"
	"sync"
	"time"
)

// Clock is the time source of a World: every timed behaviour (instance_down_timeout_sec,
// leadership expiry, a leader's readiness, reconciliation backoff, late joins) is measured on it.
// The default is the wall clock; tests inject a ManualClock and Advance it.
type Clock interface {
	Now() time.Time
	// At calls f once this clock reaches t (at once, on its own goroutine, when it already has),
	// never from within At itself; stop cancels a call that has not happened yet. The time is
	// absolute so that a clock moved between a caller's Now and its At still calls f when t
	// comes, not a move later.
	At(t time.Time, f func()) (stop func() bool)
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) At(t time.Time, f func()) func() bool {
	return time.AfterFunc(time.Until(t), f).Stop
}

// ManualClock is a Clock that moves only when Advance is called. It is safe for concurrent use.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*manualTimer
}

type manualTimer struct {
	at  time.Time
	seq int
	f   func()
}

// NewManualClock returns a clock standing at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now is the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At schedules f for when Advance reaches at (already reached: on its own goroutine at once).
// The check and the scheduling are one step under the clock's lock, so no Advance falls between.
func (c *ManualClock) At(at time.Time, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !at.After(c.now) {
		go f()
		return func() bool { return false }
	}
	c.seq++
	t := &manualTimer{at: at, seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := len(c.timers)
		c.timers = slices.DeleteFunc(c.timers, func(x *manualTimer) bool { return x == t })
		return len(c.timers) < n
	}
}

// Advance moves the clock forward by d and runs, in time order and on the caller's goroutine,
// every function scheduled up to the new time. It must not be called while a World's query is
// being answered on the same goroutine (the functions take the World's lock).
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*manualTimer
	c.timers = slices.DeleteFunc(c.timers, func(t *manualTimer) bool {
		if t.at.After(c.now) {
			return false
		}
		due = append(due, t)
		return true
	})
	c.mu.Unlock()
	slices.SortFunc(due, func(a, b *manualTimer) int {
		if a.at.Equal(b.at) {
			return a.seq - b.seq
		}
		return a.at.Compare(b.at)
	})
	for _, t := range due {
		t.f()
	}
}

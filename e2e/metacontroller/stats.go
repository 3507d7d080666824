package metacontroller

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Write is one API write the driver made (or, for OnDelete children, would have made).
type Write struct {
	At     time.Time
	Op     string // create, update, delete, recreate, adopt, release, status; skipped-update
	Kind   string
	Object string // namespace/name
	Diff   string // for updates: observed -> merged (go-cmp)
}

func (w Write) String() string {
	s := fmt.Sprintf("%s %s %s %s", w.At.Format("15:04:05.000"), w.Op, w.Kind, w.Object)
	if w.Diff != "" {
		s += "\n" + w.Diff
	}
	return s
}

// HookCall is one hook round trip.
type HookCall struct {
	At       time.Time
	Hook     string
	Status   int // 0: transport error
	Duration time.Duration
}

// SyncError is a failed sync round.
type SyncError struct {
	At  time.Time
	Key string
	Err error
}

// Stats counts what the driver did. Safe for concurrent use.
type Stats struct {
	mu        sync.Mutex
	writes    []Write
	hooks     []HookCall
	errors    []SyncError
	syncs     []SyncStart
	started   int
	completed int
}

// SyncStart is one sync that called the hook: when, and for which parent (namespace/name).
type SyncStart struct {
	At  time.Time
	Key string
}

func newStats() *Stats { return &Stats{} }

func (s *Stats) recordWrite(op, kind string, u *unstructured.Unstructured, diff string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, Write{At: time.Now(), Op: op, Kind: kind, Object: qualifiedName(u), Diff: diff})
}

func (s *Stats) recordSkipped(kind string, u *unstructured.Unstructured, diff string) {
	s.recordWrite("skipped-update", kind, u, diff)
}

func (s *Stats) recordHook(hook string, status int, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, HookCall{At: time.Now(), Hook: hook, Status: status, Duration: d})
}

func (s *Stats) recordError(key string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors = append(s.errors, SyncError{At: time.Now(), Key: key, Err: err})
}

func (s *Stats) syncStarted(key string) {
	s.mu.Lock()
	s.started++
	s.syncs = append(s.syncs, SyncStart{At: time.Now(), Key: key})
	s.mu.Unlock()
}

func (s *Stats) syncDone() {
	s.mu.Lock()
	s.completed++
	s.mu.Unlock()
}

// Snapshot is a point-in-time copy of the counters.
type Snapshot struct {
	Writes         []Write
	Hooks          []HookCall
	Errors         []SyncError
	Syncs          []SyncStart // every sync that called the hook, in order
	SyncsStarted   int
	SyncsCompleted int
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{
		Writes:         append([]Write(nil), s.writes...),
		Hooks:          append([]HookCall(nil), s.hooks...),
		Errors:         append([]SyncError(nil), s.errors...),
		Syncs:          append([]SyncStart(nil), s.syncs...),
		SyncsStarted:   s.started,
		SyncsCompleted: s.completed,
	}
}

// ChildWrites are the writes to children (not status) made after since.
func (sn Snapshot) ChildWrites(since time.Time) []Write {
	var out []Write
	for _, w := range sn.Writes {
		if w.Op != "status" && !w.At.Before(since) {
			out = append(out, w)
		}
	}
	return out
}

// CountSince counts writes of op after since.
func (sn Snapshot) CountSince(op string, since time.Time) int {
	n := 0
	for _, w := range sn.Writes {
		if w.Op == op && !w.At.Before(since) {
			n++
		}
	}
	return n
}

// HookFailures are hook calls after since that did not answer 200.
func (sn Snapshot) HookFailures(since time.Time) []HookCall {
	var out []HookCall
	for _, h := range sn.Hooks {
		if h.Status != 200 && !h.At.Before(since) {
			out = append(out, h)
		}
	}
	return out
}

// Report renders the writes and errors for a failure message.
func (sn Snapshot) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "metacontroller driver: %d syncs started, %d completed, %d hook calls\n", sn.SyncsStarted, sn.SyncsCompleted, len(sn.Hooks))
	for _, w := range sn.Writes {
		b.WriteString("  write " + w.String() + "\n")
	}
	for _, e := range sn.Errors {
		fmt.Fprintf(&b, "  error %s %s: %v\n", e.At.Format("15:04:05.000"), e.Key, e.Err)
	}
	return b.String()
}

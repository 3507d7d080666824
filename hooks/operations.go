package hooks

import (
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// operationLog remembers, per cluster (by uid), the last status.lastOperation this process
// reported. It decides nothing; it only keeps the record from going backwards: Metacontroller
// sends the parent from its informer cache, so a pass that starts before the cache has seen the
// status the previous pass wrote carries forward an older lastOperation, which would overwrite
// the newer one. The later of the two by time is reported.
type operationLog struct {
	mu   sync.Mutex
	last map[string]v1alpha1.Operation
	// records are the status.operations this process last reported per cluster, for the same
	// reason: a stale parent's prior records lack the latest pass's.
	records map[string][]v1alpha1.OperationRecord
}

func newOperationLog() *operationLog {
	return &operationLog{last: map[string]v1alpha1.Operation{}, records: map[string][]v1alpha1.OperationRecord{}}
}

// operations returns status.operations for a pass that sent executed (in the order sent): added
// to the prior status's records and to those this process reported last for the cluster
// (topology.RecordOperations merges a record seen in both once), newest first, at most
// v1alpha1.MaxOperations.
func (l *operationLog) operations(c *topology.Cluster, executed []v1alpha1.OperationRecord) []v1alpha1.OperationRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := c.UID()
	prior := c.PriorOperations()
	remembered := l.records[key]
	if len(executed) == 0 && len(remembered) > 0 && slices.EqualFunc(prior, remembered, v1alpha1.OperationRecord.Equal) {
		// The converged pass: the parent carries what this process reported last, which is
		// RecordOperations' own output and so merges into itself (a fixed point, tested there).
		return remembered
	}
	if len(remembered) > 0 {
		oldestFirst := slices.Clone(remembered)
		slices.Reverse(oldestFirst)
		prior = topology.RecordOperations(prior, oldestFirst)
	}
	records := topology.RecordOperations(prior, executed)
	if _, known := l.records[key]; !known && len(l.records) >= maxRemembered {
		for k := range l.records { // any one: forgetting only loses the guard against a stale parent
			delete(l.records, k)
			break
		}
	}
	l.records[key] = records
	return records
}

// report returns status.lastOperation for a pass whose own writes were op (nil: it wrote
// nothing), stamping a new one with now and remembering it: the pass's own record, else the
// later of the prior status's and the remembered one.
func (l *operationLog) report(c *topology.Cluster, op *v1alpha1.Operation, now time.Time) *v1alpha1.Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := c.UID()
	if op != nil {
		stamped := *op
		stamped.Time = metav1.NewTime(now.UTC().Truncate(time.Second))
		if _, known := l.last[key]; !known && len(l.last) >= maxRemembered {
			l.forgetOldest()
		}
		l.last[key] = stamped
		return &stamped
	}
	prior := c.PriorLastOperation()
	remembered, ok := l.last[key]
	if !ok || prior != nil && prior.Time.After(remembered.Time.Time) {
		return prior
	}
	return &remembered
}

// maxRemembered bounds the clusters remembered: a cluster deleted long ago (a sync hook hears
// of no deletion) is forgotten first. Forgetting only loses the guard against a stale parent.
const maxRemembered = 4096

func (l *operationLog) forgetOldest() {
	var oldest string
	var at time.Time
	for key, op := range l.last {
		if oldest == "" || op.Time.Time.Before(at) {
			oldest, at = key, op.Time.Time
		}
	}
	delete(l.last, oldest)
}

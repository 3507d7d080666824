package hooks

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// operationLog remembers, per cluster (by uid), the last status.lastOperation this process
// reported. It decides nothing; it only keeps the record from going backwards: Metacontroller
// sends the parent from its informer cache, so a pass that starts before the cache has seen the
// status the previous pass wrote carries forward an older lastOperation, which would overwrite
// the newer one. The later of the two by time is reported.
type operationLog struct {
	mu   sync.Mutex
	last map[string]topology.Operation
}

func newOperationLog() *operationLog { return &operationLog{last: map[string]topology.Operation{}} }

// report returns status.lastOperation for a pass whose own writes were op (nil: it wrote
// nothing), stamping a new one with now and remembering it: the pass's own record, else the
// later of the prior status's and the remembered one.
func (l *operationLog) report(c *topology.Cluster, op *topology.Operation, now time.Time) *topology.Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := c.UID()
	if op != nil {
		op.Time = metav1.NewTime(now.UTC().Truncate(time.Second))
		l.last[key] = *op
		return op
	}
	prior := c.PriorLastOperation()
	remembered, ok := l.last[key]
	if !ok || prior != nil && prior.Time.After(remembered.Time.Time) {
		return prior
	}
	return &remembered
}

// lastOperation is the pass's record for status.lastOperation (see operationLog.report).
func (h *handler) lastOperation(c *topology.Cluster, out planner.Outcome) *topology.Operation {
	return h.operations.report(c, planner.LastOperation(out.Execution, len(out.Plan.Commands)), h.cfg.Now())
}

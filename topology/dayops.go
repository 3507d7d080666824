package topology

import (
	"fmt"
	"strconv"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// Day-2 declarations: what the spec and the parent's annotations say about switchover, pause and
// hibernation. A sync hook cannot edit its parent, so each is a standing declaration the hook
// converges to and reports on, never a one-shot command it consumes.

// AnnotationPaused on a MemgraphCluster pauses the hook: "true" (or any value other than one
// strconv.ParseBool reads as false) makes it return every child exactly as observed and send no
// Bolt write; removing it (or "false") resumes from what the hook then observes.
const AnnotationPaused = "memgraph.com/paused"

// Paused reports whether the parent carries AnnotationPaused with a value that pauses, and a
// warning when the value is neither true nor false: an ambiguous request to stop is read as one.
func (c *Cluster) Paused() (paused bool, warning string) {
	b, readable := c.annotationBool(AnnotationPaused)
	if !readable {
		return true, fmt.Sprintf("annotation %s is %q, read as \"true\" (paused): write \"true\" or \"false\", or remove it",
			AnnotationPaused, v1alpha1.Clip(c.mc.Annotations[AnnotationPaused]))
	}
	return b, ""
}

// annotationBool reads a boolean annotation as strconv.ParseBool does: false when absent;
// readable is false for a value that is no boolean.
func (c *Cluster) annotationBool(key string) (value, readable bool) {
	raw, ok := c.mc.Annotations[key]
	if !ok {
		return false, true
	}
	b, err := strconv.ParseBool(raw)
	return b, err == nil
}

// AnnotationAllowDowngrade on a MemgraphCluster lets a rollout move the pods to an older
// Memgraph version than they run: "true" allows it; absent, "false" or anything else refuses
// it (Updated=False, DowngradeRefused).
const AnnotationAllowDowngrade = "memgraph.com/allow-downgrade"

// AllowDowngrade reports whether the parent carries AnnotationAllowDowngrade "true", and a
// warning when its value is neither true nor false: an ambiguous permission to risk the data is
// read as none.
func (c *Cluster) AllowDowngrade() (allowed bool, warning string) {
	b, readable := c.annotationBool(AnnotationAllowDowngrade)
	if !readable {
		return false, fmt.Sprintf("annotation %s is %q, read as \"false\" (no downgrade): write \"true\" to allow one",
			AnnotationAllowDowngrade, v1alpha1.Clip(c.mc.Annotations[AnnotationAllowDowngrade]))
	}
	return b, ""
}

// Hibernate is spec.hibernate.
func (c *Cluster) Hibernate() bool { return c.mc.Spec.Hibernate != nil && *c.mc.Spec.Hibernate }

// PreferredMain is spec.preferredMain, "" when unset.
func (c *Cluster) PreferredMain() string { return c.mc.Spec.PreferredMain }

// DataStartupBudgetSeconds is how long a data instance's startup probe lets it start
// (failureThreshold × periodSeconds): a data instance not back within it is not waited for any
// longer.
func (c *Cluster) DataStartupBudgetSeconds() int64 {
	p := c.mc.Spec.DataTemplate.Probes.Startup
	return int64(p.FailureThreshold) * int64(p.PeriodSeconds)
}

// PriorLastOperation is status.lastOperation of the status the request carried, which a pass
// that writes nothing carries forward unchanged; nil when there is none. The value is the
// cluster's: do not modify.
func (c *Cluster) PriorLastOperation() *v1alpha1.Operation { return c.mc.Status.LastOperation }

// PriorOperations is status.operations of the status the request carried, which each pass
// carries forward under the commands it sent (RecordOperations); nil when there is none. The
// value is the cluster's: do not modify.
func (c *Cluster) PriorOperations() []v1alpha1.OperationRecord { return c.mc.Status.Operations }

// UID is metadata.uid: it tells a cluster from an earlier one of the same name.
func (c *Cluster) UID() string { return string(c.mc.UID) }

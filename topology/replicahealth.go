package topology

import (
	"fmt"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// ReplicaStuckAfter is spec.replicaHealth.stuckAfter (ReplicaHealth.StuckAfterDuration).
func (c *Cluster) ReplicaStuckAfter() time.Duration {
	return c.mc.Spec.ReplicaHealth.StuckAfterDuration()
}

// AnnotationRebuild on a MemgraphCluster names one data instance (instance_<n>) to rebuild: the
// hook unregisters it — never the MAIN, never the last Sync replica caught up with the MAIN —
// and keeps it unregistered while the annotation stands, so that its volume can be replaced; once
// the annotation is removed the hook registers it again and the MAIN recovers it from its
// snapshot and WAL files. `kubectl memgraph rebuild` does every step.
const AnnotationRebuild = "memgraph.com/rebuild"

// AnnotationRebuildRecord on a MemgraphCluster is `kubectl memgraph rebuild`'s own record of a
// rebuild under way (the instance, and the UIDs of the claim and pod it replaces), so that an
// interrupted rebuild resumes where it stopped. The hook never reads it.
const AnnotationRebuildRecord = "memgraph.com/rebuild-record"

// RebuildTarget is AnnotationRebuild's value, "" when the annotation is absent. It is not
// checked here: the planner says what a value that names no declared data instance means.
func (c *Cluster) RebuildTarget() string { return c.mc.Annotations[AnnotationRebuild] }

// PriorReplicas is status.replicas of the status the request carried: a pass that does not read
// SHOW REPLICAS carries the records forward, and a pass that does keeps each record's since
// while the replica's health holds. nil when there is none. The value is the cluster's: do not
// modify.
func (c *Cluster) PriorReplicas() []v1alpha1.ReplicaStatus { return c.mc.Status.Replicas }

// DataClaimName is the PersistentVolumeClaim of a data pod's data directory (LibVolume), as the
// StatefulSet controller names it from the volumeClaimTemplate.
func DataClaimName(pod string) string { return fmt.Sprintf("%s-%s", LibVolume, pod) }

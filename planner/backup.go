package planner

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The reasons a MemgraphBackup's status gives (status.reason).
const (
	ReasonClusterNotFound  = "ClusterNotFound"
	ReasonClusterHibernate = "ClusterHibernated"
	ReasonNoDestination    = "NoDestination"
	ReasonSecretProblem    = "SecretProblem"
	ReasonBackupRunning    = "BackupRunning"
	ReasonNoMain           = "NoMain"
	ReasonSnapshotFailed   = "SnapshotFailed"
	ReasonRoleChanged      = "RoleChanged"
	ReasonAgentUnreachable = "AgentUnreachable"
	ReasonUploadFailed     = "UploadFailed"
	ReasonAgentRestarted   = "AgentRestarted"
	ReasonDeadlineExceeded = "DeadlineExceeded"
	ReasonAgentRefused     = "AgentRefused"
	ReasonCheckingStore    = "CheckingStore"
	ReasonSnapshotting     = "Snapshotting"
	ReasonUploading        = "Uploading"
	ReasonCompleted        = "Completed"
	ReasonDeleteFailed     = "DeleteFailed"
	ReasonObjectsKept      = "ObjectsKept"
)

// BackupGate is what a backup that has not started waits on: its cluster, that cluster's
// hibernation and destination, the Secrets it needs, and the other backups of the same cluster.
type BackupGate struct {
	Name           string // the backup's
	Now            time.Time
	ClusterFound   bool
	Hibernated     bool
	NoDestination  bool
	SecretProblems []string // what is wrong with each Secret the backup needs, in words
	Others         []OtherBackup
}

// OtherBackup is another MemgraphBackup of the same cluster, in the same namespace.
type OtherBackup struct {
	Name  string
	Phase v1alpha1.BackupPhase
	// Older: created before this backup (by creation time, then name).
	Older bool
	// Deadline is its status.deadline, else its creation plus its spec.timeout.
	Deadline time.Time
}

// Wait is why a backup stays Pending, in a reason and a sentence; zero when it may start.
type Wait struct {
	Reason  string
	Message string
}

// BackupWaits decides whether a backup that has not started may start now. One backup at a time
// per cluster: a Running one blocks every other, and among those not started only the oldest
// goes, so two calls for two backups never both start. A backup past its deadline blocks no
// other (Blocks): it fails, whatever held it.
func BackupWaits(g BackupGate, cluster string) Wait {
	switch {
	case !g.ClusterFound:
		return Wait{ReasonClusterNotFound, fmt.Sprintf("MemgraphCluster %s does not exist in the backup's namespace; the backup starts once it does", cluster)}
	case g.Hibernated:
		return Wait{ReasonClusterHibernate, fmt.Sprintf("MemgraphCluster %s hibernates (spec.hibernate): no pod runs to take a snapshot; the backup starts once the cluster is awake", cluster)}
	case g.NoDestination:
		return Wait{ReasonNoDestination, fmt.Sprintf("MemgraphCluster %s has no spec.backup.destination: its backups go only to the store "+
			"the cluster names; the backup starts once it names one", cluster)}
	case len(g.SecretProblems) > 0:
		return Wait{ReasonSecretProblem, strings.Join(g.SecretProblems, "; ")}
	}
	var blockers []string
	for _, o := range g.Others {
		if Blocks(o, g.Now) {
			blockers = append(blockers, o.Name)
		}
	}
	if len(blockers) == 0 {
		return Wait{}
	}
	sort.Strings(blockers)
	return Wait{ReasonBackupRunning, fmt.Sprintf("MemgraphBackup %s of cluster %s comes first: one backup runs at a time per cluster", strings.Join(blockers, ", "), cluster)}
}

// Blocks reports whether another backup of the cluster keeps this one from starting at now: a
// Running one until its deadline plus JobGrace (its agent stops at the deadline; its hook records
// the end within the grace, or fails it), an older one not started until its deadline.
func Blocks(o OtherBackup, now time.Time) bool {
	switch {
	case o.Phase == v1alpha1.BackupRunning:
		return o.Deadline.IsZero() || now.Before(o.Deadline.Add(JobGrace))
	case !o.Phase.Done() && o.Older:
		return o.Deadline.IsZero() || now.Before(o.Deadline)
	}
	return false
}

// JobGone is why a Running backup fails without asking its agent, in a reason and a sentence;
// zero while the agent may still answer. A deleted cluster takes its pods and its agents' Secret
// with it, so nothing can answer; an instance the status names that is no data instance was never
// an agent's.
func JobGone(clusterFound, isDataInstance bool, cluster, instance string) Wait {
	switch {
	case !clusterFound:
		return Wait{ReasonClusterNotFound, fmt.Sprintf("cluster %s, whose instance %s was taking the backup, is gone; "+
			"nothing more is uploaded", cluster, instance)}
	case !isDataInstance:
		return Wait{ReasonAgentRestarted, fmt.Sprintf("the backup's instance %q of cluster %s is gone", instance, cluster)}
	}
	return Wait{}
}

// RestoreTarget is the data instance a cluster restoring a backup restores into: the one
// planPromotion makes the first MAIN (spec.preferredMain, else the first declared).
func RestoreTarget(d topology.Declared) (topology.DataInstance, bool) {
	for _, di := range d.DataInstances {
		if d.PreferredMain == "" || di.Name == d.PreferredMain {
			return di, true
		}
	}
	return topology.DataInstance{}, false
}

// Restoring reports whether a cluster with spec.bootstrap.fromBackup has yet to restore it: its
// leader's view (rows) lists no data instance, which the hook registers only after the restore.
func Restoring(rows []memgraph.Instance) bool {
	for _, r := range rows {
		if !r.IsCoordinator() {
			return false
		}
	}
	return true
}

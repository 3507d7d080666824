package planner

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Restoring a backup into a new cluster (spec.bootstrap.fromBackup). Memgraph refuses RECOVER
// SNAPSHOT on a REPLICA and on a storage that holds data (without FORCE, which is never sent),
// and after it loads a snapshot on a MAIN it recovers every registered replica from it
// (Memgraph v3.12.0 src/query/interpreter.cpp 6320–6325, ForceRecoverReplica;
// docs/data-safety.md). So the backup is restored into the instance that becomes the first MAIN
// while it is still unregistered — a data instance nobody registered is its own MAIN, and no
// client reaches it through the coordinators — and no data instance is registered before that
// succeeded (topology.Declared.RestoreHeld).
//
// The restore takes as long as the backup is big, so no pass waits for it: the backup agent
// beside that instance runs it as a job named by the cluster's UID, and each pass reads the job,
// starts it when its agent does not know it, and reports it (status.restore). Once a data
// instance is registered, the restore is behind the cluster and no agent is asked.

// StartRestore starts the cluster's restore job on the backup agent beside Into, which
// restores every database of the backup into Into's Memgraph before Deadline.
type StartRestore struct {
	Job  string
	Into topology.DataInstance
	// RetryFailed: the agent knows the job as failed, for a reason trying again may mend.
	RetryFailed bool
	Deadline    time.Time
}

func (s StartRestore) String() string  { return "start restore job " + s.Job + " into " + s.Into.Name }
func (StartRestore) Kind() CommandKind { return "RESTORE" }
func (StartRestore) command()          {}

// usersNote is what status.restore says a restore does not bring back.
const usersNote = "users and roles are not in a snapshot: the restored cluster has the users its own spec.auth and " +
	"user objects declare, not the backed-up cluster's"

// RestoreJobID is the name of a cluster's restore job on its agent.
func RestoreJobID(c *topology.Cluster) string { return "restore-" + c.UID() }

// restore is the restore stage, on the view discovery found, when the cluster restores a backup:
// while the leader lists no data instance, the restore job on the agent of the instance that
// becomes the first MAIN. What still holds registration for the rest of the pass is the
// declaration's RestoreHeld ("" once the job completed), and the restore's status the outcome's.
func (p *pass) restore() flow {
	held, st, f := p.restoreHeld(p.out.Discovery.View)
	if f == waiting {
		return waiting
	}
	p.d.RestoreHeld = held
	p.out.Declared, p.out.Restore = p.d, st
	return goOn
}

func (p *pass) restoreHeld(found View) (string, *v1alpha1.RestoreStatus, flow) {
	held := p.d.RestoreHeld
	if held == "" || p.in.DryRun || p.paused() {
		return held, nil, goOn
	}
	if !Restoring(found.Instances) {
		return "", nil, goOn // a data instance is registered, in Raft: the restore is behind the cluster
	}
	lv, f, err := p.leaderView(found)
	switch {
	case f == waiting:
		return "", nil, waiting
	case err != nil:
		return held, nil, goOn
	case !Restoring(lv.Instances):
		return "", nil, goOn
	}
	src := p.in.RestoreSource
	st := &v1alpha1.RestoreStatus{Source: src.Label, Phase: "Pending", Note: usersNote}
	target, ok := RestoreTarget(p.d)
	if !ok {
		return held, st, goOn
	}
	st.Instance = target.Name
	waits := func(msg string) (string, *v1alpha1.RestoreStatus, flow) {
		st.Message = msg
		return fmt.Sprintf("restoring %s into %s: %s", src.Label, target.Name, msg), st, goOn
	}
	if src.Problem != "" {
		st.Message = src.Problem
		return src.Problem, st, goOn
	}
	agent, id := p.in.Cluster.Network().BackupAgentAddress(target.Ordinal), RestoreJobID(p.in.Cluster)
	got, ok := p.read(Read{What: ReadRestoreJob, From: agent, Job: id})
	if !ok {
		return "", nil, waiting
	}
	if msg := agentProblem(got); msg != "" {
		return waits(msg)
	}
	job := got.Job
	switch NextRestore(job, p.in.Now) {
	case RestoreDone:
		p.log(LevelInfo, "restored a backup", "from", src.Label, "into", target.Name)
		return "", nil, goOn
	case RestoreStart:
		start := StartRestore{Job: id, Into: target, RetryFailed: job.Known, Deadline: p.in.Now.Add(RestoreTimeout).UTC()}
		got, ok := p.write(Write{To: agent, Command: start})
		if !ok {
			return "", nil, waiting
		}
		if msg := agentProblem(got); msg != "" {
			return waits(msg)
		}
		job = got.Job
	}
	fillRestoreStatus(st, job)
	if job.Failed {
		return fmt.Sprintf("restoring %s into %s failed: %s; the data instances stay unregistered until it succeeds (a storage "+
			"that already holds data is never overwritten: delete its PersistentVolumeClaim, or remove spec.bootstrap.fromBackup "+
			"to start on the data it holds)", src.Label, target.Name, job.Error), st, goOn
	}
	return waits(fmt.Sprintf("%s, %d of %d bytes; no data instance is registered before it completes", job.Phase, job.BytesDone, job.BytesTotal))
}

// fillRestoreStatus records the job in the restore's status.
func fillRestoreStatus(st *v1alpha1.RestoreStatus, job RestoreJob) {
	st.Phase, st.RestoredBytes, st.TotalBytes, st.Message = job.Phase, job.BytesDone, job.BytesTotal, job.Error
	if !job.Running {
		st.Phase = job.State
	}
	if !job.StartedAt.IsZero() {
		started := metav1.NewTime(job.StartedAt)
		st.StartedAt = &started
	}
	st.Databases = append(st.Databases, job.Databases...)
}

// agentProblem is why the backup agent gave no answer to a read or write ("" when it answered):
// what kept the hook from asking, or the agent's own error.
func agentProblem(got Result) string {
	if got.Problem != "" {
		return got.Problem
	}
	if got.Err != nil {
		return got.Err.Error()
	}
	return ""
}

package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The stages of a MemgraphBackup's pass: a backup done for good stays as it is; a Running one
// polls its job; one not started passes its gates (BackupWaits), adopts a job an earlier call
// started, or chooses its instance and starts one. The finalize hook removes the objects
// (ObjectsOnDeletion) once no job runs.

// sync continues the backup from its recorded phase.
func (w *backupWalk) sync() BackupDone {
	st := w.b.Status
	st.ObservedGeneration = w.b.Generation
	switch st.Phase {
	case v1alpha1.BackupCompleted, v1alpha1.BackupFailed:
		return BackupDone{Status: st}
	case v1alpha1.BackupRunning:
		return w.poll(st)
	}
	return w.start()
}

// deadline is when the backup gives up: its creation plus its spec.timeout.
func (w *backupWalk) deadline() time.Time {
	return w.b.CreationTimestamp.Add(w.b.Spec.TimeoutDuration()).UTC()
}

// start starts the backup's job on the agent of the instance ChooseBackupInstance chooses. First
// every agent of the cluster is asked for a job named by the backup's UID: one that has it was
// started by a call whose answer was lost, and its job is adopted (an agent that does not answer
// cannot have started one that still runs). Then the instance is chosen and the job started,
// which an agent never runs twice. What could not be reached leaves the backup Pending until its
// deadline, past which it fails saying what held it; a refusal fails it.
func (w *backupWalk) start() BackupDone {
	b, now, until := w.b, w.in.Now, w.deadline()
	st := v1alpha1.MemgraphBackupStatus{ObservedGeneration: b.Generation, Deadline: stamp(until)}
	wait := func(held Wait) BackupDone {
		if Expired(until, now) {
			failure := NotStarted(b.Spec.TimeoutDuration(), until, held)
			return w.failed(st, failure.Reason, failure.Message)
		}
		return w.pendingOn(held, until)
	}
	held, reached, ok := w.gate()
	if !ok {
		return BackupDone{}
	}
	if held.Reason != "" || Expired(until, now) {
		return wait(held)
	}
	if reached.Problem != "" {
		return wait(Wait{Reason: ReasonSecretProblem, Message: fmt.Sprintf("Secret %s/%s: %s", b.Namespace, topology.BackupAgentSecretName(b.Spec.Cluster), reached.Problem)})
	}
	c := w.in.Cluster
	dest := c.BackupDestination().S3
	st.Endpoint, st.Bucket = dest.Endpoint, dest.Bucket
	agents := backupAgents(c)
	found, ok := w.step(BackupFindJob{ID: string(b.UID), Agents: agents})
	if !ok {
		return BackupDone{}
	}
	if i := adoptable(found.Agents); i >= 0 && i < len(agents) {
		di, job := agents[i].Instance, found.Agents[i].Job
		st.Instance, st.Pod, st.MemgraphVersion = di.Name, di.Pod, w.memgraphVersion(di.Pod)
		st.InstanceRole, st.InstanceReason = strings.ToUpper(job.ChosenRole), job.Reason
		return w.jobAnswer(st, job)
	}
	choice, held, ok := w.choose()
	if !ok {
		return BackupDone{}
	}
	if held.Reason != "" {
		return wait(held)
	}
	di := choice.Instance
	st.Instance, st.Pod, st.MemgraphVersion = di.Name, di.Pod, w.memgraphVersion(di.Pod)
	st.InstanceRole, st.InstanceReason = strings.ToUpper(choice.Role), choice.Reason
	started, ok := w.step(BackupStartJob{Agent: BackupAgent{Instance: di, Address: c.Network().BackupAgentAddress(di.Ordinal)},
		ID: string(b.UID), Role: choice.Role, Reason: choice.Reason, Deadline: until,
		KeyPrefix: topology.BackupKeyPrefix(dest.Prefix, b.Namespace, b.Spec.Cluster, b.Name)})
	switch {
	case !ok:
		return BackupDone{}
	case agentRefused(started.Agent):
		return w.failed(st, ReasonAgentRefused, started.Agent.Message)
	case started.Agent.Err != "":
		return wait(Wait{Reason: ReasonAgentUnreachable, Message: started.Agent.Err})
	}
	return w.jobAnswer(st, started.Agent.Job)
}

// agentRefused reports whether the agent refused to start the job for good: a client error (4xx)
// other than 404, which an agent that does not serve jobs yet answers (its pod gets the hook's
// agent image when it is next replaced).
func agentRefused(a AgentAnswer) bool {
	return a.Status >= 400 && a.Status < 500 && a.Status != 404
}

// adoptable is the first agent (by ordinal) that answered with the job, -1 when none did.
func adoptable(answers []AgentAnswer) int {
	for i, a := range answers {
		if a.Err == "" {
			return i
		}
	}
	return -1
}

// gate is what holds a backup that has not started (BackupWaits); reaching the cluster, when it
// has a destination, is a step of its own whose problems hold it too.
func (w *backupWalk) gate() (held Wait, reached BackupResult, ok bool) {
	in := w.in
	g := BackupGate{Name: w.b.Name, Now: in.Now, ClusterFound: in.Cluster != nil, Others: in.others()}
	if in.ClusterProblem != "" {
		return Wait{Reason: ReasonClusterNotFound, Message: in.ClusterProblem}, reached, true
	}
	if c := in.Cluster; c != nil {
		g.Hibernated, g.NoDestination = c.Hibernate(), c.BackupDestination() == nil
		if !g.NoDestination {
			if reached, ok = w.step(BackupReach{}); !ok {
				return Wait{}, reached, false
			}
			g.SecretProblems = reached.Problems
		}
	}
	return BackupWaits(g, w.b.Spec.Cluster), reached, true
}

// backupAgents are the agents of c's data instances, by ordinal.
func backupAgents(c *topology.Cluster) []BackupAgent {
	var out []BackupAgent
	for _, di := range c.Declare(c.Replicas()).DataInstances {
		out = append(out, BackupAgent{Instance: di, Address: c.Network().BackupAgentAddress(di.Ordinal)})
	}
	return out
}

// poll reads the Running backup's job on the agent of the instance it is taken on. An agent that
// does not answer leaves it Running until JobGrace past its deadline, when it fails; one that
// knows no such job restarted and lost it (lost).
func (w *backupWalk) poll(st v1alpha1.MemgraphBackupStatus) BackupDone {
	b := w.b
	ordinal, isData := topology.ParseDataInstanceName(st.Instance)
	if gone := JobGone(w.in.Cluster != nil, isData, b.Spec.Cluster, st.Instance); gone.Reason != "" {
		return w.failed(st, gone.Reason, gone.Message)
	}
	until := w.deadline()
	if st.Deadline != nil {
		until = st.Deadline.UTC()
	}
	polled, ok := w.step(BackupPollJob{Address: w.in.Cluster.Network().BackupAgentAddress(ordinal), ID: string(b.UID)})
	got := polled.Agent
	switch {
	case !ok:
		return BackupDone{}
	case got.Unknown:
		return w.lost(st, until, got.Err+": its pod restarted while it took the backup")
	case got.Err != "":
		if Expired(until.Add(JobGrace), w.in.Now) {
			overdue := Overdue(until, got.Err)
			return w.failed(st, overdue.Reason, overdue.Message)
		}
		st.Error = got.Err // still Running: the agent may answer on a later call
		return BackupDone{Status: st, ResyncAfter: BackupJobPoll}
	}
	return w.jobAnswer(st, got.Job)
}

// lost answers for a Running backup whose agent no longer knows its job (JobLost): before its
// deadline it goes back to Pending, and the next call starts the job again, on the instance
// chosen then. First the objects the lost job uploaded are removed: no complete backup names
// them, and the new job's snapshots are named anew. Until they are removed the backup stays
// Running, saying why; at the deadline it fails with them in its status (deletionPolicy Delete
// removes them then).
func (w *backupWalk) lost(st v1alpha1.MemgraphBackupStatus, until time.Time, lost string) BackupDone {
	held, retry := JobLost(until, w.in.Now, lost)
	if !retry {
		return w.failed(st, held.Reason, held.Message)
	}
	if keys := objectKeys(st); len(keys) > 0 {
		problem, ok := w.remove(keys)
		if !ok {
			return BackupDone{}
		}
		if problem != "" {
			st.Error = lost + "; the objects it uploaded are removed before the backup is taken again, and cannot be yet: " + problem
			return BackupDone{Status: st, ResyncAfter: BackupJobPoll}
		}
	}
	return w.pendingOn(held, until)
}

// remove removes the objects keys from the store the backup's status records, up to the first
// that cannot be; problem says why.
func (w *backupWalk) remove(keys []string) (problem string, ok bool) {
	if problem := w.storeProblem(); problem != "" {
		return problem, true
	}
	read, ok := w.step(BackupReadStore{})
	if !ok || read.Problem != "" {
		return read.Problem, ok
	}
	for _, key := range keys {
		got, ok := w.step(BackupRemove{Key: key})
		if !ok || got.Err != "" {
			return got.Err, ok
		}
	}
	return "", true
}

// storeProblem is what keeps the backup's objects from being reached: the store is its cluster's
// spec.backup.destination, which must still be the store the status records.
func (w *backupWalk) storeProblem() string {
	b, c := w.b, w.in.Cluster
	key := v1alpha1.Clip(b.Namespace) + "/" + v1alpha1.Clip(b.Spec.Cluster)
	switch {
	case c == nil:
		return fmt.Sprintf("MemgraphCluster %s, whose spec.backup.destination names the store and its credentials, does not exist", key)
	case c.BackupDestination() == nil:
		return fmt.Sprintf("MemgraphCluster %s has no spec.backup.destination", key)
	}
	dest := c.BackupDestination().S3
	if b.Status.Bucket != "" && (b.Status.Bucket != dest.Bucket || b.Status.Endpoint != dest.Endpoint) {
		return fmt.Sprintf("the objects are in bucket %s at %s, and MemgraphCluster %s's spec.backup.destination now names "+
			"bucket %s at %s", b.Status.Bucket, b.Status.Endpoint, b.Spec.Cluster, dest.Bucket, dest.Endpoint)
	}
	return ""
}

// jobAnswer records what the agent says of the backup's job: its progress while it runs, every
// database's snapshot and object, and how it ended.
func (w *backupWalk) jobAnswer(st v1alpha1.MemgraphBackupStatus, job AgentJob) BackupDone {
	if !job.StartedAt.IsZero() {
		st.StartedAt = stamp(job.StartedAt)
	}
	if !job.Deadline.IsZero() {
		st.Deadline = stamp(job.Deadline)
	}
	st.UploadedBytes, st.TotalBytes, st.SnapshotWaits = job.BytesDone, job.BytesTotal, job.SnapshotWaits
	st.Databases, st.Size = job.Databases, 0
	for _, d := range job.Databases {
		st.Size += d.Size
		if d.Name == v1alpha1.DefaultDatabase {
			st.Snapshot, st.SnapshotTimestamp, st.Key = d.Snapshot, d.SnapshotTimestamp, d.Key
		}
	}
	switch {
	case job.Completed:
		st.Phase, st.Reason, st.Error = v1alpha1.BackupCompleted, ReasonCompleted, ""
		st.CompletedAt = stamp(job.FinishedAt)
		return BackupDone{Status: st}
	case job.Failed:
		st.CompletedAt = stamp(job.FinishedAt)
		reason := BackupFailure(BackupJob{Role: job.Role, Store: job.Uploading || job.CheckingStore,
			FinishedAt: job.FinishedAt, Deadline: job.Deadline}, strings.ToLower(st.InstanceRole))
		return w.failed(st, reason, job.Error)
	}
	st.Phase, st.Reason, st.Error = v1alpha1.BackupRunning, ReasonSnapshotting, job.Retrying
	switch {
	case job.Uploading:
		st.Reason = ReasonUploading
	case job.CheckingStore:
		st.Reason = ReasonCheckingStore
	}
	return BackupDone{Status: st, ResyncAfter: BackupJobPoll}
}

// pendingOn is the answer of a backup that waits: phase Pending, why, its deadline, and a call
// again later and later as it ages, at its deadline at the latest (PendingResync).
func (w *backupWalk) pendingOn(held Wait, until time.Time) BackupDone {
	b := w.b
	return BackupDone{Status: v1alpha1.MemgraphBackupStatus{ObservedGeneration: b.Generation,
		Phase: v1alpha1.BackupPending, Reason: held.Reason, Error: held.Message, Deadline: stamp(until)},
		ResyncAfter: PendingResync(b.CreationTimestamp.Time, until, w.in.Now)}
}

// failed records a backup's failure for good.
func (w *backupWalk) failed(st v1alpha1.MemgraphBackupStatus, reason, msg string) BackupDone {
	st.Phase, st.Reason, st.Error = v1alpha1.BackupFailed, reason, msg
	if st.CompletedAt == nil {
		st.CompletedAt = stamp(w.in.Now)
	}
	return BackupDone{Status: st}
}

// finalize is the finalize hook. Whether the objects go is ObjectsOnDeletion's (the
// deletionPolicy, or the schedule's backupOwnerReference when the schedule is deleted). When they
// go, every one goes before the MemgraphBackup does (removing an object already gone succeeds),
// from the store they went to, with the cluster's credentials; a job still running is waited for
// first, so that no upload lands after the removal. When they stay, or when nothing was
// uploaded, the MemgraphBackup goes at once, saying what stays in the log.
func (w *backupWalk) finalize() BackupDone {
	st := w.b.Status
	remove, why := ObjectsOnDeletion(w.in.deletion())
	if !remove || (st.Phase != v1alpha1.BackupRunning && len(objectKeys(st)) == 0) {
		if keys := objectKeys(st); len(keys) > 0 || st.Phase == v1alpha1.BackupRunning {
			st.Reason, st.Error = ReasonObjectsKept, why
			w.events = append(w.events, Event{Level: LevelInfo, Msg: "backup deleted, its objects kept",
				Args: []any{"why", why, "bucket", st.Bucket, "objects", keys}})
		}
		return BackupDone{Status: st, Finalized: true, Events: w.events}
	}
	if st.Phase == v1alpha1.BackupRunning {
		polled := w.poll(st)
		if w.waiting || polled.Status.Phase == v1alpha1.BackupRunning {
			return polled
		}
		st = polled.Status // done: whatever it uploaded goes (removing an absent object succeeds)
	}
	if problem := w.storeProblem(); problem != "" {
		return w.deleteFailed(st, problem)
	}
	read, ok := w.step(BackupReadStore{})
	switch {
	case !ok:
		return BackupDone{}
	case read.Problem != "":
		return w.deleteFailed(st, read.Problem)
	}
	for _, key := range objectKeys(st) {
		got, ok := w.step(BackupRemove{Key: key})
		switch {
		case !ok:
			return BackupDone{}
		case got.Err != "":
			st.Reason, st.Error = ReasonDeleteFailed, got.Err
			return BackupDone{Status: st, ResyncAfter: BackupDeletePoll}
		}
	}
	return BackupDone{Status: st, Finalized: true}
}

// deleteFailed is the answer of a finalize hook whose objects cannot be reached (problem).
func (w *backupWalk) deleteFailed(st v1alpha1.MemgraphBackupStatus, problem string) BackupDone {
	st.Reason, st.Error = ReasonDeleteFailed, "deletionPolicy is Delete but the objects cannot be removed: "+problem+
		"; fix that, or remove the objects and then the finalizer by hand"
	return BackupDone{Status: st, ResyncAfter: BackupDeletePoll}
}

// objectKeys are the keys of every object the backup's status names.
func objectKeys(st v1alpha1.MemgraphBackupStatus) []string {
	var keys []string
	for _, d := range st.Databases {
		if d.Key != "" && (d.Size > 0 || d.SHA256 != "") {
			keys = append(keys, d.Key)
		}
	}
	if len(keys) == 0 && st.Key != "" {
		keys = append(keys, st.Key)
	}
	return keys
}

// memgraphVersion is the image tag the pod runs (the spec's when the pod is not seen).
func (w *backupWalk) memgraphVersion(pod string) string {
	image, seen := w.in.PodImages[pod]
	if !seen {
		image = w.in.Cluster.Image()
	}
	if at := strings.LastIndex(image, "@"); at >= 0 {
		return image[at+1:]
	}
	if colon := strings.LastIndex(image, ":"); colon > strings.LastIndex(image, "/") {
		return image[colon+1:]
	}
	return image
}

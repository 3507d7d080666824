package backupcontroller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// backupCluster is what a backup that starts needs of its cluster: its destination, how to
// reach it, and what the backup reads of its backup-agent Secret.
type backupCluster struct {
	c      *topology.Cluster
	dest   v1alpha1.S3Destination
	reach  Reached
	access Access
}

// prepareBackup checks what must hold before anything runs, in planner.BackupWaits.
func (ctl *Controller) prepareBackup(b *v1alpha1.MemgraphBackup, obs *backupObservation, now time.Time) (backupCluster, planner.Wait) {
	gate := planner.BackupGate{Name: b.Name, Now: now, ClusterFound: obs.cluster != nil, Others: obs.others}
	if obs.clusterNG != "" {
		return backupCluster{}, planner.Wait{Reason: planner.ReasonClusterNotFound, Message: obs.clusterNG}
	}
	var bc backupCluster
	if c := obs.cluster; c != nil {
		gate.Hibernated, gate.NoDestination = c.Hibernate(), c.BackupDestination() == nil
		if !gate.NoDestination {
			bc = backupCluster{c: c, dest: c.BackupDestination().S3, access: ReadAccess(c, obs.agentSecret, true)}
			gate.SecretProblems = bc.access.Problems
			if len(gate.SecretProblems) == 0 {
				bc.reach = ctl.cfg.Reach(c, bc.access)
				gate.SecretProblems = bc.reach.Problems
			}
		}
	}
	return bc, planner.BackupWaits(gate, b.Spec.Cluster)
}

// deadline is when backup b gives up: its creation plus its spec.timeout.
func deadline(b *v1alpha1.MemgraphBackup) time.Time {
	return b.CreationTimestamp.Add(b.Spec.TimeoutDuration()).UTC()
}

// startBackup starts the backup's job on the agent of the instance planner.ChooseBackupInstance
// chooses. First every agent of the cluster is asked for a job named by the backup's UID: one
// that has it was started by a call whose answer was lost, and its job is adopted (an agent that
// does not answer cannot have started one that still runs). Then the instance is chosen and the
// job started, which an agent never runs twice. What could not be reached leaves the backup
// Pending until its deadline, past which it fails saying what held it; a refusal fails it.
func (ctl *Controller) startBackup(ctx context.Context, b *v1alpha1.MemgraphBackup, obs *backupObservation) backupResponse {
	now, until := ctl.cfg.Now(), deadline(b)
	st := v1alpha1.MemgraphBackupStatus{ObservedGeneration: b.Generation, Deadline: timePtr(until)}
	wait := func(w planner.Wait) backupResponse {
		if planner.Expired(until, now) {
			failure := planner.NotStarted(b.Spec.TimeoutDuration(), until, w)
			return ctl.failed(st, failure.Reason, failure.Message)
		}
		return pending(b, w, until, now)
	}
	bc, held := ctl.prepareBackup(b, obs, now)
	if held.Reason != "" || planner.Expired(until, now) {
		return wait(held)
	}
	agents, err := ctl.agents(bc.access.AgentCfg)
	if err != nil {
		return wait(planner.Wait{Reason: planner.ReasonSecretProblem, Message: fmt.Sprintf("Secret %s/%s: %v", b.Namespace, topology.BackupAgentSecretName(b.Spec.Cluster), err)})
	}
	defer agents.Close()
	st.Endpoint, st.Bucket = bc.dest.Endpoint, bc.dest.Bucket
	if di, job, ok := findJob(ctx, agents, bc.c, string(b.UID)); ok {
		st.Instance, st.Pod, st.MemgraphVersion = di.Name, di.Pod, memgraphVersion(obs.pods[di.Pod], bc.c)
		st.InstanceRole, st.InstanceReason = strings.ToUpper(job.ChosenRole), job.Reason
		return ctl.jobAnswer(st, job)
	}
	choice, held := ctl.cfg.Choose(ctx, bc.reach, bc.c)
	if held.Reason != "" {
		return wait(held)
	}
	di := choice.Instance
	st.Instance, st.Pod, st.MemgraphVersion = di.Name, di.Pod, memgraphVersion(obs.pods[di.Pod], bc.c)
	st.InstanceRole, st.InstanceReason = strings.ToUpper(choice.Role), choice.Reason
	target := bc.reach.Agent
	target.Address = di.BoltServer
	req := backup.JobRequest{Kind: backup.KindBackup, Memgraph: target, Deadline: until, Role: choice.Role, Reason: choice.Reason,
		Store:       backup.ObjectIn(bc.dest, topology.BackupKeyPrefix(bc.dest.Prefix, b.Namespace, b.Spec.Cluster, b.Name), bc.access.StoreCA),
		Credentials: bc.access.Creds}
	job, err := agents.Start(ctx, bc.c.Network().BackupAgentAddress(di.Ordinal), string(b.UID), req)
	if err != nil {
		var refused *AgentError
		if errors.As(err, &refused) && refused.StatusCode < http.StatusInternalServerError && refused.StatusCode != http.StatusNotFound {
			return ctl.failed(st, planner.ReasonAgentRefused, refused.Message)
		}
		return wait(planner.Wait{Reason: planner.ReasonAgentUnreachable, Message: err.Error()})
	}
	return ctl.jobAnswer(st, job)
}

// findJob asks every agent of c, at once, for job id; the first data instance (by ordinal) whose
// agent has it, and its job.
func findJob(ctx context.Context, agents *AgentClient, c *topology.Cluster, id string) (topology.DataInstance, backup.JobStatus, bool) {
	instances := c.Declare(c.Replicas()).DataInstances
	jobs := make([]*backup.JobStatus, len(instances))
	var wg sync.WaitGroup
	for i, di := range instances {
		wg.Go(func() {
			if job, err := agents.Status(ctx, c.Network().BackupAgentAddress(di.Ordinal), id); err == nil {
				jobs[i] = &job
			}
		})
	}
	wg.Wait()
	for i, job := range jobs {
		if job != nil {
			return instances[i], *job, true
		}
	}
	return topology.DataInstance{}, backup.JobStatus{}, false
}

// pollJob reads the Running backup's job on the agent of the instance it is taken on. An agent
// that does not answer leaves it Running until JobGrace past its deadline, when it fails; one
// that knows no such job restarted and lost it (jobLost).
func (ctl *Controller) pollJob(ctx context.Context, b *v1alpha1.MemgraphBackup, obs *backupObservation, st v1alpha1.MemgraphBackupStatus) backupResponse {
	ordinal, ok := topology.ParseDataInstanceName(st.Instance)
	if gone := planner.JobGone(obs.cluster != nil, ok, b.Spec.Cluster, st.Instance); gone.Reason != "" {
		return ctl.failed(st, gone.Reason, gone.Message)
	}
	until := deadline(b)
	if st.Deadline != nil {
		until = st.Deadline.UTC()
	}
	unanswered := func(problem string) backupResponse {
		if planner.Expired(until.Add(planner.JobGrace), ctl.cfg.Now()) {
			overdue := planner.Overdue(until, problem)
			return ctl.failed(st, overdue.Reason, overdue.Message)
		}
		st.Error = problem // still Running: the agent may answer on a later call
		return backupResponse{Status: st, ResyncAfterSeconds: jobPoll.Seconds()}
	}
	cfg, problems := ReadAgentConfig(obs.cluster, obs.agentSecret)
	agents, err := ctl.agents(cfg)
	if err != nil {
		return unanswered(strings.Join(append(problems, err.Error()), "; "))
	}
	defer agents.Close()
	job, err := agents.Status(ctx, obs.cluster.Network().BackupAgentAddress(ordinal), string(b.UID))
	var unknown *UnknownJobError
	switch {
	case errors.As(err, &unknown):
		return ctl.jobLost(ctx, b, obs, st, until, err.Error()+": its pod restarted while it took the backup")
	case err != nil:
		return unanswered(err.Error())
	}
	return ctl.jobAnswer(st, job)
}

// jobLost answers for a Running backup whose agent no longer knows its job (planner.JobLost):
// before its deadline it goes back to Pending, and the next call starts the job again, on the
// instance chosen then. First the objects the lost job uploaded are removed: no complete backup
// names them, and the new job's snapshots are named anew. Until they are removed the backup stays
// Running, saying why; at the deadline it fails with them in its status (deletionPolicy Delete
// removes them then).
func (ctl *Controller) jobLost(ctx context.Context, b *v1alpha1.MemgraphBackup, obs *backupObservation,
	st v1alpha1.MemgraphBackupStatus, until time.Time, lost string) backupResponse {
	now := ctl.cfg.Now()
	w, retry := planner.JobLost(until, now, lost)
	if !retry {
		return ctl.failed(st, w.Reason, w.Message)
	}
	if keys := objectKeys(st); len(keys) > 0 {
		dest, access, problem := ctl.storeOf(b, obs)
		for _, key := range keys {
			if problem != "" {
				break
			}
			if err := backup.RemoveObject(ctx, backup.ObjectIn(dest, key, access.StoreCA), access.Creds); err != nil {
				problem = err.Error()
			}
		}
		if problem != "" {
			st.Error = lost + "; the objects it uploaded are removed before the backup is taken again, and cannot be yet: " + problem
			return backupResponse{Status: st, ResyncAfterSeconds: jobPoll.Seconds()}
		}
	}
	return pending(b, w, until, now)
}

// jobAnswer records what the agent says of the backup's job: its progress while it runs, every
// database's snapshot and object, and how it ended.
func (ctl *Controller) jobAnswer(st v1alpha1.MemgraphBackupStatus, job backup.JobStatus) backupResponse {
	if !job.StartedAt.IsZero() {
		st.StartedAt = timePtr(job.StartedAt)
	}
	if !job.Deadline.IsZero() {
		st.Deadline = timePtr(job.Deadline)
	}
	st.UploadedBytes, st.TotalBytes, st.SnapshotWaits = job.BytesDone, job.BytesTotal, int32(job.SnapshotWaits)
	st.Databases, st.Size = nil, 0
	for _, d := range job.Databases {
		st.Databases = append(st.Databases, v1alpha1.BackupDatabase{Name: d.Name, Snapshot: d.Snapshot, SnapshotTimestamp: d.SnapshotTimestamp,
			Key: d.Key, Size: d.Size, SHA256: d.SHA256, CRC32C: d.CRC32C, Verified: d.Verified, Skipped: d.Skipped})
		st.Size += d.Size
		if d.Name == v1alpha1.DefaultDatabase {
			st.Snapshot, st.SnapshotTimestamp, st.Key = d.Snapshot, d.SnapshotTimestamp, d.Key
		}
	}
	switch job.State {
	case backup.StateCompleted:
		st.Phase, st.Reason, st.Error = v1alpha1.BackupCompleted, planner.ReasonCompleted, ""
		st.CompletedAt = timePtr(job.FinishedAt)
		return backupResponse{Status: st}
	case backup.StateFailed:
		st.CompletedAt = timePtr(job.FinishedAt)
		reason := planner.BackupFailure(planner.BackupJob{Role: job.Role,
			Store:      job.Phase == backup.PhaseUploading || job.Phase == backup.PhaseCheckingStore,
			FinishedAt: job.FinishedAt, Deadline: job.Deadline}, strings.ToLower(st.InstanceRole))
		return ctl.failed(st, reason, job.Error)
	}
	st.Phase, st.Reason, st.Error = v1alpha1.BackupRunning, planner.ReasonSnapshotting, job.Retrying
	switch job.Phase {
	case backup.PhaseUploading:
		st.Reason = planner.ReasonUploading
	case backup.PhaseCheckingStore:
		st.Reason = planner.ReasonCheckingStore
	}
	return backupResponse{Status: st, ResyncAfterSeconds: jobPoll.Seconds()}
}

func timePtr(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t.UTC().Truncate(time.Second))
	return &mt
}

// memgraphVersion is the image tag the instance's pod runs (the spec's when the pod is not seen).
func memgraphVersion(pod *wire.Object, c *topology.Cluster) string {
	image := c.Image()
	if pod != nil {
		for _, ct := range pod.Spec.Containers {
			if ct.Name == topology.ContainerName {
				image = ct.Image
			}
		}
	}
	if at := strings.LastIndex(image, "@"); at >= 0 {
		return image[at+1:]
	}
	if colon := strings.LastIndex(image, ":"); colon > strings.LastIndex(image, "/") {
		return image[colon+1:]
	}
	return image
}

// finalizeBackup is the finalize hook. Whether the objects go is planner.ObjectsOnDeletion's
// (the deletionPolicy, or the schedule's backupOwnerReference when the schedule is deleted). When
// they go, every one goes before the MemgraphBackup does (backup.RemoveObject, which succeeds on an
// object already gone), from the store they went to, with the cluster's credentials; a job still
// running is waited for first, so that no upload lands after the removal. When they stay, or
// when nothing was uploaded, the MemgraphBackup goes at once, saying what stays in the log.
func (ctl *Controller) finalizeBackup(ctx context.Context, b *v1alpha1.MemgraphBackup, obs *backupObservation) backupResponse {
	st := b.Status
	remove, why := planner.ObjectsOnDeletion(planner.BackupDeletion{Policy: b.Spec.DeletionPolicy, Schedule: obs.schedule.name,
		State: obs.schedule.state, OwnerReference: obs.schedule.ownerReference})
	if !remove || (st.Phase != v1alpha1.BackupRunning && len(objectKeys(st)) == 0) {
		if keys := objectKeys(st); len(keys) > 0 || st.Phase == v1alpha1.BackupRunning {
			st.Reason, st.Error = planner.ReasonObjectsKept, why
			ctl.cfg.Log.Info("backup deleted, its objects kept", "backup", wire.ObjectKey(b.Namespace, b.Name), "why", why,
				"bucket", st.Bucket, "objects", keys)
		}
		return backupResponse{Status: st, Finalized: true}
	}
	if st.Phase == v1alpha1.BackupRunning {
		resp := ctl.pollJob(ctx, b, obs, st)
		if resp.Status.Phase == v1alpha1.BackupRunning {
			return resp
		}
		st = resp.Status // done: whatever it uploaded goes (removing an absent object succeeds)
	}
	dest, access, problem := ctl.storeOf(b, obs)
	if problem != "" {
		st.Reason, st.Error = planner.ReasonDeleteFailed, "deletionPolicy is Delete but the objects cannot be removed: "+problem+
			"; fix that, or remove the objects and then the finalizer by hand"
		return backupResponse{Status: st, ResyncAfterSeconds: pendingPoll.Seconds()}
	}
	for _, key := range objectKeys(st) {
		if err := backup.RemoveObject(ctx, backup.ObjectIn(dest, key, access.StoreCA), access.Creds); err != nil {
			st.Reason, st.Error = planner.ReasonDeleteFailed, err.Error()
			return backupResponse{Status: st, ResyncAfterSeconds: pendingPoll.Seconds()}
		}
	}
	return backupResponse{Status: st, Finalized: true}
}

// storeOf is the store backup b's objects are in and the credentials to reach it: its cluster's
// spec.backup.destination, which must still be the store the status records; else what is
// wrong.
func (ctl *Controller) storeOf(b *v1alpha1.MemgraphBackup, obs *backupObservation) (v1alpha1.S3Destination, Access, string) {
	c := obs.cluster
	switch {
	case c == nil:
		return v1alpha1.S3Destination{}, Access{}, fmt.Sprintf("MemgraphCluster %s, whose spec.backup.destination names the store and "+
			"its credentials, does not exist", wire.ObjectKey(b.Namespace, b.Spec.Cluster))
	case c.BackupDestination() == nil:
		return v1alpha1.S3Destination{}, Access{}, fmt.Sprintf("MemgraphCluster %s has no spec.backup.destination", wire.ObjectKey(b.Namespace, b.Spec.Cluster))
	}
	dest := c.BackupDestination().S3
	if b.Status.Bucket != "" && (b.Status.Bucket != dest.Bucket || b.Status.Endpoint != dest.Endpoint) {
		return dest, Access{}, fmt.Sprintf("the objects are in bucket %s at %s, and MemgraphCluster %s's spec.backup.destination now names "+
			"bucket %s at %s", b.Status.Bucket, b.Status.Endpoint, b.Spec.Cluster, dest.Bucket, dest.Endpoint)
	}
	access := ReadAccess(c, obs.agentSecret, false)
	return dest, access, strings.Join(access.Problems, "; ")
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

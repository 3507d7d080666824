package backups

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// backupCluster is what a backup that starts needs of its cluster: how to reach it, and the
// Secrets the backup reads.
type backupCluster struct {
	c       *topology.Cluster
	reach   Reached
	secrets Secrets
}

// prepareBackup checks what must hold before anything runs, in planner.BackupWaits.
func (ctl *Controller) prepareBackup(b *topology.MemgraphBackup, obs *backupObservation) (backupCluster, planner.Wait) {
	gate := planner.BackupGate{Name: b.Name, ClusterFound: obs.cluster != nil, Others: obs.others}
	if obs.clusterNG != "" {
		return backupCluster{}, planner.Wait{Reason: planner.ReasonClusterNotFound, Message: obs.clusterNG}
	}
	var bc backupCluster
	if c := obs.cluster; c != nil {
		gate.Hibernated = c.Hibernate()
		bc = backupCluster{c: c, secrets: ReadSecrets(b, obs.secrets, true), reach: ctl.cfg.Reach(c, obs.secrets)}
		gate.SecretProblems = append(bc.secrets.Problems, bc.reach.Problems...)
	}
	return bc, planner.BackupWaits(gate, b.Spec.Cluster)
}

// deadline is when backup b gives up: its creation plus planner.BackupTimeout.
func deadline(b *topology.MemgraphBackup) time.Time {
	return b.CreationTimestamp.Add(planner.BackupTimeout).UTC()
}

// startBackup starts the backup's job on the agent of the instance planner.ChooseBackupInstance
// chooses. First every agent of the cluster is asked for a job named by the backup's UID: one
// that has it was started by a call whose answer was lost, and its job is adopted (an agent that
// does not answer cannot have started one that still runs). Then the instance is chosen and the
// job started, which an agent never runs twice. What could not be reached leaves the backup
// Pending; a refusal fails it.
func (ctl *Controller) startBackup(ctx context.Context, b *topology.MemgraphBackup, obs *backupObservation) backupResponse {
	bc, wait := ctl.prepareBackup(b, obs)
	if wait.Reason != "" {
		return pending(b, wait)
	}
	until := deadline(b)
	st := topology.MemgraphBackupStatus{ObservedGeneration: b.Generation, Deadline: timePtr(until)}
	if !ctl.cfg.Now().Before(until) {
		return ctl.failed(st, planner.ReasonDeadlineExceeded, fmt.Sprintf("the backup did not start within %v of its creation", planner.BackupTimeout))
	}
	agents, err := ctl.cfg.NewAgents(bc.secrets.AgentCfg)
	if err != nil {
		return pending(b, planner.Wait{Reason: planner.ReasonSecretProblem, Message: fmt.Sprintf("Secret %s/%s: %v", b.Namespace, topology.BackupAgentSecretName(b.Spec.Cluster), err)})
	}
	defer agents.Close()
	if di, job, ok := findJob(ctx, agents, bc.c, string(b.UID)); ok {
		st.Instance, st.Pod, st.MemgraphVersion = di.Name, di.Pod, memgraphVersion(obs.pods[di.Pod], bc.c)
		st.InstanceRole, st.InstanceReason = strings.ToUpper(job.ChosenRole), job.Reason
		return ctl.jobAnswer(st, job)
	}
	choice, wait := ctl.cfg.Choose(ctx, bc.reach, bc.c)
	if wait.Reason != "" {
		return pending(b, wait)
	}
	di := choice.Instance
	st.Instance, st.Pod, st.MemgraphVersion = di.Name, di.Pod, memgraphVersion(obs.pods[di.Pod], bc.c)
	st.InstanceRole, st.InstanceReason = strings.ToUpper(choice.Role), choice.Reason
	target := bc.reach.Agent
	target.Address = di.BoltServer
	s3 := b.Spec.Destination.S3
	req := backup.JobRequest{Kind: backup.KindBackup, Memgraph: target, Deadline: until, Role: choice.Role, Reason: choice.Reason,
		Store:       backup.ObjectIn(s3, topology.BackupKeyPrefix(s3.Prefix, b.Namespace, b.Spec.Cluster, b.Name), bc.secrets.StoreCA),
		Credentials: bc.secrets.Creds}
	job, err := agents.Start(ctx, bc.c.Network().BackupAgentAddress(di.Ordinal), string(b.UID), req)
	if err != nil {
		var refused *backup.AgentError
		if errors.As(err, &refused) && refused.StatusCode < http.StatusInternalServerError && refused.StatusCode != http.StatusNotFound {
			return ctl.failed(st, planner.ReasonAgentRefused, refused.Message)
		}
		return pending(b, planner.Wait{Reason: planner.ReasonAgentUnreachable, Message: err.Error()})
	}
	return ctl.jobAnswer(st, job)
}

// findJob asks every agent of c, at once, for job id; the first data instance (by ordinal) whose
// agent has it, and its job.
func findJob(ctx context.Context, agents Agents, c *topology.Cluster, id string) (topology.DataInstance, backup.JobStatus, bool) {
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

// pollJob reads the Running backup's job on the agent of the instance it is taken on.
func (ctl *Controller) pollJob(ctx context.Context, b *topology.MemgraphBackup, obs *backupObservation, st topology.MemgraphBackupStatus) backupResponse {
	ordinal, ok := topology.ParseDataInstanceName(st.Instance)
	if gone := planner.JobGone(obs.cluster != nil, ok, b.Spec.Cluster, st.Instance); gone.Reason != "" {
		return ctl.failed(st, gone.Reason, gone.Message)
	}
	secrets := ReadSecrets(b, obs.secrets, true)
	agents, err := ctl.cfg.NewAgents(secrets.AgentCfg)
	if err != nil {
		st.Error = strings.Join(secrets.Problems, "; ")
		return backupResponse{Status: st, ResyncAfterSeconds: pendingPoll.Seconds()}
	}
	defer agents.Close()
	job, err := agents.Status(ctx, obs.cluster.Network().BackupAgentAddress(ordinal), string(b.UID))
	var unknown *backup.UnknownJobError
	switch {
	case errors.As(err, &unknown):
		return ctl.failed(st, planner.ReasonAgentRestarted, err.Error()+": its pod restarted while it took the backup, and the backup "+
			"is not complete; create a new MemgraphBackup")
	case err != nil:
		st.Error = err.Error() // still Running: the agent may answer on a later call
		return backupResponse{Status: st, ResyncAfterSeconds: jobPoll.Seconds()}
	}
	return ctl.jobAnswer(st, job)
}

// jobAnswer records what the agent says of the backup's job: its progress while it runs, every
// database's snapshot and object, and how it ended.
func (ctl *Controller) jobAnswer(st topology.MemgraphBackupStatus, job backup.JobStatus) backupResponse {
	if !job.StartedAt.IsZero() {
		st.StartedAt = timePtr(job.StartedAt)
	}
	if !job.Deadline.IsZero() {
		st.Deadline = timePtr(job.Deadline)
	}
	st.UploadedBytes, st.TotalBytes, st.SnapshotWaits = job.BytesDone, job.BytesTotal, int32(job.SnapshotWaits)
	st.Databases, st.Size = nil, 0
	for _, d := range job.Databases {
		st.Databases = append(st.Databases, topology.BackupDatabase{Name: d.Name, Snapshot: d.Snapshot, SnapshotTimestamp: d.SnapshotTimestamp,
			Key: d.Key, Size: d.Size, SHA256: d.SHA256, Skipped: d.Skipped})
		st.Size += d.Size
		if d.Name == topology.DefaultDatabase {
			st.Snapshot, st.SnapshotTimestamp, st.Key = d.Snapshot, d.SnapshotTimestamp, d.Key
		}
	}
	switch job.State {
	case backup.StateCompleted:
		st.Phase, st.Reason, st.Error = topology.BackupCompleted, planner.ReasonCompleted, ""
		st.CompletedAt = timePtr(job.FinishedAt)
		return backupResponse{Status: st}
	case backup.StateFailed:
		st.CompletedAt = timePtr(job.FinishedAt)
		reason := planner.BackupFailure(planner.BackupJob{Role: job.Role, Uploading: job.Phase == backup.PhaseUploading,
			FinishedAt: job.FinishedAt, Deadline: job.Deadline}, strings.ToLower(st.InstanceRole))
		return ctl.failed(st, reason, job.Error)
	}
	st.Phase, st.Reason, st.Error = topology.BackupRunning, planner.ReasonSnapshotting, ""
	if job.Phase == backup.PhaseUploading {
		st.Reason = planner.ReasonUploading
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

// backupObject is the S3 object of key in b's destination.
func backupObject(b *topology.MemgraphBackup, key string, ca []byte) backup.S3Object {
	return backup.ObjectIn(b.Spec.Destination.S3, key, ca)
}

// finalizeBackup is the finalize hook: with deletionPolicy Delete, every object goes before the
// MemgraphBackup does (RemoveObject, which succeeds on an object already gone); a job still
// running is waited for first, so that no upload lands after the removal. With Retain, or when
// nothing was uploaded, the MemgraphBackup goes at once.
func (ctl *Controller) finalizeBackup(ctx context.Context, b *topology.MemgraphBackup, obs *backupObservation) backupResponse {
	st := b.Status
	if b.Spec.DeletionPolicy != topology.BackupDelete || (st.Phase != topology.BackupRunning && len(objectKeys(st)) == 0) {
		return backupResponse{Status: st, Finalized: true}
	}
	if st.Phase == topology.BackupRunning {
		resp := ctl.pollJob(ctx, b, obs, st)
		if resp.Status.Phase == topology.BackupRunning {
			return resp
		}
		st = resp.Status // done: whatever it uploaded goes (removing an absent object succeeds)
	}
	secrets := ReadSecrets(b, obs.secrets, false)
	if len(secrets.Problems) > 0 {
		st.Reason, st.Error = planner.ReasonDeleteFailed, "deletionPolicy is Delete but the objects cannot be removed: "+strings.Join(secrets.Problems, "; ")
		return backupResponse{Status: st, ResyncAfterSeconds: pendingPoll.Seconds()}
	}
	for _, key := range objectKeys(st) {
		if err := ctl.cfg.RemoveObject(ctx, backupObject(b, key, secrets.StoreCA), secrets.Creds); err != nil {
			st.Reason, st.Error = planner.ReasonDeleteFailed, err.Error()
			return backupResponse{Status: st, ResyncAfterSeconds: pendingPoll.Seconds()}
		}
	}
	return backupResponse{Status: st, Finalized: true}
}

// objectKeys are the keys of every object the backup's status names.
func objectKeys(st topology.MemgraphBackupStatus) []string {
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

package backups

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// backupCluster is what a backup that starts needs of its cluster: how to reach the coordinators
// and the data instances (TLS and spec.auth), and the agents' client configuration.
type backupCluster struct {
	c       *topology.Cluster
	conn    memgraph.Connector // the coordinators'
	data    memgraph.Connector // the data instances', with spec.auth's credentials
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
		bc = backupCluster{c: c, secrets: ReadSecrets(b, obs.secrets, true)}
		gate.SecretProblems = bc.secrets.Problems
		var problems []string
		bc.conn, bc.data, problems = ctl.cfg.Reach(c, obs.secrets)
		gate.SecretProblems = append(gate.SecretProblems, problems...)
	}
	return bc, planner.BackupWaits(gate, b.Spec.Cluster)
}

// startBackup takes the snapshot on the MAIN and starts its upload on the MAIN's agent: first a
// read of the agent's job (named by the backup's UID: a job that exists is this backup's, started
// by a call whose answer was lost, and is adopted; an agent that does not answer leaves the backup
// Pending before anything is written), then CREATE SNAPSHOT, SHOW SNAPSHOTS for its timestamp, a
// second look that the MAIN has not moved, and the job's Start, which never uploads twice. A step
// that could not run (nothing answered) leaves the backup Pending; a refusal fails it.
func (ctl *Controller) startBackup(ctx context.Context, b *topology.MemgraphBackup, obs *backupObservation) backupResponse {
	bc, wait := ctl.prepareBackup(b, obs)
	if wait.Reason != "" {
		return pending(b, wait)
	}
	main, err := ctl.cfg.FindMain(ctx, bc.conn, bc.c)
	if err != nil {
		return pending(b, planner.Wait{Reason: planner.ReasonNoMain, Message: err.Error()})
	}
	agents, err := ctl.cfg.NewAgents(bc.secrets.AgentCfg)
	if err != nil {
		return pending(b, planner.Wait{Reason: planner.ReasonSecretProblem, Message: fmt.Sprintf("Secret %s/%s: %v", b.Namespace, topology.BackupAgentSecretName(b.Spec.Cluster), err)})
	}
	defer agents.Close()
	agent := bc.c.Network().BackupAgentAddress(main.Ordinal)
	st := topology.MemgraphBackupStatus{ObservedGeneration: b.Generation, Instance: main.Name, Pod: main.Pod,
		MemgraphVersion: memgraphVersion(obs.pods[main.Pod], bc.c)}
	var unknown *backup.UnknownUploadError
	switch job, err := agents.Status(ctx, agent, string(b.UID)); {
	case err == nil:
		return ctl.uploadAnswer(adopted(st, job.Job), job)
	case !errors.As(err, &unknown):
		return pending(b, planner.Wait{Reason: planner.ReasonAgentUnreachable, Message: err.Error()})
	}
	client := bc.data.Client(main.BoltServer)
	path, err := client.CreateSnapshot(ctx)
	if err != nil {
		return ctl.snapshotFailed(b, st, err)
	}
	st.Snapshot = path
	snaps, err := client.ShowSnapshots(ctx)
	if err != nil {
		return ctl.snapshotFailed(b, st, err)
	}
	if st.SnapshotTimestamp, err = snapshotTimestamp(snaps, path); err != nil {
		return ctl.failed(st, planner.ReasonSnapshotFailed, err.Error())
	}
	if again, err := ctl.cfg.FindMain(ctx, bc.conn, bc.c); err != nil || again.Name != main.Name {
		return ctl.failed(st, planner.ReasonMainChanged, mainMoved(main.Name, again.Name, err))
	}
	return ctl.startUpload(ctx, b, &bc, agents, agent, st)
}

// adopted is the status of a backup whose job already runs (its Start answer was lost, or
// another call started it): what the snapshot and the upload were, as the agent recorded them.
func adopted(st topology.MemgraphBackupStatus, job backup.UploadJob) topology.MemgraphBackupStatus {
	st.Snapshot, st.SnapshotTimestamp, st.Key = job.Snapshot, job.SnapshotTimestamp, job.Key
	if !job.StartedAt.IsZero() {
		started := metav1.NewTime(job.StartedAt.UTC().Truncate(time.Second))
		st.StartedAt = &started
	}
	return st
}

// startUpload starts the agent's job and records the backup as Running.
func (ctl *Controller) startUpload(ctx context.Context, b *topology.MemgraphBackup, bc *backupCluster, agents UploadAgents, agent string, st topology.MemgraphBackupStatus) backupResponse {
	s3 := b.Spec.Destination.S3
	st.Key = topology.BackupObjectKey(s3.Prefix, b.Namespace, b.Spec.Cluster, b.Name, st.Snapshot)
	req := backup.UploadRequest{Snapshot: st.Snapshot, SnapshotTimestamp: st.SnapshotTimestamp, Object: backupObject(b, st.Key, bc.secrets.StoreCA), Credentials: bc.secrets.Creds}
	up, err := agents.Start(ctx, agent, string(b.UID), req)
	if err != nil {
		var refused *backup.AgentError
		if errors.As(err, &refused) && refused.StatusCode < http.StatusInternalServerError {
			return ctl.failed(st, planner.ReasonUploadFailed, refused.Message)
		}
		return pending(b, planner.Wait{Reason: planner.ReasonAgentUnreachable, Message: err.Error()})
	}
	now := metav1.NewTime(ctl.cfg.Now().UTC().Truncate(time.Second))
	st.StartedAt = &now
	return ctl.uploadAnswer(st, up)
}

// pollUpload reads the Running backup's job on the agent of the pod that took the snapshot.
func (ctl *Controller) pollUpload(ctx context.Context, b *topology.MemgraphBackup, obs *backupObservation, st topology.MemgraphBackupStatus) backupResponse {
	ordinal, ok := topology.ParseDataInstanceName(st.Instance)
	if gone := planner.UploadGone(obs.cluster != nil, ok, b.Spec.Cluster, st.Instance); gone.Reason != "" {
		return ctl.failed(st, gone.Reason, gone.Message)
	}
	secrets := ReadSecrets(b, obs.secrets, true)
	agents, err := ctl.cfg.NewAgents(secrets.AgentCfg)
	if err != nil {
		st.Error = strings.Join(secrets.Problems, "; ")
		return backupResponse{Status: st, ResyncAfterSeconds: pendingPoll.Seconds()}
	}
	defer agents.Close()
	up, err := agents.Status(ctx, obs.cluster.Network().BackupAgentAddress(ordinal), string(b.UID))
	var unknown *backup.UnknownUploadError
	switch {
	case errors.As(err, &unknown):
		return ctl.failed(st, planner.ReasonAgentRestarted, err.Error()+"; the snapshot was not uploaded: create a new MemgraphBackup")
	case err != nil:
		st.Error = err.Error() // still Running: the agent may answer on a later call
		return backupResponse{Status: st, ResyncAfterSeconds: uploadPoll.Seconds()}
	}
	return ctl.uploadAnswer(st, up)
}

// uploadAnswer records what the agent said of the job.
func (ctl *Controller) uploadAnswer(st topology.MemgraphBackupStatus, up backup.UploadStatus) backupResponse {
	switch up.State {
	case backup.StateCompleted:
		st.Phase, st.Reason, st.Error = topology.BackupCompleted, planner.ReasonCompleted, ""
		st.Key, st.Size = up.Result.Key, up.Result.Size
		now := metav1.NewTime(ctl.cfg.Now().UTC().Truncate(time.Second))
		st.CompletedAt = &now
		return backupResponse{Status: st}
	case backup.StateFailed:
		return ctl.failed(st, planner.ReasonUploadFailed, up.Error)
	}
	st.Phase, st.Reason, st.Error = topology.BackupRunning, planner.ReasonUploading, ""
	return backupResponse{Status: st, ResyncAfterSeconds: uploadPoll.Seconds()}
}

// snapshotFailed is a CREATE SNAPSHOT or SHOW SNAPSHOTS that did not go through: Memgraph's
// refusal fails the backup in Memgraph's words; a MAIN that did not answer leaves it Pending.
func (ctl *Controller) snapshotFailed(b *topology.MemgraphBackup, st topology.MemgraphBackupStatus, err error) backupResponse {
	switch memgraph.KindOf(err) {
	case memgraph.KindUnreachable, memgraph.KindTimeout, memgraph.KindClosed:
		return pending(b, planner.Wait{Reason: planner.ReasonNoMain, Message: planner.Explain(err)})
	}
	return ctl.failed(st, planner.ReasonSnapshotFailed, planner.Explain(err))
}

func mainMoved(before, after string, err error) string {
	if err != nil {
		return fmt.Sprintf("the snapshot was taken on %s, then the MAIN could not be read again (%v): the upload did not start, so nothing was copied from an instance that may no longer be MAIN; create a new MemgraphBackup", before, err)
	}
	return fmt.Sprintf("the snapshot was taken on %s, then %s became MAIN: the upload did not start, so nothing was copied from an instance that is no longer MAIN; create a new MemgraphBackup", before, after)
}

// snapshotTimestamp is the timestamp SHOW SNAPSHOTS gives the snapshot at path.
func snapshotTimestamp(snaps []memgraph.Snapshot, path string) (int64, error) {
	for _, s := range snaps {
		if s.Path == path {
			return s.Timestamp, nil
		}
	}
	return 0, fmt.Errorf("CREATE SNAPSHOT answered %s, which SHOW SNAPSHOTS does not list", path)
}

// memgraphVersion is the image tag the MAIN's pod runs (the spec's when the pod is not seen).
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

// finalizeBackup is the finalize hook: with deletionPolicy Delete, the object goes before the
// MemgraphBackup does (RemoveObject, which succeeds on an object already gone); an upload still
// running is waited for first, so that it cannot land after the removal. With Retain, or when
// nothing was uploaded, the MemgraphBackup goes at once.
func (ctl *Controller) finalizeBackup(ctx context.Context, b *topology.MemgraphBackup, obs *backupObservation) backupResponse {
	st := b.Status
	if b.Spec.DeletionPolicy != topology.BackupDelete || st.Key == "" {
		return backupResponse{Status: st, Finalized: true}
	}
	if st.Phase == topology.BackupRunning {
		resp := ctl.pollUpload(ctx, b, obs, st)
		if resp.Status.Phase == topology.BackupRunning {
			return resp
		}
		st = resp.Status // done: whatever it uploaded goes (removing an absent object succeeds)
	}
	secrets := ReadSecrets(b, obs.secrets, false)
	if len(secrets.Problems) > 0 {
		st.Reason, st.Error = planner.ReasonDeleteFailed, "deletionPolicy is Delete but the object cannot be removed: "+strings.Join(secrets.Problems, "; ")
		return backupResponse{Status: st, ResyncAfterSeconds: pendingPoll.Seconds()}
	}
	if err := ctl.cfg.RemoveObject(ctx, backupObject(b, st.Key, secrets.StoreCA), secrets.Creds); err != nil {
		st.Reason, st.Error = planner.ReasonDeleteFailed, err.Error()
		return backupResponse{Status: st, ResyncAfterSeconds: pendingPoll.Seconds()}
	}
	return backupResponse{Status: st, Finalized: true}
}

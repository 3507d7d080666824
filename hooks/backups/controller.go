// Package backups is the hooks of MemgraphBackups and MemgraphScheduledBackups: taking a backup
// (a snapshot on the MAIN, uploaded by the MAIN's backup agent), removing its object when it
// goes, and creating backups on a schedule. What it decides is planner's (BackupWaits,
// DecideSchedule); how a cluster's Memgraph is reached, and how an answer is written and
// counted, are the shell's (Config). It shares nothing with a MemgraphCluster's sync but the
// wire and what ReadSecrets reads.
package backups

import (
	"context"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"log/slog"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A MemgraphBackup's hooks. Its status is the backup's record: a backup is taken once, so the
// phase it recorded (and where the snapshot was taken) is what the next call continues from —
// Pending and not yet started, Running with an upload to poll on the pod that took the
// snapshot, or done for good. Everything else is read again on every call: the cluster, its
// MAIN, the Secrets, the other backups, the agent's job.

// Polling intervals, as resyncAfterSeconds: while an upload runs, and while a backup waits.
const (
	uploadPoll  = 2 * time.Second
	pendingPoll = 10 * time.Second
)

// backupResponse is a MemgraphBackup's hook answer: no children, ever.
type backupResponse struct {
	Status             topology.MemgraphBackupStatus `json:"status"`
	Children           []any                         `json:"children"`
	ResyncAfterSeconds float64                       `json:"resyncAfterSeconds,omitempty"`
	Finalized          bool                          `json:"finalized,omitempty"`
}

// Config wires the backup controllers to the shell.
type Config struct {
	Budget time.Duration // the shared deadline of every query and call of one hook request
	Now    func() time.Time
	Log    *slog.Logger
	// Reach is how cluster c's coordinators and data instances are reached with the Secrets of
	// its namespace (spec.tls's trust, spec.auth's credentials); problems say what is missing.
	Reach func(c *topology.Cluster, secrets map[string]*wire.Object) (coordinators, data memgraph.Connector, problems []string)
	// FindMain is the data instance the leader of c names MAIN, which must be up.
	FindMain func(ctx context.Context, conn memgraph.Connector, c *topology.Cluster) (topology.DataInstance, error)
	// NewAgents makes the clients of one cluster's agents; RemoveObject removes an uploaded object.
	NewAgents    func(backup.AgentClientConfig) (UploadAgents, error)
	RemoveObject func(context.Context, backup.S3Object, backup.S3Credentials) error
	// Answer writes a hook's answer, Fail a request that could not be served; the shell counts both.
	Answer func(w http.ResponseWriter, hook string, code int, body any)
	Fail   func(w http.ResponseWriter, hook string, err error)
}

// Controller serves the backup hooks.
type Controller struct{ cfg Config }

// New returns the controller of cfg.
func New(cfg Config) *Controller { return &Controller{cfg: cfg} }

// UploadAgents are the backup agents of one cluster (backup.AgentClient).
type UploadAgents interface {
	Start(ctx context.Context, agentAddr, id string, req backup.UploadRequest) (backup.UploadStatus, error)
	Status(ctx context.Context, agentAddr, id string) (backup.UploadStatus, error)
	Close()
}

// HandleSync serves a MemgraphBackup's sync and finalize hooks (finalizing tells them
// apart).
func (ctl *Controller) HandleSync(w http.ResponseWriter, r *http.Request) {
	var req backupRequest
	if err := decodeBackupRequest(r, &req); err != nil {
		ctl.cfg.Fail(w, "backup", err)
		return
	}
	b, err := decodeBackup(req.Parent, "parent")
	if err != nil {
		ctl.cfg.Fail(w, "backup", err)
		return
	}
	obs, err := observeBackup(b, req.Related)
	if err != nil {
		ctl.cfg.Fail(w, "backup", err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), ctl.cfg.Budget)
	defer cancel()
	log := ctl.cfg.Log.With("backup", wire.ObjectKey(b.Namespace, b.Name))
	var resp backupResponse
	if req.Finalizing {
		resp = ctl.finalizeBackup(ctx, b, &obs)
	} else {
		resp = ctl.syncBackup(ctx, b, &obs)
	}
	resp.Children = []any{}
	log.Info("backup", "phase", resp.Status.Phase, "reason", resp.Status.Reason, "finalizing", req.Finalizing, "finalized", resp.Finalized)
	ctl.cfg.Answer(w, "backup", http.StatusOK, resp)
}

// syncBackup continues the backup from its recorded phase.
func (ctl *Controller) syncBackup(ctx context.Context, b *topology.MemgraphBackup, obs *backupObservation) backupResponse {
	st := b.Status
	st.ObservedGeneration = b.Generation
	switch st.Phase {
	case topology.BackupCompleted, topology.BackupFailed:
		return backupResponse{Status: st}
	case topology.BackupRunning:
		return ctl.pollUpload(ctx, b, obs, st)
	}
	return ctl.startBackup(ctx, b, obs)
}

// pending is the answer of a backup that waits: phase Pending, why, and a call again soon.
func pending(b *topology.MemgraphBackup, w planner.Wait) backupResponse {
	return backupResponse{Status: topology.MemgraphBackupStatus{ObservedGeneration: b.Generation,
		Phase: topology.BackupPending, Reason: w.Reason, Error: w.Message}, ResyncAfterSeconds: pendingPoll.Seconds()}
}

// failed records a backup's failure for good.
func (ctl *Controller) failed(st topology.MemgraphBackupStatus, reason, msg string) backupResponse {
	st.Phase, st.Reason, st.Error = topology.BackupFailed, reason, msg
	now := metav1.NewTime(ctl.cfg.Now().UTC().Truncate(time.Second))
	st.CompletedAt = &now
	return backupResponse{Status: st}
}

// HandleCustomize asks Metacontroller for what a MemgraphBackup's hooks read: its
// MemgraphCluster, that cluster's pods, the Secrets of the backup's namespace (the destination's
// credentials and CA, the cluster's spec.auth Secret, whose name only the cluster's spec holds,
// and the cluster's <cluster>-backup-agent Secret; the hook reads only those), and the
// namespace's MemgraphBackups (one backup at a time per cluster).
func (ctl *Controller) HandleCustomize(w http.ResponseWriter, r *http.Request) {
	var req backupRequest
	if err := decodeBackupRequest(r, &req); err != nil {
		ctl.cfg.Fail(w, "backup-customize", err)
		return
	}
	b, err := decodeBackup(req.Parent, "parent")
	if err != nil {
		ctl.cfg.Fail(w, "backup-customize", err)
		return
	}
	all := &wire.LabelSelector{MatchLabels: map[string]string{}}
	rules := []wire.RelatedRule{
		{APIVersion: topology.APIVersion, Resource: topology.Resource, Namespace: b.Namespace, Names: []string{b.Spec.Cluster}},
		{APIVersion: "v1", Resource: "pods", Namespace: b.Namespace, LabelSelector: &wire.LabelSelector{MatchLabels: topology.PodSelector(b.Spec.Cluster)}},
		{APIVersion: "v1", Resource: "secrets", Namespace: b.Namespace, LabelSelector: all},
		{APIVersion: topology.APIVersion, Resource: topology.BackupResource, Namespace: b.Namespace, LabelSelector: all},
	}
	ctl.cfg.Answer(w, "backup-customize", http.StatusOK, wire.CustomizeResponse{RelatedResources: rules})
}

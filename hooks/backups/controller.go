package hooks

import (
	"context"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
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

// uploadAgents are the backup agents of one cluster (backup.AgentClient).
type uploadAgents interface {
	Start(ctx context.Context, agentAddr, id string, req backup.UploadRequest) (backup.UploadStatus, error)
	Status(ctx context.Context, agentAddr, id string) (backup.UploadStatus, error)
	Close()
}

// handleBackupSync serves a MemgraphBackup's sync and finalize hooks (finalizing tells them
// apart).
func (h *handler) handleBackupSync(w http.ResponseWriter, r *http.Request) {
	var req backupRequest
	if err := decodeBackupRequest(r, &req); err != nil {
		h.fail(w, "backup", err)
		return
	}
	b, err := decodeBackup(req.Parent, "parent")
	if err != nil {
		h.fail(w, "backup", err)
		return
	}
	obs, err := observeBackup(b, req.Related)
	if err != nil {
		h.fail(w, "backup", err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.SyncBudget)
	defer cancel()
	log := h.log.With("backup", objectKey(b.Namespace, b.Name))
	var resp backupResponse
	if req.Finalizing {
		resp = h.finalizeBackup(ctx, b, &obs)
	} else {
		resp = h.syncBackup(ctx, b, &obs)
	}
	resp.Children = []any{}
	log.Info("backup", "phase", resp.Status.Phase, "reason", resp.Status.Reason, "finalizing", req.Finalizing, "finalized", resp.Finalized)
	h.writeJSON(w, "backup", http.StatusOK, resp)
}

// syncBackup continues the backup from its recorded phase.
func (h *handler) syncBackup(ctx context.Context, b *topology.MemgraphBackup, obs *backupObservation) backupResponse {
	st := b.Status
	st.ObservedGeneration = b.Generation
	switch st.Phase {
	case topology.BackupCompleted, topology.BackupFailed:
		return backupResponse{Status: st}
	case topology.BackupRunning:
		return h.pollUpload(ctx, b, obs, st)
	}
	return h.startBackup(ctx, b, obs)
}

// pending is the answer of a backup that waits: phase Pending, why, and a call again soon.
func pending(b *topology.MemgraphBackup, w planner.Wait) backupResponse {
	return backupResponse{Status: topology.MemgraphBackupStatus{ObservedGeneration: b.Generation,
		Phase: topology.BackupPending, Reason: w.Reason, Error: w.Message}, ResyncAfterSeconds: pendingPoll.Seconds()}
}

// failed records a backup's failure for good.
func (h *handler) failed(st topology.MemgraphBackupStatus, reason, msg string) backupResponse {
	st.Phase, st.Reason, st.Error = topology.BackupFailed, reason, msg
	now := metav1.NewTime(h.cfg.Now().UTC().Truncate(time.Second))
	st.CompletedAt = &now
	return backupResponse{Status: st}
}

// handleBackupCustomize asks Metacontroller for what a MemgraphBackup's hooks read: its
// MemgraphCluster, that cluster's pods, the Secrets of the backup's namespace (the destination's
// credentials and CA, the cluster's spec.auth Secret, whose name only the cluster's spec holds,
// and the cluster's <cluster>-backup-agent Secret; the hook reads only those), and the
// namespace's MemgraphBackups (one backup at a time per cluster).
func (h *handler) handleBackupCustomize(w http.ResponseWriter, r *http.Request) {
	var req backupRequest
	if err := decodeBackupRequest(r, &req); err != nil {
		h.fail(w, "backup-customize", err)
		return
	}
	b, err := decodeBackup(req.Parent, "parent")
	if err != nil {
		h.fail(w, "backup-customize", err)
		return
	}
	all := &labelSelector{MatchLabels: map[string]string{}}
	rules := []relatedRule{
		{APIVersion: topology.APIVersion, Resource: topology.Resource, Namespace: b.Namespace, Names: []string{b.Spec.Cluster}},
		{APIVersion: "v1", Resource: "pods", Namespace: b.Namespace, LabelSelector: &labelSelector{MatchLabels: topology.PodSelector(b.Spec.Cluster)}},
		{APIVersion: "v1", Resource: "secrets", Namespace: b.Namespace, LabelSelector: all},
		{APIVersion: topology.APIVersion, Resource: topology.BackupResource, Namespace: b.Namespace, LabelSelector: all},
	}
	h.writeJSON(w, "backup-customize", http.StatusOK, customizeResponse{RelatedResources: rules})
}

// agentClients makes the clients of one cluster's agents, dialing through resolver when set.
func agentClients(resolver memgraph.Resolver) func(backup.AgentClientConfig) (uploadAgents, error) {
	return func(cfg backup.AgentClientConfig) (uploadAgents, error) {
		if resolver != nil {
			cfg.Resolve = resolver.Resolve
		}
		return backup.NewAgentClient(cfg)
	}
}

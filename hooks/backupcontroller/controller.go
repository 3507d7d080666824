// Package backupcontroller is the hooks of MemgraphBackups and MemgraphScheduledBackups: taking a backup
// (a job of the backup agent beside the instance chosen, which snapshots every database and
// uploads each), removing its objects when it goes, and creating backups on a schedule, and the
// restore source of a restoring cluster. A backup's pass is the planner's step machine
// (planner.NextBackup), which this package performs step by step; a schedule's answer is
// planner.DecideSchedule's. A backup's pass reaches its cluster's Memgraph through the hook's
// connector (Config) and chooses the instance itself; writing and counting the answer each hook
// returns is the shell's. No query or call it makes takes longer than
// the data is big: the agent does that, and the hook starts, polls and reports it.
package backupcontroller

import (
	"context"
	"net/http"
	"time"

	"log/slog"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A MemgraphBackup's hooks. Its status is the backup's record: a backup is taken once, so the
// phase it recorded (and where it is taken) is what the next call continues from — Pending and
// not yet started, Running with a job to poll on the instance's agent, or done for good.
// Everything else is read again on every call: the cluster, its leader's view, the Secrets, the
// other backups, the agent's job.

// pendingPoll is how often a schedule being deleted is looked at, as resyncAfterSeconds.
const pendingPoll = 10 * time.Second

// backupResponse is a MemgraphBackup's hook answer: no children, ever.
type backupResponse struct {
	Status             v1alpha1.MemgraphBackupStatus `json:"status"`
	Children           []any                         `json:"children"`
	ResyncAfterSeconds float64                       `json:"resyncAfterSeconds,omitempty"`
	Finalized          bool                          `json:"finalized,omitempty"`
}

// Config wires the backup controllers to the shell.
type Config struct {
	Budget time.Duration // the shared deadline of every query and call of one hook request
	Now    func() time.Time
	Log    *slog.Logger
	// Connector is the hook's Bolt connector: a backup's pass reaches its cluster's Memgraph
	// through it, with what the cluster's backup-agent Secret carries (spec.tls's CA, spec.auth's
	// credentials).
	Connector memgraph.Connector
	// AgentResolver maps an agent's advertised host:port to the one to dial (nil: dial as
	// advertised).
	AgentResolver memgraph.Resolver
	// Metrics counts backups that end and records the newest success of each cluster and each
	// schedule's interval (nil: nothing is counted).
	Metrics Metrics
}

// Metrics are the backup metrics the shell exports (hookmetrics.BackupMetrics).
type Metrics interface {
	// BackupEnded counts a backup of cluster that completed or failed, once, by the call that
	// saw it end.
	BackupEnded(namespace, cluster string, phase v1alpha1.BackupPhase)
	// BackupSucceeded records that a backup of cluster completed at at.
	BackupSucceeded(namespace, cluster string, at time.Time)
	// ScheduleObserved records a schedule of cluster: its longest interval (ScheduleInterval)
	// and its creation.
	ScheduleObserved(namespace, cluster, schedule string, interval time.Duration, created time.Time)
	// ScheduleGone forgets a schedule being deleted.
	ScheduleGone(namespace, schedule string)
}

// Controller serves the backup hooks.
type Controller struct{ cfg Config }

// New returns the controller of cfg.
func New(cfg Config) *Controller { return &Controller{cfg: cfg} }

// Sync answers a MemgraphBackup's sync and finalize hooks (finalizing tells them apart), or
// returns why the request cannot be served.
func (ctl *Controller) Sync(r *http.Request) (any, error) {
	var req wire.CompositeRequest
	if err := wire.DecodeRequest(r, &req); err != nil {
		return nil, err
	}
	b, err := decodeBackup(req.Parent, "parent")
	if err != nil {
		return nil, err
	}
	obs, err := observeBackup(b, req.Related)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), ctl.cfg.Budget)
	defer cancel()
	log := ctl.cfg.Log.With("backup", wire.ObjectKey(b.Namespace, b.Name))
	done := ctl.newPass(b, &obs, req.Finalizing).run(ctx, log)
	resp := backupResponse{Status: done.Status, Children: []any{}, ResyncAfterSeconds: done.ResyncAfter.Seconds(), Finalized: done.Finalized}
	ctl.count(b, &obs, resp.Status)
	log.Info("backup", "phase", resp.Status.Phase, "reason", resp.Status.Reason, "finalizing", req.Finalizing, "finalized", resp.Finalized)
	return resp, nil
}

// count records in the metrics a backup that ends with this answer (its status was not done
// before) and the newest success of its cluster.
func (ctl *Controller) count(b *v1alpha1.MemgraphBackup, obs *backupObservation, st v1alpha1.MemgraphBackupStatus) {
	m := ctl.cfg.Metrics
	if m == nil {
		return
	}
	if st.Phase.Done() && !b.Status.Phase.Done() {
		m.BackupEnded(b.Namespace, b.Spec.Cluster, st.Phase)
	}
	last := obs.lastSuccess
	if st.Phase == v1alpha1.BackupCompleted && st.CompletedAt != nil && st.CompletedAt.After(last) {
		last = st.CompletedAt.Time
	}
	if !last.IsZero() {
		m.BackupSucceeded(b.Namespace, b.Spec.Cluster, last)
	}
}

// Customize asks Metacontroller for what a MemgraphBackup's hooks read, each by a name its
// own spec or metadata gives: its MemgraphCluster, that cluster's pods, the cluster's
// <cluster>-backup-agent Secret (the one Secret: the cluster's hook copies into it what its
// backups read of the Secrets the cluster names, access.go), the namespace's MemgraphBackups (one
// backup at a time per cluster), and the MemgraphScheduledBackup that owns the backup, if one
// does (its backupOwnerReference decides what deleting it keeps). Every rule depends on the
// backup alone, whose spec never changes: Metacontroller's answer cached per UID and generation
// never goes stale.
func (ctl *Controller) Customize(r *http.Request) (any, error) {
	var req wire.CompositeRequest
	if err := wire.DecodeRequest(r, &req); err != nil {
		return nil, err
	}
	b, err := decodeBackup(req.Parent, "parent")
	if err != nil {
		return nil, err
	}
	all := &wire.LabelSelector{MatchLabels: map[string]string{}}
	rules := []wire.RelatedRule{
		{APIVersion: v1alpha1.APIVersion, Resource: v1alpha1.Resource, Namespace: b.Namespace, Names: []string{b.Spec.Cluster}},
		{APIVersion: "v1", Resource: "pods", Namespace: b.Namespace, LabelSelector: &wire.LabelSelector{MatchLabels: topology.PodSelector(b.Spec.Cluster)}},
		{APIVersion: "v1", Resource: "secrets", Namespace: b.Namespace, Names: []string{topology.BackupAgentSecretName(b.Spec.Cluster)}},
		{APIVersion: v1alpha1.APIVersion, Resource: v1alpha1.BackupResource, Namespace: b.Namespace, LabelSelector: all},
	}
	if schedule := scheduleOwner(b); schedule != "" {
		rules = append(rules, wire.RelatedRule{APIVersion: v1alpha1.APIVersion, Resource: v1alpha1.ScheduledBackupResource,
			Namespace: b.Namespace, Names: []string{schedule}})
	}
	return wire.CustomizeResponse{RelatedResources: rules}, nil
}

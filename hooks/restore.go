package hooks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
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
// The restore takes as long as the backup is big, so the hook never waits for it: the backup
// agent beside that instance runs it as a job named by the cluster's UID (backup.Agent: each
// database streamed from the store into Memgraph, verified, and recovered), and each pass reads
// the job, starts it when its agent does not know it, and reports it (status.restore). Once a
// data instance is registered, the restore is behind the cluster and no agent is asked.

// usersNote is what status.restore says a restore does not bring back.
const usersNote = "users and roles are not in a snapshot: the restored cluster has the users its own spec.auth and " +
	"user objects declare, not the backed-up cluster's"

// restoreJobID is the name of a cluster's restore job on its agent.
func restoreJobID(c *topology.Cluster) string { return "restore-" + c.UID() }

// restore is the restore stage, on the view discovery found, when the cluster restores a backup:
// while the leader lists no data instance, the restore job on the agent of the instance that
// becomes the first MAIN. It returns what holds registration for this pass
// (topology.Declared.RestoreHeld): "" once the job completed, else what it waits for; and the
// restore's status while it holds.
func (h *handler) restore(ctx context.Context, conn memgraph.Connector, in *passInput, found planner.View) (string, *topology.RestoreStatus) {
	held := in.declared.RestoreHeld
	if held == "" || in.dryRun || in.paused {
		return held, nil
	}
	if !planner.Restoring(found.Instances) {
		return "", nil // a data instance is registered, in Raft: the restore is behind the cluster
	}
	lv, err := leaderView(ctx, conn, in.declared, found)
	if err != nil {
		return held, nil
	}
	if !planner.Restoring(lv.Instances) {
		return "", nil
	}
	src := in.obs.restore
	st := &topology.RestoreStatus{Source: src.Label, Phase: "Pending", Note: usersNote}
	target, ok := planner.RestoreTarget(in.declared)
	if !ok {
		return held, st
	}
	st.Instance = target.Name
	waiting := func(msg string) (string, *topology.RestoreStatus) {
		st.Message = msg
		return fmt.Sprintf("restoring %s into %s: %s", src.Label, target.Name, msg), st
	}
	if src.Problem != "" {
		st.Message = src.Problem
		return src.Problem, st
	}
	agents, problem := h.clusterAgents(in)
	if problem != "" {
		return waiting(problem)
	}
	defer agents.Close()
	addr, id := in.cluster.Network().BackupAgentAddress(target.Ordinal), restoreJobID(in.cluster)
	job, err := agents.Status(ctx, addr, id)
	var unknown *backup.UnknownJobError
	if err != nil && !errors.As(err, &unknown) {
		return waiting(err.Error())
	}
	known := err == nil
	switch planner.NextRestore(restoreJob(known, job), h.cfg.Now()) {
	case planner.RestoreDone:
		h.log.Info("restored a backup", "from", src.Label, "into", target.Name)
		return "", nil
	case planner.RestoreStart:
		req, problem := h.restoreRequest(in, target)
		if problem != "" {
			return waiting(problem)
		}
		req.RetryFailed = known
		if job, err = agents.Start(ctx, addr, id, req); err != nil {
			return waiting(err.Error())
		}
	}
	fillRestoreStatus(st, job)
	if job.State == backup.StateFailed {
		return fmt.Sprintf("restoring %s into %s failed: %s; the data instances stay unregistered until it succeeds (a storage "+
			"that already holds data is never overwritten: delete its PersistentVolumeClaim, or remove spec.bootstrap.fromBackup "+
			"to start on the data it holds)", src.Label, target.Name, job.Error), st
	}
	return waiting(fmt.Sprintf("%s, %d of %d bytes; no data instance is registered before it completes", job.Phase, job.BytesDone, job.BytesTotal))
}

// clusterAgents are the clients of the cluster's own agents, from its backup-agent Secret child.
func (h *handler) clusterAgents(in *passInput) (*backup.AgentClient, string) {
	data := in.obs.agentSecret
	if data == nil {
		return nil, "the cluster's backup-agent Secret does not exist yet"
	}
	cfg := backup.AgentClientConfig{Token: strings.TrimSpace(decoded(data[topology.BackupAgentTokenKey])), CAPEM: []byte(decoded(data[topology.BackupAgentCAKey]))}
	if h.cfg.AgentResolver != nil {
		cfg.Resolve = h.cfg.AgentResolver.Resolve
	}
	c, err := backup.NewAgentClient(cfg)
	if err != nil {
		return nil, "the cluster's backup-agent Secret: " + err.Error()
	}
	return c, ""
}

// decoded is a base64 value of the agent Secret's data (topology.BackupAgentSecretComplete
// checked that each decodes).
func decoded(v string) string {
	raw, _ := base64.StdEncoding.DecodeString(v)
	return string(raw)
}

// restoreRequest is the restore job for target: the source's objects, and how the agent reaches
// its Memgraph (spec.tls's CA, spec.auth's user).
func (h *handler) restoreRequest(in *passInput, target topology.DataInstance) (backup.JobRequest, string) {
	if in.obs.auth.Problem != "" {
		return backup.JobRequest{}, in.obs.auth.Problem
	}
	src := in.obs.restore
	mg := backup.MemgraphTarget{Address: target.BoltServer, CAPEM: in.obs.tls.CAPEM}
	if c := in.obs.auth.Creds; c != nil {
		mg.Username, mg.Password = c.Username, c.Password
	}
	return backup.JobRequest{Kind: backup.KindRestore, Memgraph: mg, Deadline: h.cfg.Now().Add(planner.RestoreTimeout).UTC(),
		Store: src.Store, Credentials: src.Credentials, Databases: src.Databases}, ""
}

// restoreJob is what the planner reads of the agent's job.
func restoreJob(known bool, job backup.JobStatus) planner.RestoreJob {
	return planner.RestoreJob{Known: known, Running: job.State == backup.StateRunning, Completed: job.State == backup.StateCompleted,
		Permanent: job.Permanent, FinishedAt: job.FinishedAt}
}

// fillRestoreStatus records the job in the restore's status.
func fillRestoreStatus(st *topology.RestoreStatus, job backup.JobStatus) {
	st.Phase, st.RestoredBytes, st.TotalBytes, st.Message = job.Phase, job.BytesDone, job.BytesTotal, job.Error
	if job.State != backup.StateRunning {
		st.Phase = job.State
	}
	if !job.StartedAt.IsZero() {
		started := metav1.NewTime(job.StartedAt)
		st.StartedAt = &started
	}
	for _, d := range job.Databases {
		st.Databases = append(st.Databases, topology.RestoreDatabase{Name: d.Name, Restored: d.Done})
	}
}

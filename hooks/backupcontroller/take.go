package backupcontroller

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// pass is one call of a MemgraphBackup's sync or finalize hook: it asks the planner for the next
// step (planner.NextBackup), has the step perform itself with the pass as its effects
// (planner.BackupEffects), adds what it gave to the pass's record, and asks again until the
// planner says it is done. Every decision is the planner's, made on the request and that record
// alone; the pass holds what the steps reach with: the backup-agent Secret as read once, the
// cluster's Memgraph reached with it (reach.go), and one agents' client, closed at its end.
type pass struct {
	ctl    *Controller
	obs    *backupObservation
	in     planner.BackupPass
	access *Access // the backup-agent Secret, once read
	// coordinators and data reach the cluster's Memgraph once reached (the data instances with
	// spec.auth's credentials); target is how an agent reaches its own instance.
	coordinators, data memgraph.Connector
	target             backup.MemgraphTarget
	agents             *AgentClient // the cluster's agents' client, once made (agentsErr: why not)
	agentsErr          error
}

func (ctl *Controller) newPass(b *v1alpha1.MemgraphBackup, obs *backupObservation, finalizing bool) *pass {
	return &pass{ctl: ctl, obs: obs, in: planner.BackupPass{Backup: b, Cluster: obs.cluster, ClusterProblem: obs.clusterNG,
		Others: obs.others, ScheduleName: obs.scheduleName, Schedule: obs.schedule, PodImages: obs.podImages,
		Finalizing: finalizing, Now: ctl.cfg.Now()}}
}

// run performs the steps the planner asks for until it is done, and writes its log lines.
func (p *pass) run(ctx context.Context, log *slog.Logger) planner.BackupDone {
	defer p.close()
	var record []planner.BackupResult
	for {
		step := planner.NextBackup(&p.in, record)
		if done, ok := step.(planner.BackupDone); ok {
			for _, e := range done.Events {
				log.Log(ctx, slog.Level(e.Level), e.Msg, e.Args...)
			}
			return done
		}
		record = append(record, step.Perform(ctx, p))
	}
}

func (p *pass) close() {
	if p.agents != nil {
		p.agents.Close()
	}
}

// secret is the cluster's backup-agent Secret, read on the pass's first need of it.
func (p *pass) secret() *Access {
	if p.access == nil {
		a := ReadAccess(p.in.Cluster, p.obs.agentSecret)
		p.access = &a
	}
	return p.access
}

// agentClient is the client of the cluster's agents, made on the pass's first call to one from
// the Secret's token and CA, dialing through Config.AgentResolver.
func (p *pass) agentClient() (*AgentClient, error) {
	if p.agents == nil && p.agentsErr == nil {
		cfg := p.secret().AgentCfg
		if p.ctl.cfg.AgentResolver != nil {
			cfg.Resolve = p.ctl.cfg.AgentResolver.Resolve
		}
		p.agents, p.agentsErr = NewAgentClient(cfg)
	}
	return p.agents, p.agentsErr
}

// Jobs asks every agent, at once, for the job id.
func (p *pass) Jobs(ctx context.Context, agents []string, id string) []planner.AgentAnswer {
	answers := make([]planner.AgentAnswer, len(agents))
	var wg sync.WaitGroup
	for i, address := range agents {
		wg.Go(func() { answers[i] = p.Job(ctx, address, id) })
	}
	wg.Wait()
	return answers
}

// Job asks the agent at address for the job id.
func (p *pass) Job(ctx context.Context, agent, id string) planner.AgentAnswer {
	agents, err := p.agentClient()
	if err != nil {
		return planner.AgentAnswer{Err: strings.Join(append(p.secret().AgentProblems, err.Error()), "; ")}
	}
	return answerOf(agents.Status(ctx, agent, id))
}

// StartJob starts the job s names on its agent, which reaches its instance as the Secret says
// and uploads to the cluster's destination with the store's credentials.
func (p *pass) StartJob(ctx context.Context, s planner.BackupStartJob) planner.AgentAnswer {
	agents, err := p.agentClient()
	if err != nil {
		return planner.AgentAnswer{Err: err.Error()}
	}
	a := p.secret()
	target := p.target
	target.Address = s.Agent.Instance.BoltServer
	req := backup.JobRequest{Kind: backup.KindBackup, Memgraph: target, Deadline: s.Deadline, Role: s.Role, Reason: s.Reason,
		Store: backup.ObjectIn(p.in.Cluster.BackupDestination().S3, s.KeyPrefix, a.StoreCA), Credentials: a.Creds}
	return answerOf(agents.Start(ctx, s.Agent.Address, s.ID, req))
}

// ReadStore says what keeps the store's credentials from being used for removals.
func (p *pass) ReadStore() string {
	return strings.Join(p.secret().StoreProblems, "; ")
}

// RemoveObject removes the object key from the cluster's destination.
func (p *pass) RemoveObject(ctx context.Context, key string) error {
	a := p.secret()
	return backup.RemoveObject(ctx, backup.ObjectIn(p.in.Cluster.BackupDestination().S3, key, a.StoreCA), a.Creds)
}

// answerOf is an agent's answer as the planner reads it: the job, or the error with the HTTP
// status and message of a refusal.
func answerOf(job backup.JobStatus, err error) planner.AgentAnswer {
	var unknown *UnknownJobError
	var refusal *AgentError
	switch {
	case errors.As(err, &unknown):
		return planner.AgentAnswer{Err: err.Error(), Unknown: true}
	case errors.As(err, &refusal):
		return planner.AgentAnswer{Err: err.Error(), Status: refusal.StatusCode, Message: refusal.Message}
	case err != nil:
		return planner.AgentAnswer{Err: err.Error()}
	}
	return planner.AgentAnswer{Job: jobOf(job)}
}

// jobOf is what the planner reads of an agent's answer.
func jobOf(job backup.JobStatus) planner.AgentJob {
	out := planner.AgentJob{Completed: job.State == backup.StateCompleted, Failed: job.State == backup.StateFailed,
		Uploading: job.Phase == backup.PhaseUploading, CheckingStore: job.Phase == backup.PhaseCheckingStore,
		ChosenRole: job.ChosenRole, Reason: job.Reason, Role: job.Role, StartedAt: job.StartedAt, FinishedAt: job.FinishedAt,
		Deadline: job.Deadline, BytesDone: job.BytesDone, BytesTotal: job.BytesTotal, SnapshotWaits: int32(job.SnapshotWaits),
		Error: job.Error, Retrying: job.Retrying}
	for _, d := range job.Databases {
		out.Databases = append(out.Databases, v1alpha1.BackupDatabase{Name: d.Name, Snapshot: d.Snapshot, SnapshotTimestamp: d.SnapshotTimestamp,
			Key: d.Key, Size: d.Size, SHA256: d.SHA256, CRC32C: d.CRC32C, Verified: d.Verified, Skipped: d.Skipped})
	}
	return out
}

package backupcontroller

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// pass is one call of a MemgraphBackup's sync or finalize hook: it asks the planner for the next
// step (planner.NextBackup), performs it — on the cluster, its agents or the store — adds what it
// gave to the pass's record, and asks again until the planner says it is done. Every decision is
// the planner's, made on the request and that record alone; the shell holds only what a step
// made for a later one (the cluster reached, the agents' clients, the store's credentials).
type pass struct {
	ctl    *Controller
	obs    *backupObservation
	in     planner.BackupPass
	access Access  // the backup-agent Secret as a start reads it
	reach  Reached // the cluster, reached with access
	agents *AgentClient
	store  Access // the store's credentials, for removals
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
		record = append(record, p.perform(ctx, step))
	}
}

// perform performs one step.
func (p *pass) perform(ctx context.Context, step planner.BackupStep) planner.BackupResult {
	c := p.in.Cluster
	switch s := step.(type) {
	case planner.BackupReach:
		return p.reachCluster()
	case planner.BackupFindJob:
		return p.findJob(ctx, s)
	case planner.BackupChoose:
		var got planner.BackupResult
		got.Choice, got.Held = p.ctl.cfg.Choose(ctx, p.reach, c)
		return got
	case planner.BackupStartJob:
		return p.startJob(ctx, s)
	case planner.BackupPollJob:
		return p.pollJob(ctx, s)
	case planner.BackupReadStore:
		p.store = ReadAccess(c, p.obs.agentSecret, false)
		return planner.BackupResult{Problem: strings.Join(p.store.Problems, "; ")}
	case planner.BackupRemove:
		var got planner.BackupResult
		if err := backup.RemoveObject(ctx, backup.ObjectIn(c.BackupDestination().S3, s.Key, p.store.StoreCA), p.store.Creds); err != nil {
			got.Err = err.Error()
		}
		return got
	}
	return planner.BackupResult{}
}

// reachCluster reads the backup-agent Secret for a start, reaches the cluster with it and makes
// its agents' client.
func (p *pass) reachCluster() planner.BackupResult {
	c := p.in.Cluster
	p.access = ReadAccess(c, p.obs.agentSecret, true)
	got := planner.BackupResult{Problems: p.access.Problems}
	if len(got.Problems) > 0 {
		return got
	}
	p.reach = p.ctl.cfg.Reach(c, p.access)
	if got.Problems = p.reach.Problems; len(got.Problems) > 0 {
		return got
	}
	var err error
	if p.agents, err = p.ctl.agents(p.access.AgentCfg); err != nil {
		got.Problem = err.Error()
	}
	return got
}

// findJob asks every agent, at once, for the job; the first (by ordinal) that has it.
func (p *pass) findJob(ctx context.Context, s planner.BackupFindJob) planner.BackupResult {
	jobs := make([]*backup.JobStatus, len(s.Agents))
	var wg sync.WaitGroup
	for i, a := range s.Agents {
		wg.Go(func() {
			if job, err := p.agents.Status(ctx, a.Address, s.ID); err == nil {
				jobs[i] = &job
			}
		})
	}
	wg.Wait()
	for i, job := range jobs {
		if job != nil {
			return planner.BackupResult{Found: i, Job: jobOf(*job)}
		}
	}
	return planner.BackupResult{Found: -1}
}

// startJob starts the backup's job on the chosen instance's agent; a refusal (a 4xx other than
// 404: the agent will not run it) tells from an agent that did not answer.
func (p *pass) startJob(ctx context.Context, s planner.BackupStartJob) planner.BackupResult {
	dest := p.in.Cluster.BackupDestination().S3
	target := p.reach.Agent
	target.Address = s.Agent.Instance.BoltServer
	req := backup.JobRequest{Kind: backup.KindBackup, Memgraph: target, Deadline: s.Deadline, Role: s.Role, Reason: s.Reason,
		Store: backup.ObjectIn(dest, s.KeyPrefix, p.access.StoreCA), Credentials: p.access.Creds}
	job, err := p.agents.Start(ctx, s.Agent.Address, s.ID, req)
	var got planner.BackupResult
	var refused *AgentError
	switch {
	case errors.As(err, &refused) && refused.StatusCode < http.StatusInternalServerError && refused.StatusCode != http.StatusNotFound:
		got.Refused, got.Err = true, refused.Message
	case err != nil:
		got.Err = err.Error()
	default:
		got.Job = jobOf(job)
	}
	return got
}

// pollJob asks the instance's agent for the Running backup's job, with what the backup-agent
// Secret gives the agents' client.
func (p *pass) pollJob(ctx context.Context, s planner.BackupPollJob) planner.BackupResult {
	var got planner.BackupResult
	cfg, problems := ReadAgentConfig(p.in.Cluster, p.obs.agentSecret)
	agents, err := p.ctl.agents(cfg)
	if err != nil {
		got.Err = strings.Join(append(problems, err.Error()), "; ")
		return got
	}
	defer agents.Close()
	job, err := agents.Status(ctx, s.Address, s.ID)
	var unknown *UnknownJobError
	got.Lost = errors.As(err, &unknown)
	if err != nil {
		got.Err = err.Error()
		return got
	}
	got.Job = jobOf(job)
	return got
}

func (p *pass) close() {
	if p.agents != nil {
		p.agents.Close()
	}
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

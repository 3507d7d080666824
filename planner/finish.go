package planner

import (
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// lagReading is SHOW REPLICATION LAG read on the leader for the replica lag gauge.
type lagReading struct {
	rows []memgraph.InstanceLag
	read bool
}

// readLag reads SHOW REPLICATION LAG on the leader the pass last read, for the cluster's replica
// lag gauge alone (no decision reads it), when the shell says a read is due (at most once per
// refresh interval: a converged pass costs no extra query in between) and the cluster is not
// hibernating. A lag read in the same view already is the gauge's.
func (p *pass) readLag() flow {
	latest := p.out.Latest
	if !p.in.LagDue || p.in.TLS.Problem != "" || p.expired || latest.Leader == "" || latest.Coordinator.Name != latest.Leader ||
		Hibernating(Verdict(p.out).Phase) {
		return goOn
	}
	got, ok := p.read(Read{What: ReadLag, From: latest.Coordinator.BoltServer})
	switch {
	case !ok:
		return waiting
	case got.Err != nil:
		p.log(LevelDebug, "SHOW REPLICATION LAG for the lag gauge", "coordinator", latest.Coordinator.Name, "error", got.Err.Error())
		return goOn
	}
	p.lag = lagReading{rows: got.Lag, read: true}
	return goOn
}

// replicaHealth is status.replicas for the pass: the MAIN's SHOW REPLICAS turned into records
// (ReplicaRecords) when the pass read it — as a catch-up proof, or because the shell says a read
// is due (Input.ReplicasDue: at most every 30 s per cluster and hook process, as a rule in the
// same passes as the lag gauge's read) — else the prior records carried forward
// (CarryReplicaRecords). Either way only the replicas the latest ready leader's table lists as
// replicas keep a record. Nothing replicates while the cluster hibernates or wakes: no record.
func (p *pass) replicaHealth() flow {
	out := &p.out
	prior := p.in.Cluster.PriorReplicas()
	if out.Hibernation.InCharge {
		out.ReplicaRecords = nil
		return goOn
	}
	main, _, ok := CatchUpSource(out.Declared, out.Latest.Instances)
	if _, leadership := ReadLeadership(out.Latest.Instances); !ok || leadership != LeaderReady {
		out.ReplicaRecords = CarryReplicaRecords(prior, out.Latest)
		return goOn
	}
	read := out.MainReplicas
	if read == nil || read.Main != main || read.Problem != "" {
		if !p.in.ReplicasDue || p.expired || p.in.TLS.Problem != "" {
			read = nil
		} else {
			var ok bool
			p.replicasRead = true
			if read, ok = p.mainReplicas(out.Latest.Instances); !ok {
				return waiting
			}
			if read != nil && read.Problem != "" {
				p.log(LevelDebug, "SHOW REPLICAS for the replicas' health", "main", read.Main, "error", read.Problem)
			}
		}
	}
	if read == nil || read.Problem != "" {
		out.ReplicaRecords = CarryReplicaRecords(prior, out.Latest)
		return goOn
	}
	out.ReplicaRecords = CarryReplicaRecords(ReplicaRecords(read.Rows, prior, p.in.Now), out.Latest)
	return goOn
}

// finish is the Done of a pass whose stages all ran or stopped.
func (p *pass) finish() Done {
	out := p.out
	out.Sent = p.records
	v := Verdict(out)
	done := Done{cluster: p.in.Cluster, Outcome: out, Verdicts: v, Children: p.children(out), Operation: lastOperation(out),
		Events: p.events, Counts: p.counts, Lag: p.lag.rows, LagRead: p.lag.read, ReplicasRead: p.replicasRead}
	if !Hibernating(v.Phase) {
		health := out.Health()
		s := Summarize(out, health, p.workloads)
		done.Summary = &s
		done.ReplicaProblems = ReplicaProblems(out.ReplicaRecords, health.Down, p.in.Cluster.ReplicaStuckAfter(), p.in.Now)
	}
	return done
}

// children is what the pass's children are rendered at: the outcome's replica counts and
// rollout, the hibernation window, the MAIN's budget, the certificate rotation's record, the
// templates' records and the backup agent's pin.
func (p *pass) children(out Outcome) topology.Rendering {
	return topology.Rendering{Replicas: out.Replicas, Partitions: out.Rollout.Partitions, Generations: out.Rollout.TemplateGenerations,
		Window: out.Hibernation.Window, MainPod: MainBudgetPod(out, p.in.MainBudgetPod), HeldPod: p.in.MainBudgetPod,
		Restart: p.in.Certificate.Restart, Record: NextCertificateRecord(p.in.Certificate, p.in.TLS.Stamp, out, p.in.Now),
		Records: out.Rollout.Records, Agent: p.in.Agent}
}

// lastOperation is the pass's own status.lastOperation record: its plan's writes, else the
// settings stage's (which runs only in a pass that wrote nothing else); nil when it wrote
// nothing. A pass that put settings back says which.
func lastOperation(out Outcome) *v1alpha1.Operation {
	ex, planned := out.Execution, len(out.Plan.Commands)
	if len(ex.Writes) == 0 {
		ex, planned = out.Settings.Execution, len(out.Settings.Step.Commands)
	}
	op := LastOperation(ex, planned)
	if op != nil && op.Result == v1alpha1.OperationSucceeded && len(out.Settings.Execution.Ran) > 0 {
		op.Message = SettingsDriftMessage(out.Settings.Step)
	}
	return op
}

// Status is the cluster's status after the pass (see Status): ignored is the evidence the pass
// ignored (topology.Warnings.Render), op and ops the status.lastOperation and status.operations
// the shell keeps, now the time a changed condition is stamped with.
func (d Done) Status(ignored []string, op *v1alpha1.Operation, ops []v1alpha1.OperationRecord, now time.Time) v1alpha1.MemgraphClusterStatus {
	return Status(StatusInput{Cluster: d.cluster, Outcome: d.Outcome, Verdicts: d.Verdicts, Ignored: ignored,
		LastOperation: op, Operations: ops, Now: now})
}

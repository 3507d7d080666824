package planner

import (
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// pass replays a pass from its start on every Next: each stage asks for what it reads and
// writes through do, which answers from the record in order and, past its end, makes the step
// the pass is waiting on. A read is made at most once per view (memo): a view is what the reads
// between two writes see, and a guarded step's re-check starts one of its own (freshView).
type pass struct {
	in     *Input
	record []Result
	cursor int // the next result of record to replay
	// memo holds the reads of the current view.
	memo []memoised
	view int
	// expired: the budget had run out by the last step performed.
	expired bool
	pending Step

	d topology.Declared // Input.Declared, with the pass's preferred MAIN and restore hold
	// workloads are Input.Workloads with the cordoned Nodes (a handover avoids a replica on one)
	// and the maintenance windows open now.
	workloads *Workloads
	held      topology.Replicas // the replica counts returned while no plan stands (Hold)
	// unviewed is the rollout's step planned on the StatefulSets alone at held, once planned.
	unviewed *RolloutStep
	// rolling: declared pods are not Ready while a rollout is in progress.
	rolling bool
	// hibernation is the pass's hibernation step; inCharge ends the pass before the gates.
	hibernation HibernationStep
	out         Outcome
	lag         lagReading
	// replicasRead: the pass read SHOW REPLICAS because Input.ReplicasDue said so.
	replicasRead bool
	journal
}

// flow is what a stage tells the pass: go on to the next stage, stop here, or wait for a step.
type flow int

const (
	goOn flow = iota
	stop
	waiting
)

type memoised struct {
	what ReadKind
	from string
	job  string
	got  Result
}

func newPass(in *Input, record []Result) *pass {
	p := &pass{in: in, record: record, expired: in.BudgetGone, d: in.Declared}
	cordoned := CordonedNodes(in.Nodes)
	if in.Workloads != nil {
		w := *in.Workloads
		w.CordonedNodes = cordoned
		w.Maintenance, w.SpecGeneration = MaintenanceAt(in.Cluster.MaintenanceWindows(), in.Now), in.Cluster.Generation()
		p.workloads = &w
	}
	p.d.PreferredMain = PreferredOffCordon(p.d, in.PodNodes, cordoned)
	p.d.RestoreHeld = in.Cluster.RestoreHold()
	p.d.Rebuild = in.Cluster.RebuildTarget()
	// Unobserved, nothing changes: not even the widened retiring range may grow a StatefulSet.
	p.held = Hold(p.d, in.Returned)
	return p
}

// read answers r from the current view when it was read there, else from the record; ok is
// false when the pass must first perform it (then it is the pending step).
func (p *pass) read(r Read) (Result, bool) {
	for _, m := range p.memo {
		if m.what == r.What && m.from == r.From && m.job == r.Job {
			return m.got, true
		}
	}
	got, ok := p.replay(r)
	if ok {
		p.memo = append(p.memo, memoised{what: r.What, from: r.From, job: r.Job, got: got})
	}
	return got, ok
}

// write answers w from the record; ok is false when the pass must first perform it. A write
// ends the view.
func (p *pass) write(w Write) (Result, bool) {
	got, ok := p.replay(w)
	if ok {
		p.freshView()
	}
	return got, ok
}

func (p *pass) replay(s Step) (Result, bool) {
	if p.cursor == len(p.record) {
		p.pending = s
		return Result{}, false
	}
	got := p.record[p.cursor]
	p.cursor++
	p.expired = got.Expired
	return got, true
}

// freshView starts a new view: nothing read before is answered again.
func (p *pass) freshView() {
	p.view++
	p.memo = p.memo[:0]
}

// rolloutInput is the rollout planner's input on the StatefulSets alone, at replicas.
func (p *pass) rolloutInput(replicas topology.Replicas) RolloutInput {
	return RolloutInput{Declared: p.d, Replicas: replicas, Workloads: *p.workloads}
}

// rolloutWithoutView is the rollout's step planned on the StatefulSets alone, at the held
// replica counts: what a pass reports when it ends before a plan stands on a view of the cluster.
func (p *pass) rolloutWithoutView() RolloutStep {
	if p.unviewed == nil {
		step := PlanRollout(p.rolloutInput(p.held))
		p.unviewed = &step
	}
	return *p.unviewed
}

// observe is what the planner reads of rows, with the rollout's workloads.
func (p *pass) observe(rows []memgraph.Instance) Observed {
	o := Observe(rows, nil, p.in.Span)
	o.Workloads = p.workloads
	return o
}

// progressOn is the progress a plan on view reports.
func (p *pass) progressOn(view View) Progress {
	return Decide(p.d, Observe(view.Instances, nil, p.in.Span)).Progress
}

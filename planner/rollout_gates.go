package planner

import (
	"fmt"
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// rolloutPlan is one PlanRollout call: both roles and the leader's view.
type rolloutPlan struct {
	in           RolloutInput
	data         rolloutRole
	coordinators rolloutRole
	v            *rowIndex // nil: no usable view of the cluster this sync
	main         string
}

func newRolloutPlan(in RolloutInput) *rolloutPlan {
	p := &rolloutPlan{
		in:           in,
		data:         newRolloutRole(topology.RoleData, in.Data, dataMembers(in.Declared), in.Replicas.DataInstances),
		coordinators: newRolloutRole(topology.RoleCoordinator, in.Coordinators, coordinatorMembers(in.Declared), in.Replicas.Coordinators),
	}
	p.data.record = NextTemplateRecord(in.Data, in.Data.Provenance, in.SpecGeneration)
	p.coordinators.record = NextTemplateRecord(in.Coordinators, in.Coordinators.Provenance, in.SpecGeneration)
	if in.Cluster != nil && !leaderNotReady(*in.Cluster) && in.Cluster.Leader != "" {
		p.v = in.rows
		if p.v == nil {
			v := index(*in.Cluster)
			v.dataPods = in.Data.Pods // the view may come without the workloads
			p.v = &v
		}
		p.main = observeMain(*p.v).name
	}
	return p
}

// active is the role whose rollout goes now: the data instances until they are done, then the
// coordinators; nil when both are done or wait for a maintenance window (heldForWindow).
func (p *rolloutPlan) active() *rolloutRole {
	for _, r := range []*rolloutRole{&p.data, &p.coordinators} {
		if r.pending() && !p.waitsForWindow(r) {
			return r
		}
	}
	return nil
}

// heldForWindow says whether a role's rollout waits for a maintenance window.
func (p *rolloutPlan) heldForWindow() bool {
	return p.data.pending() && p.waitsForWindow(&p.data) || p.coordinators.pending() && p.waitsForWindow(&p.coordinators)
}

func (p *rolloutPlan) retiring() bool { return p.data.retiring() || p.coordinators.retiring() }

// decide fills in the step: the Updated verdict, and for the active role either a release
// (its partition lowered to the candidate), a handover or a yield before one, or nothing. While
// the data instances upgrade, the message starts with the upgrade's step (upgradePhase).
func (p *rolloutPlan) decide(step *RolloutStep) {
	p.decideStep(step)
	if r := p.active(); r != nil && step.Reason == v1alpha1.ReasonRolloutInProgress {
		if phase := p.upgradePhase(r, r.candidate()); phase != "" {
			step.Message = phase + "; " + step.Message
		}
	}
}

func (p *rolloutPlan) decideStep(step *RolloutStep) {
	r := p.active()
	switch {
	case r == nil && p.heldForWindow():
		step.Reason, step.Message = v1alpha1.ReasonWaitingForMaintenanceWindow, p.withCounts(p.in.Maintenance.waiting())
		return
	case r == nil:
		step.Reason, step.Message = v1alpha1.ReasonUpToDate, p.upToDateMessage()
		return
	}
	if refusal := p.refused(); refusal != nil {
		p.refuse(step, refusal)
		return
	}
	switch {
	case p.retiring() && !p.rollsThroughRetirement():
		p.inProgress(step, "waiting for the scale-down to finish before replacing pods")
		return
	case p.retiring():
		// Rolling through the scale-down: a survivor released already stays released until it
		// is back at the update revision (a partition back at the returned count would have the
		// controller recreate it at the old revision, to be released again, forever).
		p.setPartition(step, r, int32(r.candidate()+1))
	case r.state() == roleStale:
		p.inProgress(step, fmt.Sprintf("holding every %s pod until the StatefulSet controller has the new pod template's revision", r.kind))
		return
	}
	c := r.candidate()
	if w := p.releasedWait(r, c); w != nil {
		p.waitOn(step, w)
		return
	}
	if c < 0 {
		// Every pod is back at the update revision: the controller records the update as
		// complete next, and a pod lost meanwhile still comes back at the new revision.
		p.inProgress(step, fmt.Sprintf("waiting for the StatefulSet controller to record the %s update as complete", r.kind))
		return
	}
	if pod := r.pods[c]; !pod.Ready {
		p.releaseDownPod(step, r, c)
		return
	}
	if w := p.clusterWait(r, c); w != nil {
		p.waitOn(step, w)
		return
	}
	p.releaseOrHandOver(step, r, c)
}

// waitsForWindow: the role's pending rollout is a hook release's change alone, and no
// maintenance window lets it roll now. Nothing of the role is released then (the partition
// rests: every pod keeps its revision, and one already released stays released).
func (p *rolloutPlan) waitsForWindow(r *rolloutRole) bool { return p.in.heldForWindow(r.record) }

// rollsThroughRetirement: the data rollout goes on while data members retire, when the scale-down
// waits for a retiring MAIN that no survivor can take over and the partition can release the
// candidate without touching a member that matters: every retiring pod above it exists, is
// Ready and runs the update revision already — or belongs to a retiring member no longer
// registered, which the shrink removes anyway — and the candidate is not the MAIN. A survivor
// above the candidate was released already: it is on its way back at the update revision, and
// releasedWait waits for it before the candidate goes.
// That is the way out of a scale-down whose retiring MAIN runs a newer version than the
// survivors (a failover mid-upgrade put it there): they cannot replicate from it, so none can be
// proven caught up to take MAIN over, until their pods are upgraded. Retiring coordinators hold
// everything.
func (p *rolloutPlan) rollsThroughRetirement() bool {
	r := &p.data
	if p.active() != r || p.coordinators.retiring() || r.state() != roleRolling {
		return false
	}
	c := r.candidate()
	if c < 0 || r.members[c].name == p.main || !p.retiringMainStuck() {
		return false
	}
	for i := c + 1; i < int(max(r.returned, r.set.Span)); i++ {
		if i < len(r.members) {
			continue // a survivor released already (releasedWait)
		}
		if !p.v.dataRegistered(topology.DataInstanceName(topology.FirstDataOrdinal + i)) {
			continue // retired already: its pod is the shrink's, whatever it runs
		}
		if pod, ok := r.pods[i]; !ok || !r.updated(pod) || !pod.Ready || pod.Terminating {
			return false
		}
	}
	return true
}

// retiringMainStuck: the MAIN retires and no survivor is proven able to take it over, so the
// scale-down waits (and this pass's plan hands nothing over, beside which a release could not go).
func (p *rolloutPlan) retiringMainStuck() bool {
	if p.v == nil || p.main == "" {
		return false
	}
	if _, retires := topology.Find(retiringMembers(p.in.Declared, *p.v).data, p.main); !retires {
		return false
	}
	candidates, _ := caughtUpSurvivors(p.in.Declared, *p.v, p.main)
	return len(candidates) == 0
}

// releaseDownPod releases a candidate that is not Ready: it is down already, so replacing it
// cannot take a second pod down — unless it is the MAIN or the leader, whose move belongs to the
// coordinators' failover.
func (p *rolloutPlan) releaseDownPod(step *RolloutStep, r *rolloutRole, c int) {
	m := r.members[c]
	switch {
	case p.v == nil:
		p.waitOn(step, &gateWait{what: "the coordinators' view of the cluster (no ready leader answered)"})
	case p.mayLead(r, m):
		p.waitOn(step, &gateWait{what: fmt.Sprintf("the coordinators to fail over from %s, whose pod %s is not Ready", m.name, m.pod)})
	default:
		p.release(step, r, c, " (it is not Ready)")
	}
}

// mayLead: the member is the MAIN or the leader, or its row reports itself so (a view may show
// two leaders, or two MAINs, while an election or a failover settles): its pod is not released
// until the coordinators have moved that role.
func (p *rolloutPlan) mayLead(r *rolloutRole, m rolloutMember) bool {
	if r.kind == topology.RoleData {
		return m.name == p.main || p.v.data[m.name].Role == memgraph.RoleMain
	}
	return p.v.leaders[m.name]
}

// releaseOrHandOver releases the candidate, or first moves the MAIN or the leadership off it —
// in an upgrade, MAIN to the data pod rolled last before anything else.
func (p *rolloutPlan) releaseOrHandOver(step *RolloutStep, r *rolloutRole, c int) {
	m := r.members[c]
	if to, move := p.mainMoveFirst(r); move && r.kind == topology.RoleData && len(r.members) > 1 && p.upgrading() && !p.retiring() {
		p.moveMainFirst(step, to)
		return
	}
	switch {
	case r.kind == topology.RoleData && m.name == p.main && len(r.members) == 1:
		p.release(step, r, c, fmt.Sprintf(" in place: %s is the only data instance, so writes pause until it is back (there is no replica to hand MAIN to)", m.name))
	case r.kind == topology.RoleData && m.name == p.main:
		to, why := p.handoverTarget(r, -1)
		if to == "" {
			step.Reason = v1alpha1.ReasonRolloutBlocked
			step.Message = p.withCounts(fmt.Sprintf("cannot replace %s (%s): it is MAIN and %s", m.pod, m.name, why))
			return
		}
		step.Handover = &Handover{From: m.name, To: to}
		p.inProgress(step, fmt.Sprintf("switchover %s → %s, then replace %s", m.name, to, m.pod))
	case r.kind == topology.RoleCoordinator && m.name == p.v.leader:
		step.Yield = true
		p.inProgress(step, fmt.Sprintf("yielding leadership of %s (Raft picks the successor), then replace %s", m.name, m.pod))
	case r.kind == topology.RoleCoordinator && p.v.leaders[m.name]:
		p.waitOn(step, &gateWait{what: fmt.Sprintf("a settled leader (%s reports itself leader but %s answered as leader)", m.name, p.v.leader)})
	case p.mayLead(r, m):
		p.waitOn(step, &gateWait{what: fmt.Sprintf("a single MAIN (%s reports itself MAIN besides %s)", m.name, p.main)})
	default:
		p.release(step, r, c, "")
	}
}

func (p *rolloutPlan) release(step *RolloutStep, r *rolloutRole, c int, note string) {
	p.setPartition(step, r, int32(c))
	m := r.members[c]
	doing := fmt.Sprintf("replacing %s (%s)%s", m.pod, m.name, note)
	if next := p.stepAfter(r, c); next != "" {
		doing += "; next: " + next
	}
	p.inProgress(step, doing)
}

func (p *rolloutPlan) setPartition(step *RolloutStep, r *rolloutRole, partition int32) {
	if r.kind == topology.RoleData {
		step.Partitions.DataInstances = partition
	} else {
		step.Partitions.Coordinators = partition
	}
}

// handoverTarget is the survivor to hand MAIN to: one proven caught up and, when there is such
// a one, not on a cordoned node; among those preferring one already at the new revision (so MAIN
// moves once per rollout) — spec.preferredMain first when it is one — else the lowest ordinal. A message
// predicting a later step counts the pod at index releasing (-1: none) as updated.
func (p *rolloutPlan) handoverTarget(r *rolloutRole, releasing int) (string, string) {
	candidates, why := caughtUpSurvivors(p.in.Declared, *p.v, p.main)
	if len(candidates) == 0 {
		return "", why
	}
	updated := func(name string) bool {
		for i, m := range r.members {
			if pod, ok := r.pods[i]; m.name == name && (i == releasing || ok && r.updated(pod)) {
				return true
			}
		}
		return false
	}
	if schedulable := slices.DeleteFunc(slices.Clone(candidates), func(name string) bool {
		return p.onCordonedNode(r, name)
	}); len(schedulable) > 0 {
		candidates = schedulable // a drain would only move MAIN again
	}
	if to := p.in.Declared.PreferredMain; slices.Contains(candidates, to) && updated(to) {
		return to, "" // spec.preferredMain, so that no switchover has to follow
	}
	for _, name := range candidates {
		if updated(name) {
			return name, ""
		}
	}
	return candidates[0], ""
}

// onCordonedNode says whether the member called name has a pod on a cordoned node.
func (p *rolloutPlan) onCordonedNode(r *rolloutRole, name string) bool {
	for i, m := range r.members {
		if pod, ok := r.pods[i]; m.name == name && ok {
			return pod.Node != "" && p.in.CordonedNodes[pod.Node]
		}
	}
	return false
}

// gateWait is what keeps the next pod from being released.
type gateWait struct {
	member, pod string
	what        string // what is awaited, e.g. "to be Ready"
	// released is the pod awaited; stuckable says the rollout replaced it (it is at the new
	// revision, above the next pod), so it counts as stuck once spec.rollout.stepTimeout has
	// passed since its creation.
	released  RolloutPod
	stuckable bool
	// blocked says why no release can happen at all without a human (RolloutBlocked).
	blocked string
}

// releasedWait checks the pods above the candidate — those the rollout released — at the
// level of Kubernetes: each is back (exists, not terminating) and Ready.
func (p *rolloutPlan) releasedWait(r *rolloutRole, c int) *gateWait {
	for i := c + 1; i < len(r.members); i++ {
		if w := podWait(r, i); w != nil {
			return w
		}
	}
	return nil
}

func podWait(r *rolloutRole, i int) *gateWait {
	m := r.members[i]
	pod, ok := r.pods[i]
	w := &gateWait{member: m.name, pod: m.pod, released: pod, stuckable: ok && r.updated(pod)}
	switch {
	case !ok:
		w.what = "to be created"
	case pod.Terminating:
		w.what = "to be replaced"
	case !pod.Ready:
		w.what = "to be Ready"
	default:
		return nil
	}
	return w
}

// clusterWait checks everything but the candidate before it is released: every declared
// pod of both roles Ready, a ready leader's view, every declared member registered and up, a
// MAIN, and every replaced data replica caught up.
func (p *rolloutPlan) clusterWait(r *rolloutRole, c int) *gateWait {
	for _, role := range []*rolloutRole{&p.data, &p.coordinators} {
		for i := range role.members {
			if w := podWait(role, i); w != nil {
				w.stuckable = false // not one this step released: it is the cluster that waits
				if role == r && i < c && role.superseded(role.pods[i]) {
					w.blocked = fmt.Sprintf("%s (%s) is not Ready at a revision the spec no longer asks for, below %s, which the "+
						"partition must release first while no other pod may be down: delete pod %s and it comes back at the "+
						"current revision", w.pod, w.member, r.members[c].pod, w.pod)
				}
				return w
			}
		}
	}
	if p.v == nil {
		return &gateWait{what: "the coordinators' view of the cluster (no ready leader answered)"}
	}
	for _, role := range []*rolloutRole{&p.data, &p.coordinators} {
		for i, m := range role.members {
			// The candidate's own health does not matter (releasing it takes nothing more down),
			// but it is registered first: no release races a registration of the same member.
			if what := p.memberDown(role, m); what != "" && !(role == r && i == c && p.registered(role, m)) {
				return p.memberWait(role, i, what, role == r && i > c)
			}
		}
	}
	// No step of either role while the cluster has no MAIN: the plan is electing one, and a
	// yield or a coordinator down would hold up the election that serves writes again.
	if p.main == "" {
		return &gateWait{what: "a MAIN (the coordinators have none right now)"}
	}
	if r.kind != topology.RoleData {
		return nil
	}
	return p.replacedReplicasBehind(r, c)
}

// registered: the member is registered with the coordinators (a coordinator ADDed).
func (p *rolloutPlan) registered(role *rolloutRole, m rolloutMember) bool {
	if role.kind == topology.RoleData {
		return p.v.dataRegistered(m.name)
	}
	return p.v.coordinatorRegistered(m.name)
}

// memberDown says why a declared member is not back in the cluster, or "".
func (p *rolloutPlan) memberDown(role *rolloutRole, m rolloutMember) string {
	row := p.v.data[m.name]
	if role.kind == topology.RoleCoordinator {
		row = p.v.coordinators[m.name]
	}
	switch {
	case !p.registered(role, m):
		return "to be registered with the coordinators"
	case row.Health != memgraph.HealthUp:
		return "to be up in the leader's view (it is " + row.Health + ")"
	}
	return ""
}

// memberWait waits for the member at index i of role; released says the rollout replaced its
// pod (it lies above the candidate), which then counts as stuck after the step timeout.
func (p *rolloutPlan) memberWait(role *rolloutRole, i int, what string, released bool) *gateWait {
	m := role.members[i]
	pod, ok := role.pods[i]
	return &gateWait{member: m.name, pod: m.pod, what: what, released: pod,
		stuckable: released && ok && role.updated(pod)}
}

// replacedReplicasBehind checks that every replica above the candidate (each replaced by this
// rollout) is proven caught up with the MAIN on every database.
func (p *rolloutPlan) replacedReplicasBehind(r *rolloutRole, c int) *gateWait {
	databases, why := mainDatabases(*p.v, p.main)
	for i := c + 1; i < len(r.members); i++ {
		m := r.members[i]
		if m.name == p.main {
			continue
		}
		what := why
		if what == "" {
			what = notCaughtUp(*p.v, p.main, m.name, databases)
		}
		if what != "" {
			return p.memberWait(r, i, "to catch up with MAIN "+p.main+" ("+what+")", true)
		}
	}
	return nil
}

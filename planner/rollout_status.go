package planner

import (
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The Updated condition's messages. Each is deterministic for one observation (no "ago", no
// clock readings beyond a pod's own creationTimestamp): a status that changed on every sync
// would make Metacontroller sync again at once.

func (p *rolloutPlan) upToDateMessage() string {
	_, total := p.counts()
	if total == 0 {
		return "no pod to update yet"
	}
	return fmt.Sprintf("all %d pods run their StatefulSet's current pod template", total)
}

// inProgress sets RolloutInProgress with what the rollout does now and how far it is.
func (p *rolloutPlan) inProgress(step *RolloutStep, doing string) {
	step.Reason = v1alpha1.ReasonRolloutInProgress
	step.Message = p.withCounts(doing)
}

// waitOn reports what keeps the next pod from being released: RolloutStuck when it is a pod
// this rollout replaced and spec.rollout.stepTimeout has passed since its creation.
func (p *rolloutPlan) waitOn(step *RolloutStep, w *gateWait) {
	subject := w.what
	if w.member != "" {
		subject = fmt.Sprintf("%s (%s) %s", w.pod, w.member, w.what)
	}
	if w.blocked != "" {
		step.Reason = v1alpha1.ReasonRolloutBlocked
		step.Message = p.withCounts("cannot go on: " + w.blocked)
		return
	}
	if created := w.released.Created; w.stuckable && !created.IsZero() && p.in.Now.Sub(created.Time) > p.in.StepTimeout.Duration {
		at, _ := created.MarshalQueryParameter() // RFC 3339, UTC
		step.Reason = v1alpha1.ReasonRolloutStuck
		step.Message = p.withCounts(fmt.Sprintf("stuck: %s was created at the new revision at %s and is still waiting %s "+
			"after spec.rollout.stepTimeout (%s); nothing further is replaced until it recovers or the spec changes",
			w.pod, at, w.what, p.in.StepTimeout.Duration))
		return
	}
	msg := "waiting for " + subject
	if next := p.nextStep(); next != "" {
		msg += "; next: " + next
	}
	p.inProgress(step, msg)
}

// withCounts appends how many declared pods of both roles run their update revision.
func (p *rolloutPlan) withCounts(msg string) string {
	updated, total := p.counts()
	return fmt.Sprintf("%s; %d of %d pods updated", msg, updated, total)
}

func (p *rolloutPlan) counts() (updated, total int) {
	du, dt := p.data.counts()
	cu, ct := p.coordinators.counts()
	return du + cu, dt + ct
}

// nextStep describes what happens to the active role's candidate once the gates open.
func (p *rolloutPlan) nextStep() string {
	r := p.active()
	if r == nil || r.state() != roleRolling {
		return ""
	}
	return p.describeStep(r, r.candidate(), -1)
}

// stepAfter describes the release that follows the one of index c in r: the next candidate
// below it, else the coordinators' first when the data instances are done with c.
func (p *rolloutPlan) stepAfter(r *rolloutRole, c int) string {
	if next := r.candidateBelow(c); next >= 0 {
		return p.describeStep(r, next, c)
	}
	if r == &p.data && p.coordinators.state() == roleRolling {
		return p.describeStep(&p.coordinators, p.coordinators.candidate(), -1)
	}
	return ""
}

// describeStep says how the pod at index i of r will be released, as things stand once the pod
// at index releasing (-1: none) is back at the new revision.
func (p *rolloutPlan) describeStep(r *rolloutRole, i, releasing int) string {
	if i < 0 {
		return ""
	}
	m := r.members[i]
	if to, move := p.mainMoveFirst(r); move && p.v != nil && r.kind == topology.RoleData && len(r.members) > 1 && p.upgrading() {
		return moveMessage(p.main, to)
	}
	switch {
	case p.v != nil && r.kind == topology.RoleData && m.name == p.main && len(r.members) > 1:
		to, _ := p.handoverTarget(r, releasing)
		if to == "" {
			to = "a caught-up replica"
		}
		return fmt.Sprintf("switchover %s → %s, then replace %s", m.name, to, m.pod)
	case p.v != nil && r.kind == topology.RoleCoordinator && m.name == p.v.leader:
		return fmt.Sprintf("yield leadership of %s, then replace %s", m.name, m.pod)
	}
	return fmt.Sprintf("replace %s (%s)", m.pod, m.name)
}

// version is the image every live pod of both roles runs, or "" while they differ.
func (p *rolloutPlan) version() string {
	image := ""
	for _, set := range []RolloutSet{p.in.Data, p.in.Coordinators} {
		for _, pod := range set.Pods {
			switch {
			case pod.Terminating:
			case image == "":
				image = pod.Image
			case pod.Image != image:
				return ""
			}
		}
	}
	return image
}

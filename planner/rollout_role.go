package planner

import (
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// rolloutMember is one declared member of a role, at its index.
type rolloutMember struct {
	name string // instance_<n> or coordinator_<id>
	pod  string
}

// rolloutRole is one role's StatefulSet, its pods by index and its declared members.
type rolloutRole struct {
	kind     string // topology.RoleData or topology.RoleCoordinator
	set      RolloutSet
	members  []rolloutMember // declared, by index
	returned int32           // the replica count this sync returns
	pods     map[int]RolloutPod
	record   topology.TemplateRecord // the record this sync returns on the set (NextTemplateRecord)
}

func newRolloutRole(kind string, set RolloutSet, members []rolloutMember, returned int32) rolloutRole {
	r := rolloutRole{kind: kind, set: set, members: members, returned: returned, pods: make(map[int]RolloutPod, len(set.Pods))}
	for _, pod := range set.Pods {
		r.pods[pod.Index] = pod
	}
	return r
}

func dataMembers(d topology.Declared) []rolloutMember {
	out := make([]rolloutMember, 0, len(d.DataInstances))
	for _, di := range d.DataInstances {
		out = append(out, rolloutMember{name: di.Name, pod: di.Pod})
	}
	return out
}

func coordinatorMembers(d topology.Declared) []rolloutMember {
	out := make([]rolloutMember, 0, len(d.Coordinators))
	for _, c := range d.Coordinators {
		out = append(out, rolloutMember{name: c.Name, pod: c.Pod})
	}
	return out
}

type roleState int

const (
	// roleAbsent: the StatefulSet does not exist yet; nothing to roll.
	roleAbsent roleState = iota
	// roleComplete: every pod runs the update revision.
	roleComplete
	// roleStale: the update revision does not describe the template this sync returns.
	roleStale
	// roleRolling: some pod is not at the update revision, or a released one is not back.
	roleRolling
)

// state classifies the role. Complete means every live declared pod is at the update revision
// and the StatefulSet controller has recorded the update as complete (status.currentRevision is
// the update revision, which it sets once every pod is updated and Ready): until then a pod that
// is missing or not Ready may be one the rollout released, still on its way back.
func (r *rolloutRole) state() roleState {
	switch {
	case !r.set.Exists:
		return roleAbsent
	case len(r.set.Pods) == 0 && (r.set.UpdateRevision == "" || r.updateComplete()):
		// A new set: nothing runs, nothing to replace. (A set whose every pod is gone in the
		// middle of an update is rolling: they must come back at the new revision.)
		return roleComplete
	case r.set.TemplateChanging || r.set.UpdateRevision == "" ||
		r.set.ObservedGeneration < min(r.templateGeneration(), r.set.Generation):
		return roleStale
	}
	for i := range r.members {
		if pod, ok := r.pods[i]; ok && !r.updated(pod) {
			return roleRolling
		}
	}
	if r.updateComplete() {
		return roleComplete
	}
	return roleRolling
}

// pending: the role has pods to roll (stale or rolling).
func (r *rolloutRole) pending() bool {
	st := r.state()
	return st == roleStale || st == roleRolling
}

func (r *rolloutRole) updated(pod RolloutPod) bool { return pod.Revision == r.set.UpdateRevision }

// superseded: an existing pod at neither the update nor the current revision — one a rollout
// created before the spec changed again (a rollback).
func (r *rolloutRole) superseded(pod RolloutPod) bool {
	return pod.Revision != "" && pod.Revision != r.set.UpdateRevision && pod.Revision != r.set.CurrentRevision
}

// templateGeneration is the generation with which the set's pod template arrived: 1 for a set
// this sync creates, the next one for a template this sync changes (Metacontroller's update
// bumps it by one), else the annotation's, or the current generation when it has none. A
// generation that never came (the hash changed but not the spec) is harmless: freshness needs
// the lower of it and the current generation.
func (r *rolloutRole) templateGeneration() int64 {
	s := r.set
	switch {
	case !s.Exists:
		return 1
	case s.TemplateChanging:
		return s.Generation + 1
	case s.TemplateGeneration > 0:
		return s.TemplateGeneration
	}
	return s.Generation
}

// retiring: the StatefulSet holds (or is still shedding) members beyond the declared count.
func (r *rolloutRole) retiring() bool {
	declared := int32(len(r.members))
	return r.returned > declared || r.set.Span > declared
}

// hold is the partition that keeps every existing pod: the number of pods the set has (so that
// new members of a growth start at the new revision), or the returned replicas when lower.
func (r *rolloutRole) hold() int32 {
	if r.set.Span == 0 || r.set.Span >= r.returned {
		return r.returned
	}
	return r.set.Span
}

// candidate is the index of the highest live declared pod not at the update revision: the next
// pod to release, or -1 when none is left.
func (r *rolloutRole) candidate() int { return r.candidateBelow(len(r.members)) }

// candidateBelow is the highest live declared pod below index limit not at the update revision.
func (r *rolloutRole) candidateBelow(limit int) int {
	for i := limit - 1; i >= 0; i-- {
		if pod, ok := r.pods[i]; ok && !pod.Terminating && !r.updated(pod) {
			return i
		}
	}
	return -1
}

// restingPartition is the partition when this sync releases nothing new: the returned count for
// a retiring role (no retiring pod is released), hold for a complete or stale role, and for a
// rolling one just above the candidate, so that every released pod stays released.
func (r *rolloutRole) restingPartition() int32 {
	switch st := r.state(); {
	case r.retiring() || st == roleAbsent:
		return r.returned
	case st == roleRolling:
		return min(int32(r.candidate()+1), r.returned)
	}
	return r.hold()
}

// updateComplete: the StatefulSet controller itself completed the update (or never had one).
func (r *rolloutRole) updateComplete() bool { return r.set.CurrentRevision == r.set.UpdateRevision }

// counts are the declared pods back at the update revision (Ready), and the declared pods.
func (r *rolloutRole) counts() (updated, total int) {
	if st := r.state(); st == roleStale || st == roleAbsent {
		return 0, len(r.members)
	}
	for i := range r.members {
		if pod, ok := r.pods[i]; ok && r.updated(pod) && pod.Ready && !pod.Terminating {
			updated++
		}
	}
	return updated, len(r.members)
}

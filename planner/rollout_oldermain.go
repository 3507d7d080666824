package planner

import (
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// Older replicas of a newer MAIN. A MAIN on a pod the rollout has replaced already runs the newer
// version when the coordinators failed over to it (its predecessor's pod died mid-upgrade), and a
// newer MAIN cannot replicate to an older replica (src/rpc/utils.hpp 29–87): every data pod still
// at an older version receives nothing from it — a SYNC one makes every write fail with a
// ReplicationException — and a pod of one that dies comes back at the old revision, older again.
// Such pods hold nothing the MAIN lacks (the failover chose the most up-to-date instance) and
// serve no write, so the rollout releases all of them at once, without the gates that protect
// pods still in sync: the partition goes down to the lowest of them, and the StatefulSet
// controller replaces them one at a time, highest first. Only pods older than the MAIN, from the
// top down to the first that is not, are released; the MAIN's own pod is never among them.

// olderThanMainFloor is the partition that releases every live data pod below the update
// revision that runs an older known version than the MAIN, from the highest index down to the
// first that does not, and the members it releases; -1 when there is none, when the MAIN's pod
// is not at the update revision, or when the rollout is refused, held (stale) or waits for a
// scale-down.
func (p *rolloutPlan) olderThanMainFloor() (int32, []string) {
	r := &p.data
	if p.v == nil || p.main == "" || r.state() != roleRolling || p.retiring() || p.refused() != nil {
		return -1, nil
	}
	mainVersion, ok := p.mainPodVersion()
	if !ok {
		return -1, nil
	}
	floor, released := -1, []string(nil)
	for i := len(r.members) - 1; i >= 0; i-- {
		pod, exists := r.pods[i]
		if !exists || pod.Terminating || r.updated(pod) {
			continue
		}
		running, known := version(pod.Image)
		if !known || running.Compare(mainVersion) >= 0 || r.members[i].name == p.main {
			break
		}
		floor, released = i, append(released, r.members[i].pod)
	}
	return int32(floor), released
}

// mainPodVersion is the known version of the MAIN's pod when that pod runs the update revision.
func (p *rolloutPlan) mainPodVersion() (memgraph.Version, bool) {
	r := &p.data
	for i, m := range r.members {
		if pod, ok := r.pods[i]; ok && m.name == p.main && r.updated(pod) && !pod.Terminating {
			return version(pod.Image)
		}
	}
	return memgraph.Version{}, false
}

// releaseOlderThanMain lowers the data partition to olderThanMainFloor when this sync runs no Bolt
// step, and says so in the Updated condition.
func (p *rolloutPlan) releaseOlderThanMain(step *RolloutStep) {
	floor, pods := p.olderThanMainFloor()
	if floor < 0 || floor >= step.Partitions.DataInstances || len(step.Commands()) > 0 {
		return
	}
	step.Partitions.DataInstances = floor
	mainVersion, _ := p.mainPodVersion()
	p.inProgress(step, fmt.Sprintf("replacing %s at once: MAIN %s runs Memgraph %s, which cannot replicate to their older version",
		strings.Join(pods, ", "), p.main, mainVersion))
	if phase := p.upgradePhase(&p.data, int(floor)); phase != "" {
		step.Message = phase + "; " + step.Message
	}
}

package hooks

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// podObservation is what topology.PodProblems reads of a Pod: its readiness (as readPod judged
// it), its PodScheduled condition, and why each init container and container waits.
func podObservation(p *wire.Object, ready bool) topology.PodObservation {
	o := topology.PodObservation{Name: p.Metadata.Name, Ready: ready}
	for _, cond := range p.Status.Conditions {
		if cond.Type == string(corev1.PodScheduled) {
			o.Scheduled = topology.PodCondition{Status: corev1.ConditionStatus(cond.Status), Reason: cond.Reason, Message: cond.Message}
		}
	}
	for _, statuses := range [][]wire.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, c := range statuses {
			o.Containers = append(o.Containers, topology.ContainerObservation{Name: c.Name,
				WaitingReason: c.State.Waiting.Reason, WaitingMessage: c.State.Waiting.Message, RestartCount: c.RestartCount})
		}
	}
	return o
}

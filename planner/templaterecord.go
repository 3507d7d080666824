package planner

import (
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Who asked for a pod-template change: the spec, or a release of the hook. Each StatefulSet
// carries the record of the MemgraphCluster generation and the hook release it was rendered
// from (topology.TemplateRecord). The hook renders a different template for an unchanged spec
// only when its own code changed, so a change that arrives while the generation is the one
// recorded and the template's stamps (a restart, a certificate that could not be reloaded) are
// the same is a hook release's. The record then marks the rollout pending on the set as the hook
// release's (HookChange) until it is done, however often the spec changes meanwhile without
// changing the template (a switchover, a window); a change that the spec or a restart brings
// while it waits makes the whole rollout the spec's, which rolls at once. A StatefulSet without a
// record was rendered by an earlier release.

// TemplateProvenance is what a sync knows of where one role's pod template comes from: the
// record its StatefulSet carries, and the stamps of the template observed and of the one this
// sync renders.
type TemplateProvenance struct {
	Observed       topology.TemplateRecord
	ObservedStamps topology.TemplateStamps
	Stamps         topology.TemplateStamps
}

// Restarting says that the template this sync renders carries other stamps than the observed
// one: a restart of every pod (memgraph.com/restartedAt, a certificate rotation) is asked for.
func (p TemplateProvenance) Restarting() bool { return p.ObservedStamps != p.Stamps }

// NextTemplateRecord is the record a sync returns on a role's StatefulSet, set as observed (its
// TemplateChanging says whether this sync changes the template), for the MemgraphCluster's
// generation: this release and this generation, and whether the rollout pending on the set
// after this sync is a hook release's alone.
func NextTemplateRecord(set RolloutSet, p TemplateProvenance, generation int64) topology.TemplateRecord {
	next := topology.TemplateRecord{SpecGeneration: generation, Release: topology.TemplateRelease}
	if !set.Exists {
		return next // a new set: every pod starts at the template
	}
	before := set
	before.TemplateChanging = false
	if !set.TemplateChanging {
		next.HookChange = p.Observed.HookChange && rolloutPending(set)
		return next
	}
	specAsked := p.Restarting() || p.Observed.SpecGeneration != 0 && p.Observed.SpecGeneration != generation
	next.HookChange = !specAsked && (!rolloutPending(before) || p.Observed.HookChange)
	return next
}

// rolloutPending says whether a pod of the set may still have to roll: the template changes in
// this sync, the StatefulSet controller has not yet observed the generation its template arrived
// with (its revisions may describe the template before), it has not recorded the update as
// complete, or a live pod runs another revision.
func rolloutPending(s RolloutSet) bool {
	r := rolloutRole{set: s}
	if s.TemplateChanging || s.UpdateRevision == "" || s.ObservedGeneration < min(r.templateGeneration(), s.Generation) ||
		s.CurrentRevision != s.UpdateRevision {
		return true
	}
	for _, pod := range s.Pods {
		if !pod.Terminating && pod.Revision != s.UpdateRevision {
			return true
		}
	}
	return false
}

// NextAgentPin is the backup agent's image the data pods are to run: the pinned one as long as
// the hook speaks its API and no restart of every pod is asked for (restarting), else the hook's
// own (hookImage), which serves topology.AgentProtocol. So a hook release does not by itself
// restart the data pods; an agent whose API the hook no longer speaks is replaced like any
// template change of a hook release (in a maintenance window, when the spec declares windows).
func NextAgentPin(pinned topology.AgentPin, hookImage string, restarting bool) topology.AgentPin {
	if pinned.Image != "" && pinned.Protocol >= topology.OldestAgentProtocol && !restarting {
		return pinned
	}
	return topology.AgentPin{Image: hookImage, Protocol: topology.AgentProtocol}
}

package planner

import (
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Planned switchover (spec.preferredMain). The preferred MAIN is a standing preference, never a
// fight with the coordinators:
//
//   - With no MAIN at all, SET INSTANCE TO MAIN targets the preferred instance when it is an up
//     replica (else the usual lowest-ordinal one), so no switchover follows the election.
//   - A retiring MAIN is handed to the preferred instance when it is among the caught-up
//     survivors, else to the lowest-ordinal one; a later pass switches over.
//   - Otherwise, when another instance is MAIN, the plan hands MAIN over to the preferred
//     instance with the very Handover a retirement uses, once it is registered, up, a replica
//     and proven caught up on every database of the MAIN, and no alive instance — the old MAIN
//     included, which stays on as a replica — runs an older version. Until then nothing is demoted and
//     Progress.SwitchoverPending says how far it is. After a failover away from it this moves
//     MAIN back as soon as it has returned and caught up, never earlier.
//   - One handover per pass: a retirement's handover comes first, and the switchover waits for a
//     pass that has nothing else to hand over; a rollout's handover waits for the next pass when
//     a switchover is planned.
//   - With a rollout: while the preferred instance's pod does not run the pod template the data
//     StatefulSet rolls to, the switchover waits (the rollout would move MAIN off it again to
//     replace it); the rollout itself hands MAIN to the preferred instance when that one is a
//     caught-up survivor already at the new revision, else to its own choice.

// switchoverDue reports a declared preferred MAIN that is not the observed MAIN while some
// instance is.
func switchoverDue(d topology.Declared, m mainState) bool {
	return d.PreferredMain != "" && m.name != "" && m.name != d.PreferredMain
}

// planSwitchover hands MAIN over to the preferred instance when it is proven able to take it,
// and otherwise says why not (Progress.SwitchoverPending). handedOver: the plan already hands
// MAIN over this pass.
func planSwitchover(d topology.Declared, v rowIndex, m mainState, w *Workloads, handedOver bool, p *Progress) []Command {
	if !switchoverDue(d, m) || handedOver {
		return nil
	}
	to := d.PreferredMain
	missing := awaitsReplacement(w, to)
	if missing == "" {
		var databases []string
		databases, missing = mainDatabases(v, m.name)
		if missing == "" {
			missing = notCaughtUp(v, m.name, to, databases)
		}
		if missing == "" {
			// The old MAIN stays on as a replica: it is no exception to the version rule.
			missing = newerThanReplica(v, to, "")
		}
	}
	if missing != "" {
		p.SwitchoverPending = "switchover of MAIN from " + m.name + " to the preferred " + to + " waits: " + missing
		return nil
	}
	p.HandoverFrom, p.HandoverTo, p.Switchover = m.name, to, true
	return []Command{Handover{From: m.name, To: to}}
}

// preferred returns the declared preferred MAIN when it is among candidates, else the first
// candidate ("" when there is none).
func preferred(d topology.Declared, candidates []string) string {
	if d.PreferredMain != "" && slices.Contains(candidates, d.PreferredMain) {
		return d.PreferredMain
	}
	if len(candidates) == 0 {
		return ""
	}
	return candidates[0]
}

// awaitsReplacement says why a rollout still has to replace the named data instance's pod, or
// "" when the pod runs the revision the data StatefulSet rolls to, nothing is known of it, or the
// rollout waits for a maintenance window (the switchover does not wait for it).
func awaitsReplacement(w *Workloads, name string) string {
	ordinal, ok := topology.ParseDataInstanceName(name)
	if w == nil || !ok || !w.Data.Exists || w.Data.UpdateRevision == "" ||
		w.heldForWindow(NextTemplateRecord(w.Data, w.Data.Provenance, w.SpecGeneration)) {
		return ""
	}
	for _, pod := range w.Data.Pods {
		if pod.Index == ordinal-topology.FirstDataOrdinal && (w.Data.TemplateChanging || pod.Revision != w.Data.UpdateRevision) {
			return "its pod does not run the new pod template yet, and the rollout replaces it first"
		}
	}
	return ""
}

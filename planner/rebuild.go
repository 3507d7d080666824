package planner

import (
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// RebuildStep is what the plan does about topology.Declared.Rebuild (the memgraph.com/rebuild
// annotation): its phase and a message that says why, for the Rebuild condition and
// status.rebuild. Zero when no rebuild is declared.
type RebuildStep struct {
	Instance string
	Phase    v1alpha1.RebuildPhase
	Message  string
}

// Declared reports whether a rebuild is declared at all.
func (r RebuildStep) Declared() bool { return r.Instance != "" }

// planRebuild unregisters the data instance the annotation names, so that its volume can be
// replaced, and never registers it again while the annotation stands (planDataRegistration skips
// it). It sends nothing when:
//   - the annotation names no declared data instance, or a retiring one (Refused);
//   - the instance is the MAIN: the hook never rebuilds the MAIN, which holds the data every
//     replica recovers from; hand it over first (Refused: Memgraph refuses to unregister an
//     alive MAIN anyway, and a dead one is the coordinators' to fail over);
//   - no row reports a MAIN, or another MAIN handover runs in this pass: a replica may then
//     hold the latest writes (Waiting);
//   - the instance is the last Sync (or StrictSync) replica proven caught up with the MAIN
//     (caughtUpSyncReplicas): unregistering it would leave no synchronous copy of the data, so it
//     waits for another to catch up, or for the catch-up proofs to be read (Waiting).
//
// The UNREGISTER runs only after a fresh read proves the same (Precondition).
func planRebuild(d topology.Declared, v rowIndex, m mainState, p *Progress) []Command {
	name := d.Rebuild
	if name == "" {
		return nil
	}
	step, cmd := judgeRebuild(d, v, m, p)
	step.Instance = name
	p.Rebuild = step
	if cmd == nil {
		return nil
	}
	return []Command{cmd}
}

// judgeRebuild is planRebuild's decision: the step and, when the plan unregisters, its command.
func judgeRebuild(d topology.Declared, v rowIndex, m mainState, p *Progress) (RebuildStep, Command) {
	name := d.Rebuild
	if _, retiring := topology.Find(d.RetiringDataInstances, name); retiring {
		return refused("%s is being retired by the dataInstances scale-down, which unregisters it and deletes its pod; remove "+
			"the %s annotation", name, topology.AnnotationRebuild), nil
	}
	if _, ok := topology.Find(d.DataInstances, name); !ok {
		return refused("%s=%q names no declared data instance (instance_0 to instance_%d); correct or remove the annotation",
			topology.AnnotationRebuild, v1alpha1.Clip(name), len(d.DataInstances)-1), nil
	}
	row, registered := v.data[name]
	switch {
	case !registered:
		return held(name), nil
	case name == m.name || row.Role == memgraph.RoleMain:
		return refused("%s is MAIN: the hook never rebuilds the MAIN, whose data every replica recovers from; hand MAIN over to "+
			"a caught-up replica first (spec.preferredMain, or kubectl memgraph switchover), then rebuild %s", name, name), nil
	case m.name == "":
		return rebuildWaits("%s waits for a MAIN: none is reported, and %s may hold the latest writes", name, name), nil
	case p.HandoverFrom != "":
		return rebuildWaits("%s waits for the handover of MAIN from %s to %s planned in this pass", name, p.HandoverFrom, p.HandoverTo), nil
	}
	if why := lastSyncCopy(d, v, m.name, name); why != "" {
		return rebuildWaits("%s", why), nil
	}
	return RebuildStep{Phase: v1alpha1.RebuildUnregistering,
		Message: fmt.Sprintf("unregistering %s so that its volume can be replaced; it stays unregistered while %s names it",
			name, topology.AnnotationRebuild)}, UnregisterInstance{Name: name, Rebuild: true}
}

// lastSyncCopy says why unregistering target would take the cluster below its last Sync or
// StrictSync replica caught up with main, or "" when it would not: the MAIN's SHOW REPLICAS does
// not list target, lists it Async, or reports it other than ready on a database (it holds no
// complete copy), or another Sync replica is proven caught up (caughtUpSyncReplicas). Without
// the MAIN's SHOW REPLICAS, and for a target the MAIN reports ready without SHOW REPLICATION
// LAG, nothing is proven and the rebuild waits.
func lastSyncCopy(d topology.Declared, v rowIndex, main, target string) string {
	unproven := func(why string) string {
		return fmt.Sprintf("%s waits for the proof that it is not the last Sync replica caught up with MAIN %s: %s", target, main, why)
	}
	switch r := v.replicas; {
	case r == nil:
		return unproven("SHOW REPLICAS was not read on MAIN " + main)
	case r.Main != main:
		return unproven(fmt.Sprintf("SHOW REPLICAS was read on %s, not on MAIN %s", r.Main, main))
	case r.Problem != "":
		return unproven(fmt.Sprintf("SHOW REPLICAS on MAIN %s could not be read: %s", main, r.Problem))
	}
	row, listed := v.replicaRow[target]
	if !listed || !synchronous(row.SyncMode) || reportedBehind(row) {
		return ""
	}
	databases, missing := mainDatabases(v, main)
	if missing != "" {
		return unproven(missing)
	}
	others, why := caughtUpSyncReplicas(d, v, main, target, databases)
	if len(others) > 0 {
		return ""
	}
	return fmt.Sprintf("%s is the last Sync replica caught up with MAIN %s; unregistering it would leave no synchronous copy of the "+
		"data: waiting for another Sync replica to catch up (%s)", target, main, why)
}

// reportedBehind: the MAIN's SHOW REPLICAS reports the replica other than ready on a database.
func reportedBehind(row memgraph.Replica) bool {
	for _, db := range row.Databases {
		if db.Status != memgraph.ReplicaReady {
			return true
		}
	}
	return false
}

// caughtUpSyncReplicas are the registered Sync and StrictSync replicas other than except proven
// caught up with main on every database (notCaughtUp), in ordinal order, or why there are none.
func caughtUpSyncReplicas(d topology.Declared, v rowIndex, main, except string, databases []string) ([]string, string) {
	var out, why []string
	for _, di := range d.DataInstances {
		if di.Name == main || di.Name == except {
			continue
		}
		row, listed := v.replicaRow[di.Name]
		switch {
		case !listed:
			if _, registered := v.data[di.Name]; registered {
				why = append(why, fmt.Sprintf("MAIN %s's SHOW REPLICAS does not list %s", main, di.Name))
			}
			continue
		case !synchronous(row.SyncMode):
			continue
		}
		if reason := notCaughtUp(v, main, di.Name, databases); reason != "" {
			why = append(why, reason)
			continue
		}
		out = append(out, di.Name)
	}
	if len(out) == 0 && len(why) == 0 {
		return nil, "no other Sync replica is registered"
	}
	return out, strings.Join(why, "; ")
}

// synchronous reports whether a SHOW REPLICAS sync_mode keeps a synchronous copy of the data.
func synchronous(mode string) bool {
	return mode == memgraph.SyncModeSync || mode == memgraph.SyncModeStrictSync
}

// rebuildNeedsProof: the rebuild's target is registered beside a MAIN and is not the MAIN, so
// whether it is the last caught-up Sync replica must be proven (lastSyncCopy).
func rebuildNeedsProof(d topology.Declared, v rowIndex, m mainState) bool {
	if d.Rebuild == "" || m.name == "" || d.Rebuild == m.name {
		return false
	}
	_, declared := topology.Find(d.DataInstances, d.Rebuild)
	_, registered := v.data[d.Rebuild]
	return declared && registered
}

// rebuildHolds reports whether the declared data instance name is held unregistered for a
// rebuild: the annotation names it. planDataRegistration never registers it.
func rebuildHolds(d topology.Declared, name string) bool { return d.Rebuild != "" && d.Rebuild == name }

func refused(format string, args ...any) RebuildStep {
	return RebuildStep{Phase: v1alpha1.RebuildRefused, Message: fmt.Sprintf(format, args...)}
}

func rebuildWaits(format string, args ...any) RebuildStep {
	return RebuildStep{Phase: v1alpha1.RebuildWaiting, Message: fmt.Sprintf(format, args...)}
}

func held(name string) RebuildStep {
	return RebuildStep{Phase: v1alpha1.RebuildHeld, Message: fmt.Sprintf("%s is unregistered and stays so while %s names it: "+
		"replace its volume (delete PersistentVolumeClaim %s-<its pod> and the pod), then remove the annotation, and it is "+
		"registered again and recovered from the MAIN; kubectl memgraph rebuild does every step", name, topology.AnnotationRebuild,
		topology.LibVolume)}
}

// RebuildReport is the rebuild as a pass reports it: the plan's step when a plan stood on a
// view, else judged on the latest view alone — held when the leader's table does not list the
// instance, waiting otherwise (nothing is unregistered in a pass that stops before a plan).
// Zero when no rebuild is declared.
func RebuildReport(d topology.Declared, planned RebuildStep, latest View) RebuildStep {
	if d.Rebuild == "" {
		return RebuildStep{}
	}
	_, declared := topology.Find(d.DataInstances, d.Rebuild)
	if declared && latest.Leader != "" && !listsData(latest.Instances, d.Rebuild) &&
		(planned.Phase == "" || planned.Phase == v1alpha1.RebuildUnregistering) {
		return RebuildStep{Instance: d.Rebuild, Phase: v1alpha1.RebuildHeld, Message: held(d.Rebuild).Message}
	}
	if planned.Declared() {
		return planned
	}
	step := rebuildWaits("%s: the rebuild waits for a pass that plans on the coordinators' view (every declared pod Ready, a ready "+
		"leader)", d.Rebuild)
	if !declared {
		step = refused("%s=%q names no declared data instance (instance_0 to instance_%d); correct or remove the annotation",
			topology.AnnotationRebuild, v1alpha1.Clip(d.Rebuild), len(d.DataInstances)-1)
	}
	step.Instance = d.Rebuild
	return step
}

// listsData reports whether rows list a data instance called name.
func listsData(rows []memgraph.Instance, name string) bool {
	for _, r := range rows {
		if !r.IsCoordinator() && r.Name == name {
			return true
		}
	}
	return false
}

// Rebuild is the pass's rebuild report (RebuildReport on its plan and latest view).
func (out Outcome) Rebuild() RebuildStep {
	return RebuildReport(out.Declared, out.Plan.Progress.Rebuild, out.Latest)
}

// RebuildCondition is the Rebuild condition of a declared rebuild: True once held.
func RebuildCondition(r RebuildStep) Condition {
	reason := v1alpha1.RebuildPhaseReason(r.Phase)
	if r.Phase == v1alpha1.RebuildHeld {
		return isTrue(reason, "%s", r.Message)
	}
	return isFalse(reason, "%s", r.Message)
}

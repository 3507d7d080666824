package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Version rules of a rollout. The Memgraph version of a pod is read from its image's tag when
// the tag is one (X.Y.Z, optionally with a suffix); any other image is of unknown version and no
// rule applies to it (Workloads' warning says so).
//
//   - Downgrades: the spec's version older than one a Ready pod runs is refused unless the
//     MemgraphCluster carries memgraph.com/allow-downgrade "true" (Workloads.AllowDowngrade):
//     Memgraph v3.12.0 may not load snapshots and WAL written by a newer version
//     (src/storage/v2/durability/version.hpp 65–66), and a newer MAIN cannot replicate to an older
//     replica (src/rpc/utils.hpp 29–87).
//   - The 3.9 boundary: a change across Memgraph 3.9 from what a Ready pod runs is never
//     rolled: every coordinator's data
//     must be wiped (Memgraph's "migrating to v3.9 HA" procedure; tests/issu/test_upgrade.sh).
//   - A refused change holds every pod: both partitions at the returned replicas, so no pod is
//     replaced and one created by a growth or lost to a node starts at the current revision.
//   - Upgrades roll the MAIN's pod last, as Memgraph's own procedure does (tests/issu/
//     test_upgrade.sh ~860–884): before any data replica is released, MAIN is handed (old version
//     to old version, proven caught up) to the data pod the partition releases last, the lowest
//     ordinal not yet updated; then the replicas roll; then MAIN goes to an updated replica and
//     the old MAIN's pod is replaced. An older MAIN replicating to newer replicas works
//     throughout; a newer MAIN is made only once no other older instance is left.

// version is the Memgraph version of an image and whether it is known.
func version(image string) (memgraph.Version, bool) { return memgraph.ImageVersion(image) }

// refusal is the version rule that refuses this rollout, if any.
type refusal struct {
	reason  v1alpha1.ConditionReason
	message string
}

// refused says whether the spec may not be rolled onto the pods as they run now: intra-cluster
// TLS turned on or off (clusterTLSRefused), or the spec's version.
func (p *rolloutPlan) refused() *refusal {
	if r := p.clusterTLSRefused(); r != nil {
		return r
	}
	target, ok := version(p.in.Image)
	if !ok {
		return nil
	}
	newest, newestImage := memgraph.Version{}, ""
	for _, pod := range p.servingPods() {
		running, ok := version(pod.Image)
		if !ok {
			continue
		}
		if memgraph.CrossesHAMigration(running, target) {
			return &refusal{v1alpha1.ReasonUpgradeNeedsMigration, fmt.Sprintf(
				"not rolled: %s runs Memgraph %s and the spec asks for %s, across Memgraph 3.9, where every coordinator's "+
					"data must be wiped (Memgraph's procedure \"Migrating to v3.9 HA\"); follow it, or set spec.image back to %s",
				pod.Image, running, target, pod.Image)}
		}
		if running.Compare(target) > 0 && (newestImage == "" || running.Compare(newest) > 0) {
			newest, newestImage = running, pod.Image
		}
	}
	if newestImage == "" {
		return nil
	}
	if p.in.AllowDowngrade {
		return p.downgradeUnderNewerMain(target)
	}
	return &refusal{v1alpha1.ReasonDowngradeRefused, fmt.Sprintf(
		"not rolled: the spec asks for Memgraph %s but pods run %s (%s), a downgrade: an older Memgraph may not load the "+
			"snapshots and WAL a newer one wrote, and a newer MAIN cannot replicate to an older replica; set spec.image back "+
			"to %s, or annotate the MemgraphCluster %s=true to roll back anyway (take a backup first)",
		target, newest, newestImage, newestImage, topology.AnnotationAllowDowngrade)}
}

// downgradeUnderNewerMain refuses an allowed downgrade while the MAIN runs a version newer than
// the spec's: every data pod the rollout replaced would be an older replica of it, which cannot
// read a newer MAIN's replication messages (src/rpc/utils.hpp 29–87), and no replica so replaced
// could ever be proven caught up to take MAIN over. Only stopping every pod and starting them
// together at the older version gets there: hibernation (HibernationRolloutPending lets it
// begin). With MAIN at the spec's version or older, the pods roll as any change does.
func (p *rolloutPlan) downgradeUnderNewerMain(target memgraph.Version) *refusal {
	for i, m := range p.data.members {
		pod, ok := p.data.pods[i]
		if m.name != p.main || !ok {
			continue
		}
		if running, known := version(pod.Image); known && running.Compare(target) > 0 {
			return &refusal{v1alpha1.ReasonDowngradeNeedsHibernation, fmt.Sprintf(
				"not rolled while the cluster runs: the MAIN %s runs Memgraph %s (%s) and the spec asks for %s; a newer MAIN "+
					"cannot replicate to the older replicas a rolling downgrade would make, so every pod must stop and start "+
					"again at %s together: set spec.hibernate to true, then to false once the cluster is Hibernated, or set "+
					"spec.image back to %s", m.name, running, pod.Image, target, target, pod.Image)}
		}
	}
	return nil
}

// Downgrading: the MemgraphCluster allows downgrades and a Ready pod runs a known version newer
// than the spec's, a downgrade hibernation may carry out (every pod starts at the spec's pod
// template on waking).
func (w Workloads) Downgrading() bool {
	target, ok := version(w.Image)
	if !ok || !w.AllowDowngrade {
		return false
	}
	for _, pod := range slices.Concat(w.Data.Pods, w.Coordinators.Pods) {
		if running, known := version(pod.Image); pod.Ready && known && running.Compare(target) > 0 {
			return true
		}
	}
	return false
}

// servingPods are the Ready pods of both roles, terminating ones included: each has run
// Memgraph at its version and may have written its volume in that version's format. A pod that
// is not Ready does not count, so that the rollback of a rollout stuck on an image that never
// starts is not refused as a downgrade.
func (p *rolloutPlan) servingPods() []RolloutPod {
	var out []RolloutPod
	for _, pod := range slices.Concat(p.in.Data.Pods, p.in.Coordinators.Pods) {
		if pod.Ready {
			out = append(out, pod)
		}
	}
	return out
}

// refuse holds every pod of both roles and reports the refusal.
func (p *rolloutPlan) refuse(step *RolloutStep, r *refusal) {
	step.Partitions = topology.Partitions{Coordinators: p.coordinators.returned, DataInstances: p.data.returned}
	step.Reason = r.reason
	step.Message = p.withCounts(r.message)
}

// upgrading: the data pods roll onto a newer known version than one of them runs, so the MAIN's
// pod goes last.
func (p *rolloutPlan) upgrading() bool {
	target, ok := version(p.in.Image)
	if !ok {
		return false
	}
	for _, pod := range p.in.Data.Pods {
		if running, ok := version(pod.Image); ok && !p.data.updated(pod) && running.Compare(target) < 0 {
			return true
		}
	}
	return false
}

// lastToRoll is the index of the data pod the partition releases last: the lowest live one not
// at the update revision (-1 when none is left).
func (r *rolloutRole) lastToRoll() int {
	for i := range r.members {
		if pod, ok := r.pods[i]; ok && !pod.Terminating && !r.updated(pod) {
			return i
		}
	}
	return -1
}

// mainMoveFirst is the handover an upgrade makes before it releases a data replica: MAIN, on a
// pod not updated yet and older than the spec's version, goes to the pod rolled last, which runs
// the MAIN's very version. ok is false when MAIN is where it belongs already, on an updated pod or
// on no declared one, already runs the spec's version, or when the pod rolled last runs another
// version than the MAIN (a cluster left mixed, e.g. by a rollout superseded halfway): then a move
// could never be proven (a newer MAIN cannot replicate to it) or would leave the old MAIN older
// than the new one, and the rollout goes on in its plain order, every handover still bound by the
// version rule.
func (p *rolloutPlan) mainMoveFirst(r *rolloutRole) (to rolloutMember, ok bool) {
	last := r.lastToRoll()
	if last < 0 || r.members[last].name == p.main {
		return rolloutMember{}, false
	}
	target, known := version(p.in.Image)
	for i, m := range r.members {
		pod, exists := r.pods[i]
		if m.name != p.main || !exists || r.updated(pod) {
			continue
		}
		mine, ok := version(pod.Image)
		lastPod := r.pods[last]
		theirs, same := version(lastPod.Image)
		if known && ok && same && mine.Compare(target) < 0 && theirs.Compare(mine) == 0 {
			return r.members[last], true
		}
	}
	return rolloutMember{}, false
}

// moveMainFirst hands MAIN to the pod rolled last, once that instance is proven caught up and
// no alive instance is older (the old MAIN stays on as a replica until its pod's turn).
func (p *rolloutPlan) moveMainFirst(step *RolloutStep, to rolloutMember) {
	databases, why := mainDatabases(*p.v, p.main)
	if why == "" {
		why = notCaughtUp(*p.v, p.main, to.name, databases)
	}
	if why == "" {
		why = newerThanReplica(*p.v, to.name, "")
	}
	if why != "" {
		p.waitOn(step, &gateWait{what: fmt.Sprintf("%s to take MAIN over from %s before any data pod is replaced (%s)",
			to.name, p.main, why)})
		return
	}
	step.Handover = &Handover{From: p.main, To: to.name}
	p.inProgress(step, moveMessage(p.main, to)+", so that no newer MAIN ever replicates to an older replica; then the replicas' pods")
}

func moveMessage(main string, to rolloutMember) string {
	return fmt.Sprintf("switchover %s → %s, whose pod %s is replaced last", main, to.name, to.pod)
}

// upgradePhase names the step of an upgrade's data rollout (MAIN's pod last) for the Updated
// condition, "" when the data instances are not upgrading.
func (p *rolloutPlan) upgradePhase(r *rolloutRole, c int) string {
	if r.kind != topology.RoleData || p.v == nil || len(r.members) < 2 || !p.upgrading() {
		return ""
	}
	target, _ := version(p.in.Image)
	prefix := fmt.Sprintf("upgrade to Memgraph %s, MAIN's pod last: ", target)
	switch _, move := p.mainMoveFirst(r); {
	case move:
		return prefix + "step 1 of 3 (move MAIN to the pod replaced last)"
	case c >= 0 && (r.members[c].name == p.main || c == r.lastToRoll() && p.mainUpdated(r)):
		// The MAIN's pod is next, or MAIN has moved to an updated replica and the old MAIN's pod,
		// the last old one, is being replaced.
		return prefix + "step 3 of 3 (hand MAIN to an updated replica, replace the old MAIN's pod)"
	}
	return prefix + "step 2 of 3 (replace the replicas' pods)"
}

// mainUpdated: the MAIN's pod runs the update revision.
func (p *rolloutPlan) mainUpdated(r *rolloutRole) bool {
	for i, m := range r.members {
		if pod, ok := r.pods[i]; m.name == p.main && ok && r.updated(pod) {
			return true
		}
	}
	return false
}

// versionWarning names the images whose Memgraph version is unknown, so that no version rule
// applies to them, or "".
func versionWarning(w Workloads) string {
	var unknown []string
	note := func(image string) {
		if _, ok := version(image); !ok && image != "" && !slices.Contains(unknown, image) {
			unknown = append(unknown, image)
		}
	}
	note(w.Image)
	for _, set := range [...]*RolloutSet{&w.Coordinators, &w.Data} {
		for i := range set.Pods {
			note(set.Pods[i].Image)
		}
	}
	if len(unknown) == 0 {
		return ""
	}
	slices.Sort(unknown)
	if len(unknown) > maxUnknownImages {
		unknown = append(unknown[:maxUnknownImages], fmt.Sprintf("%d more", len(unknown)-maxUnknownImages))
	}
	return fmt.Sprintf("the Memgraph version of %s is unknown (the tag is not X.Y.Z): rolling upgrades apply no version rule "+
		"to it (MAIN's pod last, no downgrade, the 3.9 boundary)", strings.Join(unknown, ", "))
}

// maxUnknownImages bounds the images versionWarning names (a pod's image is any string).
const maxUnknownImages = 3

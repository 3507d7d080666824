package planner_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The rollout's invariants (package doc, "Rolling upgrades"), checked on every FuzzPlan input
// that has workloads. A pod is released when the returned partition lets the StatefulSet
// controller replace it: it is live (exists, not terminating), its index lies in
// [partition, returned replicas) and it is not at the revision the controller will give it —
// every pod when that revision is not known yet (the set is stale).

// rolloutRole is one role of the input as the invariants see it.
type rolloutRole struct {
	kind      string
	set       planner.RolloutSet
	declared  []string // member names by index
	returned  int32
	partition int32
}

func rolloutRoles(in fuzzInput, res planner.Plan) []rolloutRole {
	w := in.observed.Workloads
	var coords, data []string
	for _, c := range in.declared.Coordinators {
		coords = append(coords, c.Name)
	}
	for _, d := range in.declared.DataInstances {
		data = append(data, d.Name)
	}
	return []rolloutRole{
		{topology.RoleData, w.Data, data, res.Replicas.DataInstances, res.Rollout.Partitions.DataInstances},
		{topology.RoleCoordinator, w.Coordinators, coords, res.Replicas.Coordinators, res.Rollout.Partitions.Coordinators},
	}
}

// stale: the update revision does not describe the template the pods will get — the template
// changes in this sync, the revision is unknown, or the controller has not observed the
// generation the template arrived with.
func (r rolloutRole) stale() bool {
	s := r.set
	arrived := s.Generation
	if s.TemplateGeneration > 0 {
		arrived = s.TemplateGeneration
	}
	return s.TemplateChanging || s.UpdateRevision == "" || s.ObservedGeneration < min(arrived, s.Generation)
}

// retiring: the set holds, or is returned with, more pods than declared.
func (r rolloutRole) retiring() bool {
	n := int32(len(r.declared))
	return r.set.Span > n || r.returned > n
}

func (r rolloutRole) pod(i int) (planner.RolloutPod, bool) {
	for _, p := range r.set.Pods {
		if p.Index == i {
			return p, true
		}
	}
	return planner.RolloutPod{}, false
}

// released lists the pods the partition releases.
func (r rolloutRole) released() []planner.RolloutPod {
	if !r.set.Exists {
		return nil
	}
	var out []planner.RolloutPod
	for _, p := range r.set.Pods {
		if int32(p.Index) >= r.partition && int32(p.Index) < r.returned && !p.Terminating &&
			(r.stale() || p.Revision != r.set.UpdateRevision) {
			out = append(out, p)
		}
	}
	return out
}

// settled: the declared pod at index i exists, is not terminating and is Ready.
func (r rolloutRole) settled(i int) bool {
	p, ok := r.pod(i)
	return ok && !p.Terminating && p.Ready
}

// rolloutViolations lists every broken rollout invariant of res for in.
func rolloutViolations(f facts, res planner.Plan) []string {
	in := f.in
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if in.observed.Workloads == nil {
		if res.Rollout != (planner.RolloutStep{}) {
			bad("a rollout step %+v without workloads", res.Rollout)
		}
		return out
	}
	roles := rolloutRoles(in, res)
	type release struct {
		role rolloutRole
		pod  planner.RolloutPod
	}
	var releases []release
	retiring := false
	for _, r := range roles {
		if r.partition < 0 || r.partition > r.returned {
			bad("%s partition %d outside [0, %d]", r.kind, r.partition, r.returned)
		}
		retiring = retiring || r.retiring()
		for _, p := range r.released() {
			releases = append(releases, release{r, p})
		}
		if r.stale() && len(r.released()) > 0 {
			bad("%s: pods %v released while the set's update revision is stale", r.kind, r.released())
		}
	}
	if len(releases) > 1 {
		bad("%d pods released at once: %+v", len(releases), releases)
	}
	if f.versionRefused() && (res.Rollout.Handover != nil || res.Rollout.Yield) {
		bad("the rollout moves MAIN or the leadership for a refused version change")
	}
	rolloutCmds := res.Rollout.Commands()
	if len(rolloutCmds) > 0 && len(res.Commands) != len(rolloutCmds) {
		bad("the rollout's %v planned beside other commands (%d in all)", rolloutCmds, len(res.Commands))
	}
	if res.Rollout.Done() && res.Rollout.TargetVersion != "" || res.Rollout.InProgress() && res.Rollout.TargetVersion != fuzzImage {
		bad("reason %s with targetVersion %q", res.Rollout.Reason, res.Rollout.TargetVersion)
	}
	for _, rel := range releases {
		r, p := rel.role, rel.pod
		name := r.declared[p.Index]
		switch {
		case res.Rollout.Done():
			bad("%s released while the rollout reports itself done", name)
		case len(rolloutCmds) > 0:
			bad("%s released in the same sync as %v", name, rolloutCmds)
		case retiring && !f.releasableDuringScaleDown(roles, r, p):
			bad("%s released during a scale-down", name)
		case in.observed.Leader == "" || f.leaderNotReady:
			bad("%s released without a ready leader's view", name)
		}
		if r.kind == topology.RoleData && f.data[name].Role == memgraph.RoleMain && len(r.declared) > 1 {
			bad("%s released while it is MAIN of %d data instances", name, len(r.declared))
		}
		for _, cmd := range res.Commands {
			if h, ok := cmd.(planner.Handover); ok && (h.From == name || h.To == name) {
				bad("%s released in the same sync as %s, which moves MAIN to or from it", name, h)
			}
		}
		if f.versionRefused() {
			bad("%s released although the version change is refused (a downgrade without the annotation, or across 3.9)", name)
		}
		if r.kind == topology.RoleData && p.Ready && f.upgrading() && len(r.declared) > 1 && !f.mainGoesLast() {
			bad("%s released in an upgrade while MAIN %v, at the old version, is not on the pod rolled last", name, f.mains)
		}
		if r.kind == topology.RoleCoordinator && f.leaders[name] {
			bad("%s released while it is (or reports itself) leader", name)
		}
		out = append(out, f.releaseGates(roles, r, p)...)
	}
	return out
}

// releaseGates: a pod that is down already is released only once the pods above it in its role
// are back; a Ready one only while every other declared pod is Ready and every other declared
// member is registered and up (a data pod also needs a MAIN): never two pods down at once.
func (f facts) releaseGates(roles []rolloutRole, r rolloutRole, p planner.RolloutPod) []string {
	var out []string
	name := r.declared[p.Index]
	for i := p.Index + 1; i < len(r.declared); i++ {
		if !r.settled(i) {
			out = append(out, fmt.Sprintf("%s released while %s above it is not back", name, r.declared[i]))
		}
	}
	if !p.Ready {
		return out
	}
	for _, role := range roles {
		for i, member := range role.declared {
			row, ok := f.data[member]
			if role.kind == topology.RoleCoordinator {
				row, ok = f.coords[member]
			}
			if member == name {
				if !ok || !row.Registered() {
					out = append(out, fmt.Sprintf("%s (Ready) released before it is registered", name))
				}
				continue
			}
			if !role.settled(i) {
				out = append(out, fmt.Sprintf("%s (Ready) released while %s's pod is not Ready", name, member))
			}
			if !ok || !row.Registered() || row.Health != memgraph.HealthUp {
				out = append(out, fmt.Sprintf("%s (Ready) released while %s is not registered and up (%+v)", name, member, row))
			}
		}
	}
	if r.kind == topology.RoleData && len(f.mains) == 0 {
		out = append(out, fmt.Sprintf("%s (Ready) released while the cluster has no MAIN", name))
	}
	return out
}

// rollsLast: member is the declared data instance whose pod is live and not at the update
// revision, the lowest such (the one a partition releases last).
func (f facts) rollsLast(member string) bool {
	if f.in.observed.Workloads == nil {
		return false
	}
	r := rolloutRoles(f.in, planner.Plan{})[0]
	for i := range r.declared {
		if p, ok := r.pod(i); ok && !p.Terminating && p.Revision != r.set.UpdateRevision {
			return r.declared[i] == member
		}
	}
	return false
}

// upgrading: some live data pod not at the update revision runs an older known version than
// the spec's image.
func (f facts) upgrading() bool {
	w := f.in.observed.Workloads
	target, ok := memgraph.ImageVersion(w.Image)
	if !ok {
		return false
	}
	for _, p := range w.Data.Pods {
		if v, known := memgraph.ImageVersion(p.Image); known && p.Revision != w.Data.UpdateRevision && v.Compare(target) < 0 {
			return true
		}
	}
	return false
}

// versionRefused: a Ready pod of either role runs a known version across the 3.9 boundary from
// the spec's, or (without the downgrade annotation) a newer one.
func (f facts) versionRefused() bool {
	w := f.in.observed.Workloads
	target, ok := memgraph.ImageVersion(w.Image)
	if !ok {
		return false
	}
	for _, p := range slices.Concat(w.Data.Pods, w.Coordinators.Pods) {
		v, known := memgraph.ImageVersion(p.Image)
		if known && p.Ready && (memgraph.CrossesHAMigration(v, target) || v.Compare(target) > 0 && !w.AllowDowngrade) {
			return true
		}
	}
	return false
}

// releasableDuringScaleDown: a data replica's pod may be released while data members retire when
// the MAIN retires (its handover waits for a survivor the rollout must upgrade first), the
// partition releases no member that matters with it — every pod above it, retiring ones included,
// exists, is Ready and at the update revision, or belongs to a retiring member no longer
// registered — and no coordinator retires.
func (f facts) releasableDuringScaleDown(roles []rolloutRole, r rolloutRole, p planner.RolloutPod) bool {
	if r.kind != topology.RoleData || roles[1].retiring() || slices.Contains(f.mains, r.declared[p.Index]) ||
		!slices.ContainsFunc(f.mains, func(m string) bool { return f.retiringD[m] }) {
		return false
	}
	for i := p.Index + 1; i < int(max(r.returned, r.set.Span)); i++ {
		if _, registered := f.data[topology.DataInstanceName(topology.FirstDataOrdinal+i)]; i >= len(r.declared) && !registered {
			continue // retired already
		}
		pod, ok := r.pod(i)
		if !ok || pod.Revision != r.set.UpdateRevision || !pod.Ready || pod.Terminating {
			return false
		}
	}
	return true
}

// mainGoesLast: the MAIN row's pod is the one rolled last, or already updated.
func (f facts) mainGoesLast() bool {
	r := rolloutRoles(f.in, planner.Plan{})[0]
	for _, main := range f.mains {
		for i, name := range r.declared {
			if name != main {
				continue
			}
			if p, ok := r.pod(i); ok && p.Revision != r.set.UpdateRevision && !f.rollsLast(main) {
				return false
			}
		}
	}
	return true
}

// rollsNext: member is a declared member of role whose pod is live and not at the update
// revision, the highest such in its role (the only one a partition can release next).
func (f facts) rollsNext(role, member string) bool {
	if f.in.observed.Workloads == nil {
		return false
	}
	for _, r := range rolloutRoles(f.in, planner.Plan{}) {
		if r.kind != role {
			continue
		}
		for i := len(r.declared) - 1; i >= 0; i-- {
			if p, ok := r.pod(i); ok && !p.Terminating && p.Revision != r.set.UpdateRevision {
				return r.declared[i] == member
			}
		}
	}
	return false
}

// The rollout invariants catch the unsafe steps they are there for: each case breaks a seed's
// plan as a buggy planner would.
func TestRolloutInvariantsCatchUnsafeSteps(t *testing.T) {
	for _, tc := range []struct {
		seed, name string
		breakIt    func(*planner.Plan)
		want       []string
	}{
		{"rollout-release", "two data pods at once, the MAIN's among them",
			func(r *planner.Plan) { r.Rollout.Partitions.DataInstances = 0 },
			[]string{"2 pods released at once", "instance_0 released while it is MAIN of 2 data instances"}},
		{"rollout-release", "a partition beyond the replicas",
			func(r *planner.Plan) { r.Rollout.Partitions.DataInstances = 3 },
			[]string{"data partition 3 outside [0, 2]"}},
		{"rollout-handover", "the MAIN's pod released beside its handover",
			func(r *planner.Plan) { r.Rollout.Partitions.DataInstances = 1 },
			[]string{"instance_1 released in the same sync as", "instance_1 released while it is MAIN of 2 data instances"}},
		{"rollout-yield", "the leader's pod released instead of a yield",
			func(r *planner.Plan) {
				r.Rollout.Yield, r.Commands, r.Rollout.Partitions.Coordinators = false, nil, 2
			},
			[]string{"coordinator_3 released while it is (or reports itself) leader"}},
		{"retire", "a pod released during a scale-down",
			func(r *planner.Plan) { r.Rollout.Partitions.DataInstances = 0 },
			nil}, // at rest every pod runs the update revision: nothing to release, nothing to flag
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := decodeObservation(fuzzSeeds[tc.seed])
			res := planner.Decide(in.declared, in.observed)
			if v := violations(in, res); len(v) > 0 {
				t.Fatalf("the seed's own plan breaks invariants: %v", v)
			}
			tc.breakIt(&res)
			got := strings.Join(violations(in, res), "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("violations %q do not report %q", got, w)
				}
			}
			if tc.want == nil && got != "" {
				t.Errorf("violations %q for a partition that releases nothing", got)
			}
		})
	}
}

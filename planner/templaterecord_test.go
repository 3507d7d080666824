package planner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The fixtures' MemgraphCluster is at generation 7; a StatefulSet that recorded generation 7 was
// rendered for the spec as it is.
const generationNow = 7

var (
	recorded     = topology.TemplateRecord{SpecGeneration: generationNow, Release: "v0.1.9"}
	recordedOld  = topology.TemplateRecord{SpecGeneration: generationNow - 1, Release: "v0.1.9"}
	recordedHook = topology.TemplateRecord{SpecGeneration: generationNow, Release: "v0.1.9", HookChange: true}
	restarted    = topology.TemplateStamps{RestartedAt: "2026-03-04T05:00:00Z"}
	thisRelease  = topology.TemplateRecord{SpecGeneration: generationNow, Release: topology.TemplateRelease}
	hookPending  = topology.TemplateRecord{SpecGeneration: generationNow, Release: topology.TemplateRelease, HookChange: true}
)

// provenance is a set's provenance with its observed record; edits change the stamps.
func provenance(r topology.TemplateRecord, edits ...func(*TemplateProvenance)) TemplateProvenance {
	p := TemplateProvenance{Observed: r}
	for _, e := range edits {
		e(&p)
	}
	return p
}

// restartAsked: the template this sync renders carries a new memgraph.com/restartedAt.
func restartAsked(p *TemplateProvenance) { p.Stamps = restarted }

func TestNextTemplateRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  RolloutSet
		prov TemplateProvenance
		want topology.TemplateRecord
	}{
		{"a new StatefulSet: nothing is pending", RolloutSet{}, provenance(topology.TemplateRecord{}), thisRelease},
		{"converged, no change: the record follows the spec's generation and this release",
			set("nnn", settled), provenance(recordedOld), thisRelease},
		{"the template changes for the generation recorded: the hook release's change",
			set("nnn", settled, changing), provenance(recorded), hookPending},
		{"a StatefulSet without a record was rendered by an earlier release: its change is the hook's",
			set("nnn", settled, changing), provenance(topology.TemplateRecord{}), hookPending},
		{"the template changes with a new generation: the spec's change, which rolls",
			set("nnn", settled, changing), provenance(recordedOld), thisRelease},
		{"a restart changes the template: the user's, even for the generation recorded",
			set("nnn", settled, changing), provenance(recorded, restartAsked), thisRelease},
		{"a restart without a record of an earlier release: the user's",
			set("nnn", settled, changing), provenance(topology.TemplateRecord{}, restartAsked), thisRelease},
		{"a hook release's change waits: the mark stays while the pods are behind",
			set("ooo"), provenance(recordedHook), hookPending},
		{"it stays when the spec changes without changing the template (a switchover, a window)",
			set("ooo"), provenance(topology.TemplateRecord{SpecGeneration: generationNow - 1, HookChange: true}), hookPending},
		{"it stays until the controller has observed the template",
			set("nnn", unobserved), provenance(recordedHook), hookPending},
		{"it stays until the controller records the update as complete", set("nnn"), provenance(recordedHook), hookPending},
		{"it goes once the rollout is done", set("nnn", settled), provenance(recordedHook), thisRelease},
		{"another hook release while one waits: still the hook's",
			set("ooo", changing), provenance(recordedHook), hookPending},
		{"the spec changes the template while a hook release's change waits: the whole rollout is the spec's",
			set("ooo", changing), provenance(topology.TemplateRecord{SpecGeneration: generationNow - 1, HookChange: true}), thisRelease},
		{"a hook release's change arriving in the middle of the spec's rollout joins it",
			set("oon", changing), provenance(recorded), thisRelease},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NextTemplateRecord(tc.set, tc.prov, generationNow)); diff != "" {
				t.Errorf("NextTemplateRecord (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextAgentPin(t *testing.T) {
	const hookImage = "memgraph-hooks:v0.2.1"
	pinned := topology.AgentPin{Image: "memgraph-hooks:v0.2.0", Protocol: topology.AgentProtocol}
	ours := topology.AgentPin{Image: hookImage, Protocol: topology.AgentProtocol}
	for _, tc := range []struct {
		name       string
		pinned     topology.AgentPin
		restarting bool
		want       topology.AgentPin
	}{
		{"a new cluster gets the hook's image", topology.AgentPin{}, false, ours},
		{"a pinned agent the hook speaks to stays, whatever the hook's image", pinned, false, pinned},
		{"a restart of every pod takes the hook's image", pinned, true, ours},
		{"an agent of an API the hook no longer speaks is replaced",
			topology.AgentPin{Image: "memgraph-hooks:v0.1.0", Protocol: topology.OldestAgentProtocol - 1}, false, ours},
		{"an agent an earlier release rendered, of unknown API, is replaced",
			topology.AgentPin{Image: "memgraph-hooks:v0.1.0"}, false, ours},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NextAgentPin(tc.pinned, hookImage, tc.restarting); got != tc.want {
				t.Errorf("NextAgentPin = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// waitingFor is a rollout input whose pending change is a hook release's on both roles (the
// StatefulSets carry the mark), under windows at the sync's time.
func waitingFor(in RolloutInput, windows ...topology.Window) RolloutInput {
	in.SpecGeneration = generationNow
	in.Data.Provenance, in.Coordinators.Provenance = provenance(recordedHook), provenance(recordedHook)
	in.Maintenance = MaintenanceAt(windows, in.Now.Time)
	return in
}

// The rollout's one question of the windows: a hook release's change rolls only while a window is
// open, or when the spec declares none; every pod is held otherwise, and Updated names the next
// window. The sync runs on Wednesday 2026-03-04 at 05:01 UTC.
func TestRolloutOfAHookReleaseWaitsForAWindow(t *testing.T) {
	wednesdays := topology.Window{Schedule: "0 5 * * 3", Duration: time.Hour}
	view := clusterView(3, 1, 3, 0)
	const waiting = "the pod template change of a hook release waits for the next maintenance window, at 2026-03-07T02:00:00Z " +
		"(spec.maintenanceWindows); a restart (kubectl memgraph restart) applies it now"
	spec := rolloutIn(set("ooo"), set("ooo"), view)
	spec.SpecGeneration = generationNow
	runRolloutCases(t, []rolloutCase{{
		name:       "closed: every pod held, Updated names the next window",
		in:         waitingFor(rolloutIn(set("ooo"), set("ooo"), view), saturdays),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonWaitingForMaintenanceWindow,
		message:    waiting + "; 0 of 6 pods updated",
	}, {
		name:       "closed, the template arriving in this very sync: every pod held",
		in:         waitingFor(rolloutIn(set("nnn", settled, changing), set("nnn", settled, changing), view), saturdays),
		partitions: partitions(3, 3),
		reason:     v1alpha1.ReasonWaitingForMaintenanceWindow,
		message:    waiting + "; 0 of 6 pods updated",
	}, {
		name:       "open: the rollout goes, highest data pod first",
		in:         waitingFor(rolloutIn(set("ooo"), set("ooo"), view), saturdays, wednesdays),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2); next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "no window declared: it rolls at once, as any change",
		in:         waitingFor(rolloutIn(set("ooo"), set("ooo"), view)),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2); next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name:       "the window closed in the middle: nothing further is released, the replaced pod stays released",
		in:         waitingFor(rolloutIn(set("ooo"), set("oon"), view), saturdays),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonWaitingForMaintenanceWindow,
		message:    waiting + "; 1 of 6 pods updated",
	}, {
		name: "a change of the spec is never held",
		in: func() RolloutInput {
			in := spec
			in.Maintenance = MaintenanceAt([]topology.Window{saturdays}, in.Now.Time)
			return in
		}(),
		partitions: partitions(3, 2),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-data-2 (instance_2); next: replace mg-data-1 (instance_1); 0 of 6 pods updated",
		needsLag:   true,
	}, {
		name: "the data instances wait, the coordinators' change is the spec's: the coordinators roll",
		in: func() RolloutInput {
			in := waitingFor(rolloutIn(set("ooo"), set("ooo"), view), saturdays)
			in.Coordinators.Provenance = provenance(recorded)
			return in
		}(),
		partitions: partitions(2, 3),
		reason:     v1alpha1.ReasonRolloutInProgress,
		message:    "replacing mg-coordinator-3 (coordinator_3); next: replace mg-coordinator-2 (coordinator_2); 0 of 6 pods updated",
	}})
	if step := PlanRollout(waitingFor(rolloutIn(set("ooo"), set("ooo"), view), saturdays)); step.InProgress() || step.Done() || !step.WaitsForWindow() {
		t.Errorf("a rollout waiting for a window: InProgress %v, Done %v, WaitsForWindow %v", step.InProgress(), step.Done(), step.WaitsForWindow())
	}
}

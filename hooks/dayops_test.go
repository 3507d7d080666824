package hooks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Day-2 operations on the simulator: planned switchover, pause, hibernation and waking.

// boltWrites lists the queries since the last ResetLog that were not reads.
func (h *harness) boltWrites() []string {
	var writes []string
	for _, q := range h.world.Queries() {
		if !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(q.Text)), "SHOW ") {
			writes = append(writes, q.Text)
		}
	}
	return writes
}

// statusField reads a string at a path of the last status ("" when absent).
func (h *harness) statusField(path ...string) string {
	var v any = h.lastResp.Status
	for _, key := range path {
		m, _ := v.(map[string]any)
		v = m[key]
	}
	s, _ := v.(string)
	return s
}

func (h *harness) assertCondition(typ v1alpha1.ConditionType, wantStatus string, wantReason v1alpha1.ConditionReason) string {
	h.t.Helper()
	st, reason, msg := h.condition(typ)
	if st != wantStatus || reason != wantReason {
		h.t.Fatalf("%s=%s/%s (%s), want %s/%s", typ, st, reason, msg, wantStatus, wantReason)
	}
	return msg
}

// The preferred MAIN takes over only once it is caught up: until then nothing is demoted and
// Converged says how far behind it is; then one lag-gated handover moves MAIN, lastOperation
// records it, and Converged says the preference is reached.
func TestSwitchoverToPreferredMainWaitsUntilCaughtUp(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.bootstrap()
	h.assertConverged()
	h.must(h.world.SetLag(h.network().DataInstance(2).Host, "memgraph", 4))
	h.must(h.world.Commit("memgraph", 10))
	h.spec["preferredMain"] = "instance_2"
	bootstrapOp := h.statusField("lastOperation", "writes")
	h.world.ResetLog()

	h.sync()
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonSwitchoverPending)
	if !strings.Contains(msg, "instance_2") || !strings.Contains(msg, "4") {
		t.Errorf("SwitchoverPending message %q does not say how far instance_2 is behind", msg)
	}
	h.assertMains("instance_0")
	if w := h.boltWrites(); len(w) != 0 {
		t.Fatalf("writes while the preferred MAIN lags: %q", w)
	}
	if op := h.statusField("lastOperation", "writes"); op != bootstrapOp || !strings.HasPrefix(op, "ADD coordinator_1") {
		t.Errorf("lastOperation %q after a pass that wrote nothing, want the bootstrap's %q carried forward", op, bootstrapOp)
	}

	h.must(h.world.SetLag(h.network().DataInstance(2).Host, "memgraph", 0))
	h.sync()
	h.assertMains("instance_2")
	if got, want := h.statusField("lastOperation", "writes"), "DEMOTE instance_0; SET instance_2 TO MAIN"; got != want {
		t.Errorf("lastOperation.writes %q, want %q", got, want)
	}
	if got := h.statusField("lastOperation", "result"); got != string(v1alpha1.OperationSucceeded) {
		t.Errorf("lastOperation.result %q, want Succeeded", got)
	}
	stamped := h.statusField("lastOperation", "time")

	h.advance(time.Minute)
	h.sync()
	msg = h.assertCondition(v1alpha1.ConditionConverged, "True", v1alpha1.ReasonAllInstancesRegistered)
	if !strings.Contains(msg, "instance_2 is MAIN, as spec.preferredMain asks") {
		t.Errorf("Converged message %q does not say the preferred MAIN is reached", msg)
	}
	if h.statusField("main") != "instance_2" {
		t.Errorf("status.main %q, want instance_2", h.statusField("main"))
	}
	if got := h.statusField("lastOperation", "time"); got != stamped {
		t.Errorf("a pass that wrote nothing changed lastOperation.time from %s to %s", stamped, got)
	}
	h.assertNoMisuse()
}

// When Memgraph fails over away from the preferred MAIN, the hook does not fight it: MAIN goes
// back only once the preferred instance has returned and caught up.
func TestPreferredMainAfterAFailover(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.spec["preferredMain"] = "instance_1"
	h.bootstrap()
	h.sync()
	h.assertConverged()
	h.assertMains("instance_1")

	preferred := h.network().DataInstance(1).Host
	h.kill(preferred)
	h.advance(10 * time.Second) // the leader sees instance_1 down and fails over
	h.sync()
	if mains := h.mains(); len(mains) != 1 || mains[0] == "instance_1" {
		t.Fatalf("MAINs after the failover %v, want one other than instance_1", mains)
	}
	failedOverTo := h.mains()[0]
	h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonSwitchoverPending)
	h.assertMains(failedOverTo)

	h.must(h.world.SetLag(preferred, "memgraph", 3))
	h.restart(preferred)
	h.must(h.world.Commit("memgraph", 5))
	h.sync()
	h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonSwitchoverPending)
	h.assertMains(failedOverTo)

	h.must(h.world.SetLag(preferred, "memgraph", 0))
	h.sync()
	h.assertMains("instance_1")
	h.sync()
	h.assertConverged()
	h.assertNoMisuse()
}

// pauseAShrinkWithAHumanEdit pauses the cluster, asks for one data instance fewer, and puts a
// human's label (team=on-call) on the observed data StatefulSet, whose key it returns.
func (h *harness) pauseAShrinkWithAHumanEdit() string {
	h.annotations = map[string]any{topology.AnnotationPaused: "true"}
	h.scale(3, 2)
	dataSet := "StatefulSet/" + topology.DataSetName(h.name)
	edited := deepCopy(h.children[dataSet])
	edited["metadata"].(map[string]any)["labels"].(map[string]any)["team"] = "on-call"
	h.children[dataSet] = edited
	return dataSet
}

// A paused cluster gets no Bolt write and its children back as observed while a retirement is
// pending (a human's edit kept); the status says it is paused and what waits. Unpaused, the
// retirement runs from what the hook then observes.
func TestPauseFreezesARetirement(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.bootstrap()
	h.assertConverged()
	h.parkMain("instance_2")
	dataSet := h.pauseAShrinkWithAHumanEdit()
	h.world.ResetLog()

	for range 3 {
		h.sync()
	}
	if w := h.boltWrites(); len(w) != 0 {
		t.Fatalf("Bolt writes while paused: %q", w)
	}
	if q := h.world.Queries(); len(q) != 3 || q[0].Text != "SHOW INSTANCES" {
		t.Errorf("paused: %d queries over 3 syncs (%+v), want one SHOW INSTANCES each", len(q), q)
	}
	if _, d := h.replicas(); d != 3 {
		t.Errorf("paused: %d data replicas returned, want the observed 3", d)
	}
	for _, budget := range []string{topology.CoordinatorBudgetName(h.name), topology.DataBudgetName(h.name)} {
		if _, kept := h.children["PodDisruptionBudget/"+budget]; !kept {
			t.Errorf("paused: PodDisruptionBudget %s not returned (Metacontroller would delete it)", budget)
		}
	}
	got := h.children[dataSet]["metadata"].(map[string]any)["labels"].(map[string]any)["team"]
	if got != "on-call" {
		t.Errorf("paused: the human's label on the data StatefulSet was not kept (got %v)", got)
	}
	h.assertCondition(v1alpha1.ConditionPaused, "True", v1alpha1.ReasonPaused)
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonPaused)
	if !strings.Contains(msg, "instance_2") {
		t.Errorf("paused Converged %q does not say what waits", msg)
	}
	if h.statusField("phase") != string(v1alpha1.PhasePaused) || h.statusField("main") != "instance_2" {
		t.Errorf("paused: phase %q main %q, want Paused and instance_2 (status stays true)", h.statusField("phase"), h.statusField("main"))
	}
	h.assertMains("instance_2")

	h.annotations = nil
	h.sync()
	h.assertMains("instance_0")
	if got, want := h.statusField("lastOperation", "writes"), "DEMOTE instance_2; SET instance_0 TO MAIN; UNREGISTER instance_2"; got != want {
		t.Errorf("lastOperation.writes %q, want %q", got, want)
	}
	h.assertCondition(v1alpha1.ConditionPaused, "False", v1alpha1.ReasonReconciling)
	h.sync()
	h.sync()
	h.assertConverged()
	if _, d := h.replicas(); d != 2 {
		t.Errorf("unpaused: %d data replicas, want 2", d)
	}
	h.assertNoMisuse()
}

// Hibernating a 3+3 cluster with MAIN on instance_2 stops the replicas, then the MAIN, then the
// coordinators, with no Bolt write and claims kept; waking brings instance_2 back as MAIN with
// every registration, without a second MAIN and without re-registering anything.
func TestHibernateAndWakeKeepsTheMainAndRegistrations(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.keepVolumes = true
	h.spec["storage"] = map[string]any{"retentionPolicy": "Delete"} // hibernation keeps the claims all the same
	h.bootstrap()
	h.assertConverged()
	h.parkMain("instance_2")
	h.sync()
	registered := h.registered()
	h.spec["hibernate"] = true
	h.world.ResetLog()

	wantPods := [][]string{
		{"memgraph-coordinator-1", "memgraph-coordinator-2", "memgraph-coordinator-3", "memgraph-data-2"},
		{"memgraph-coordinator-1", "memgraph-coordinator-2", "memgraph-coordinator-3"},
		nil,
	}
	for i, want := range wantPods {
		h.advance(10 * time.Second) // the leader sees the stopped instances down
		h.sync()
		if diff := cmp.Diff(want, h.podList()); diff != "" {
			t.Fatalf("hibernating, pass %d: pods (-want +got):\n%s", i+1, diff)
		}
		h.assertCondition(v1alpha1.ConditionHibernated, "False", v1alpha1.ReasonHibernating)
		if h.statusField("phase") != string(v1alpha1.PhaseHibernating) {
			t.Errorf("pass %d: phase %q, want Hibernating", i+1, h.statusField("phase"))
		}
		h.assertClaimsKept()
	}
	h.world.ResetLog()
	h.sync()
	h.assertCondition(v1alpha1.ConditionHibernated, "True", v1alpha1.ReasonHibernated)
	h.assertCondition(v1alpha1.ConditionConverged, "True", v1alpha1.ReasonHibernated)
	if h.statusField("phase") != string(v1alpha1.PhaseHibernated) {
		t.Errorf("phase %q, want Hibernated", h.statusField("phase"))
	}
	if q := h.world.Queries(); len(q) != 0 {
		t.Errorf("a hibernated pass dialled Bolt: %+v", q)
	}

	h.spec["hibernate"] = false
	h.sync() // the coordinators and instance_2 first
	if diff := cmp.Diff([]string{"memgraph-coordinator-1", "memgraph-coordinator-2", "memgraph-coordinator-3", "memgraph-data-2"}, h.podList()); diff != "" {
		t.Fatalf("waking: pods (-want +got):\n%s", diff)
	}
	h.assertCondition(v1alpha1.ConditionHibernated, "False", v1alpha1.ReasonWaking)
	for range 10 {
		h.advance(5 * time.Second) // the new leader reconciles
		h.sync()
		if h.statusField("phase") == string(v1alpha1.PhaseRunning) && len(h.pods) == 6 {
			break
		}
	}
	h.advance(5 * time.Second)
	h.sync()
	h.sync()
	h.assertConverged()
	h.assertMains("instance_2")
	if diff := cmp.Diff(registered, h.registered()); diff != "" {
		t.Errorf("registrations after waking (-before +after):\n%s", diff)
	}
	if w := h.boltWrites(); len(w) != 0 {
		t.Errorf("Bolt writes across hibernation and waking: %q", w)
	}
	h.assertNoMisuse()
}

func (h *harness) podList() []string {
	var pods []string
	for p := range h.pods {
		pods = append(pods, p)
	}
	if len(pods) == 0 {
		return nil
	}
	return sortedCopy(pods)
}

// assertClaimsKept checks that both returned StatefulSets keep their claims on scale-down.
func (h *harness) assertClaimsKept() {
	h.t.Helper()
	for _, c := range h.lastResp.Children {
		if c["kind"] != "StatefulSet" {
			continue
		}
		policy := c["spec"].(map[string]any)["persistentVolumeClaimRetentionPolicy"].(map[string]any)
		if policy["whenScaled"] != "Retain" {
			h.t.Errorf("%v: whenScaled %v while hibernating, want Retain", c["metadata"].(map[string]any)["name"], policy["whenScaled"])
		}
	}
}

// An annotation value that is neither true nor false is read as a request to stop, and the
// status says how it was read.
func TestAmbiguousPauseAnnotationPausesWithAWarning(t *testing.T) {
	h := newHarness(t, 3, 1)
	h.bootstrap()
	h.annotations = map[string]any{topology.AnnotationPaused: "yes please"}
	h.scale(3, 3)
	h.world.ResetLog()
	h.sync()
	h.assertCondition(v1alpha1.ConditionPaused, "True", v1alpha1.ReasonPaused)
	if w := h.boltWrites(); len(w) != 0 {
		t.Errorf("Bolt writes while paused: %q", w)
	}
	if _, d := h.replicas(); d != 1 {
		t.Errorf("paused: %d data replicas returned, want the observed 1", d)
	}
	warnings, _ := h.lastResp.Status["warnings"].([]any)
	want := `annotation memgraph.com/paused is "yes please", read as "true" (paused): write "true" or "false", or remove it`
	if diff := cmp.Diff([]any{want}, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	h.annotations[topology.AnnotationPaused] = "false"
	h.sync()
	h.sync()
	h.sync()
	h.assertConverged()
}

// partitions returns the partitions of the last response's StatefulSets.
func (h *harness) partitions() (coordinators, data int) {
	for _, c := range h.lastResp.Children {
		if c["kind"] != "StatefulSet" {
			continue
		}
		if c["metadata"].(map[string]any)["name"] == topology.CoordinatorSetName(h.name) {
			coordinators = partitionOf(c)
		} else {
			data = partitionOf(c)
		}
	}
	return coordinators, data
}

// A pause in the middle of a rollout freezes the partitions with every other field: no further
// pod is released and nothing is written to Bolt; unpaused, the rollout finishes.
func TestPauseFreezesARollout(t *testing.T) {
	h, w := convergedForRollout(t, 3, 3)
	h.setTag("3.12.1")
	for range 10 {
		h.sync()
		w.observe(h)
		if len(h.replaced) > 0 {
			break
		}
	}
	if len(h.replaced) == 0 {
		t.Fatal("the rollout released no pod")
	}
	h.annotations = map[string]any{topology.AnnotationPaused: "true"}
	h.sync()
	cp, dp := h.partitions()
	replaced := len(h.replaced)
	h.world.ResetLog()
	for range 5 {
		h.advance(5 * time.Second)
		h.sync()
		w.observe(h)
		if c, d := h.partitions(); c != cp || d != dp {
			t.Fatalf("paused: partitions moved from %d/%d to %d/%d", cp, dp, c, d)
		}
	}
	if len(h.replaced) != replaced {
		t.Errorf("paused: pods replaced %v after the first %d", h.replaced, replaced)
	}
	if writes := h.boltWrites(); len(writes) != 0 {
		t.Errorf("paused: Bolt writes %q", writes)
	}
	h.annotations = nil
	h.rollOut(w, 40)
	w.check(t)
	h.assertNoMisuse()
}

// A rollout with a preferred MAIN: MAIN leaves instance_2's pod for the rollout and comes back
// to it once it runs the new template and caught up; never two handovers in one pass, and the
// rollout never replaces the MAIN's pod.
func TestRolloutWithAPreferredMain(t *testing.T) {
	h, w := convergedForRollout(t, 3, 3)
	h.spec["preferredMain"] = "instance_2"
	h.sync()
	h.sync()
	h.assertConverged()
	h.assertMains("instance_2")
	h.setTag("3.12.1")
	for i := 0; i < 40; i++ {
		h.world.ResetLog()
		h.sync()
		w.observe(h)
		demotes := 0
		for _, q := range h.world.Queries() {
			if strings.HasPrefix(q.Text, "DEMOTE INSTANCE") {
				demotes++
			}
		}
		if demotes > 1 {
			t.Fatalf("sync %d handed MAIN over %d times", i, demotes)
		}
		updated, _, _ := h.condition(v1alpha1.ConditionUpdated)
		converged, _, _ := h.condition(v1alpha1.ConditionConverged)
		if updated == "True" && converged == "True" {
			break
		}
	}
	h.assertConverged()
	h.assertMains("instance_2")
	if st, _, msg := h.condition(v1alpha1.ConditionUpdated); st != "True" {
		t.Errorf("Updated %s: %s", st, msg)
	}
	if len(w.mains) < 3 || w.mains[0] != "instance_2" || w.mains[len(w.mains)-1] != "instance_2" {
		t.Errorf("MAIN over the rollout %v, want it to leave instance_2 for its pod's replacement and come back", w.mains)
	}
	w.check(t)
	h.assertNoMisuse()
}

// Hibernation asked for in the middle of a rollout waits for it to finish: no pod stops before
// every pod runs the new template; then the cluster hibernates and wakes at that template.
func TestHibernateWaitsForARollout(t *testing.T) {
	h, w := convergedForRollout(t, 3, 3)
	h.keepVolumes = true
	h.setTag("3.12.1")
	h.sync()
	w.observe(h)
	h.spec["hibernate"] = true
	hibernated, pending := false, false
	for i := 0; i < 60 && !hibernated; i++ {
		h.advance(5 * time.Second)
		h.sync()
		w.observe(h)
		updated, _, _ := h.condition(v1alpha1.ConditionUpdated)
		if _, d := h.replicas(); d < 3 && updated != "True" {
			t.Fatalf("sync %d: data replicas %d while the rollout is not done", i, d)
		}
		_, reason, _ := h.condition(v1alpha1.ConditionHibernated)
		if reason == v1alpha1.ReasonHibernationPending && updated == "True" {
			t.Fatalf("sync %d: hibernation pending after the rollout finished", i)
		}
		pending = pending || reason == v1alpha1.ReasonHibernationPending
		st, _, _ := h.condition(v1alpha1.ConditionHibernated)
		hibernated = st == "True"
	}
	if !hibernated || !pending {
		t.Fatalf("hibernated %v, pending while rolling %v: want both", hibernated, pending)
	}
	h.spec["hibernate"] = false
	for range 20 {
		h.advance(5 * time.Second)
		h.sync()
		if converged, _, _ := h.condition(v1alpha1.ConditionConverged); converged == "True" {
			break
		}
	}
	h.assertConverged()
	if st, _, msg := h.condition(v1alpha1.ConditionUpdated); st != "True" {
		t.Errorf("after waking, Updated %s: %s", st, msg)
	}
	for pod, st := range h.podStates {
		if st.image != imageNew {
			t.Errorf("%s woke at %s, want %s", pod, st.image, imageNew)
		}
	}
	w.check(t)
	h.assertNoMisuse()
}

// A pause holds hibernation too: the children stay as they are until the annotation goes.
func TestPauseHoldsHibernation(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.keepVolumes = true
	h.bootstrap()
	h.assertConverged()
	before := h.podList()
	h.annotations = map[string]any{topology.AnnotationPaused: "true"}
	h.spec["hibernate"] = true
	for range 3 {
		h.advance(10 * time.Second)
		h.sync()
	}
	if diff := cmp.Diff(before, h.podList()); diff != "" {
		t.Fatalf("paused: pods changed (-before +after):\n%s", diff)
	}
	if h.statusField("phase") != string(v1alpha1.PhasePaused) {
		t.Errorf("phase %q, want Paused", h.statusField("phase"))
	}
	h.assertCondition(v1alpha1.ConditionHibernated, "False", v1alpha1.ReasonHibernating)
	h.annotations = nil
	for range 5 {
		h.advance(10 * time.Second)
		h.sync()
	}
	h.assertCondition(v1alpha1.ConditionHibernated, "True", v1alpha1.ReasonHibernated)
	if pods := h.podList(); len(pods) != 0 {
		t.Errorf("unpaused and hibernated, yet pods %v", pods)
	}
	h.assertNoMisuse()
}

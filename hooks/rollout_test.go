package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Rollouts on the simulator: the harness plays the StatefulSet controller (revisions, partitions,
// one replacement at a time), the hook drives it through the partitions alone.

const (
	imageOld = "docker.io/memgraph/memgraph:3.12.0"
	imageNew = "docker.io/memgraph/memgraph:3.12.1"
)

func (h *harness) setTag(tag string) { h.spec["image"] = map[string]any{"tag": tag} }

// rolloutWatch checks, at every replacement, that the pod's member is neither MAIN nor the
// leader, and after every sync, that at most one declared pod is down.
type rolloutWatch struct {
	violations []string
	maxDown    int
	mains      []string // the MAIN after each sync, when it changed
}

func (h *harness) watchRollout(singleData bool) *rolloutWatch {
	w := &rolloutWatch{}
	h.onReplace = func(pod string) {
		member := memberOfPod(h.name, pod)
		main, leader := h.world.Raft().Clusters[0].Main, ""
		if id, ok := h.world.Leader(); ok {
			leader = topology.CoordinatorName(id)
		}
		if member == main && !singleData || member == leader {
			w.violations = append(w.violations, fmt.Sprintf("%s replaced while %s was MAIN (%s) or leader (%s)", pod, member, main, leader))
		}
	}
	return w
}

func memberOfPod(cluster, pod string) string {
	if n, ok := topology.PodOrdinal(topology.DataSetName(cluster), pod); ok {
		return topology.DataInstanceName(n)
	}
	n, _ := topology.PodOrdinal(topology.CoordinatorSetName(cluster), pod)
	return topology.CoordinatorName(n)
}

func (w *rolloutWatch) observe(h *harness) {
	down := 0
	for _, sts := range h.children {
		if sts["kind"] != "StatefulSet" {
			continue
		}
		set := sts["metadata"].(map[string]any)["name"].(string)
		for i := 0; i < replicasOf(sts); i++ {
			pod := fmt.Sprintf("%s-%d", set, i+firstOrdinal(set, h.name))
			if st := h.podStates[pod]; !h.pods[pod] || st != nil && st.starting || !h.world.Running(h.hostOf(pod)) {
				down++
			}
		}
	}
	w.maxDown = max(w.maxDown, down)
	if main := h.world.Raft().Clusters[0].Main; len(w.mains) == 0 || w.mains[len(w.mains)-1] != main {
		w.mains = append(w.mains, main)
	}
}

func (w *rolloutWatch) check(t *testing.T) {
	t.Helper()
	for _, v := range w.violations {
		t.Error(v)
	}
	if w.maxDown > 1 {
		t.Errorf("%d pods were down at once", w.maxDown)
	}
}

// convergedForRollout is a converged cluster of the given size whose replacements are watched.
func convergedForRollout(t *testing.T, coordinators, data int) (*harness, *rolloutWatch) {
	t.Helper()
	h := newHarness(t, coordinators, data)
	h.bootstrap()
	h.assertConverged()
	return h, h.watchRollout(data == 1)
}

// rollOut syncs until Updated and Converged are True, at most n times.
func (h *harness) rollOut(w *rolloutWatch, n int) {
	h.t.Helper()
	for i := 0; i < n; i++ {
		h.sync()
		w.observe(h)
		updated, _, _ := h.condition(v1alpha1.ConditionUpdated)
		converged, _, _ := h.condition(v1alpha1.ConditionConverged)
		if updated == "True" && converged == "True" {
			return
		}
	}
	_, reason, msg := h.condition(v1alpha1.ConditionUpdated)
	h.t.Fatalf("the rollout did not finish in %d syncs: Updated %s: %s (replaced %v)", n, reason, msg, h.replaced)
}

func (h *harness) version() (version, target string) {
	version, _ = h.lastResp.Status["version"].(string)
	target, _ = h.lastResp.Status["targetVersion"].(string)
	return version, target
}

// assertNoChildChange syncs a converged cluster again: the same children come back (no write for
// Metacontroller to make) and only SHOW INSTANCES is sent.
func (h *harness) assertNoChildChange() {
	h.t.Helper()
	before, _ := json.Marshal(h.lastResp.Children)
	h.world.ResetLog()
	h.sync()
	after, _ := json.Marshal(h.lastResp.Children)
	if string(before) != string(after) {
		h.t.Errorf("a converged sync returned other children:\n%s", cmp.Diff(string(before), string(after)))
	}
	for _, q := range h.world.Queries() {
		if q.Text != "SHOW INSTANCES" {
			h.t.Errorf("a converged sync sent %q", q.Text)
		}
	}
}

// An upgrade (3.12.0 to 3.12.1) with the MAIN on the middle ordinal: MAIN first moves to the pod
// replaced last (old version to old version), the replicas roll highest first, then MAIN goes to
// the lowest updated replica and the old MAIN's pod is replaced; the coordinators follow. No newer
// MAIN ever replicates to an older replica (the simulator records that as a misuse).
func TestRollingUpgradeReplacesOnePodAtATime(t *testing.T) {
	h := newHarness(t, 3, 3)
	// The controller acts a sync behind, so every sync after a partition or template change sees
	// a StatefulSet whose latest generation is not observed yet, as on a real control plane.
	h.controllerLag = true
	h.bootstrap()
	h.assertConverged()
	if v, target := h.version(); v != imageOld || target != "" {
		t.Fatalf("converged cluster: version %q, target %q", v, target)
	}
	h.parkMain("instance_1")
	h.must(h.world.ForceLeader(3))
	w := h.watchRollout(false)

	h.setTag("3.12.1")
	h.sync()
	if st, reason, msg := h.condition(v1alpha1.ConditionUpdated); st != "False" || reason != v1alpha1.ReasonRolloutInProgress ||
		!strings.HasPrefix(msg, "holding every data pod") {
		t.Errorf("the sync that changes the template: Updated %s/%s %q, want every pod held", st, reason, msg)
	}
	if _, target := h.version(); target != imageNew {
		t.Errorf("targetVersion %q, want %q", target, imageNew)
	}
	if len(h.replaced) != 0 {
		t.Fatalf("pods replaced by the sync that changed the template: %v", h.replaced)
	}
	h.rollOut(w, 60)
	w.check(t)
	want := []string{"memgraph-data-2", "memgraph-data-1", "memgraph-data-0",
		"memgraph-coordinator-3", "memgraph-coordinator-2", "memgraph-coordinator-1"}
	if diff := cmp.Diff(want, h.replaced); diff != "" {
		t.Errorf("replacement order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"instance_1", "instance_0", "instance_1"}, w.mains); diff != "" {
		t.Errorf("MAIN moved (-want +got):\n%s", diff)
	}
	if v, target := h.version(); v != imageNew || target != "" {
		t.Errorf("after the rollout: version %q, target %q; want %q and none", v, target, imageNew)
	}
	h.assertConverged()
	h.assertNoMisuse()
	h.assertNoChildChange()
}

func TestRestartedAtRollsEveryPodTheSameWay(t *testing.T) {
	h, w := convergedForRollout(t, 3, 2)
	h.controllerLag = true
	h.annotations = map[string]any{topology.AnnotationRestartedAt: "2026-01-01T01:00:00Z"}
	h.rollOut(w, 50)
	w.check(t)
	want := []string{"memgraph-data-1", "memgraph-data-0",
		"memgraph-coordinator-3", "memgraph-coordinator-2", "memgraph-coordinator-1"}
	if diff := cmp.Diff(want, h.replaced); diff != "" {
		t.Errorf("replacement order (-want +got):\n%s", diff)
	}
	if v, _ := h.version(); v != imageOld {
		t.Errorf("version %q after a restart, want %q", v, imageOld)
	}
	h.assertNoMisuse()
	h.assertNoChildChange()
}

// A new image that never starts stops the rollout at its first pod, says so once the step
// timeout has passed, and a rollback replaces that pod first and nothing else.
func TestStuckRolloutIsReportedAndRolledBack(t *testing.T) {
	h, w := convergedForRollout(t, 3, 3)
	h.brokenImages = map[string]bool{v1alpha1.DefaultImageRepository + ":3.12.1-broken": true}
	h.setTag("3.12.1-broken")
	for range 6 {
		h.sync()
		w.observe(h)
	}
	if diff := cmp.Diff([]string{"memgraph-data-2"}, h.replaced); diff != "" {
		t.Fatalf("replaced (-want +got):\n%s", diff)
	}
	if _, reason, _ := h.condition(v1alpha1.ConditionUpdated); reason != v1alpha1.ReasonRolloutInProgress {
		t.Errorf("before the step timeout: Updated %s, want RolloutInProgress", reason)
	}
	h.advance(11 * time.Minute)
	h.sync()
	st, reason, msg := h.condition(v1alpha1.ConditionUpdated)
	if st != "False" || reason != v1alpha1.ReasonRolloutStuck || !strings.Contains(msg, "memgraph-data-2") ||
		!strings.Contains(msg, "to be Ready") {
		t.Errorf("after the step timeout: Updated %s/%s %q, want RolloutStuck naming memgraph-data-2 and Ready", st, reason, msg)
	}
	if _, reason, _ := h.condition(v1alpha1.ConditionConverged); reason != v1alpha1.ReasonWorkloadsNotReady {
		t.Errorf("Converged %s while a pod is not Ready", reason)
	}
	for range 3 {
		h.sync()
	}
	if len(h.replaced) != 1 {
		t.Fatalf("a stuck rollout went on: replaced %v", h.replaced)
	}

	h.setTag(v1alpha1.DefaultImageTag)
	h.rollOut(w, 30)
	w.check(t)
	if diff := cmp.Diff([]string{"memgraph-data-2", "memgraph-data-2"}, h.replaced); diff != "" {
		t.Errorf("replaced (-want +got):\n%s", diff)
	}
	if v, target := h.version(); v != imageOld || target != "" {
		t.Errorf("after the rollback: version %q, target %q", v, target)
	}
	h.assertConverged()
	h.assertNoMisuse()
}

// A replaced replica that lags keeps the next pod; caught up, the rollout goes on.
func TestLaggingReplicaHoldsTheNextRelease(t *testing.T) {
	h, w := convergedForRollout(t, 3, 3)
	h.setTag("3.12.1")
	for len(h.replaced) == 0 || !h.pods["memgraph-data-2"] {
		h.sync()
	}
	host := h.hostOf("memgraph-data-2")
	h.must(h.world.SetLag(host, "memgraph", 4))
	h.must(h.world.Commit("memgraph", 10)) // the MAIN moves on; instance_2 stays 4 behind
	for range 4 {
		h.sync()
		w.observe(h)
	}
	_, reason, msg := h.condition(v1alpha1.ConditionUpdated)
	if diff := cmp.Diff([]string{"memgraph-data-2"}, h.replaced); diff != "" || reason != v1alpha1.ReasonRolloutInProgress ||
		!strings.Contains(msg, "catch up") {
		t.Errorf("with instance_2 behind: replaced %v, Updated %s %q; want only memgraph-data-2 and a wait to catch up", h.replaced, reason, msg)
	}
	h.must(h.world.SetLag(host, "memgraph", 0))
	h.rollOut(w, 60)
	w.check(t)
	h.assertNoMisuse()
}

// A new image and a scale-down in one edit: the retiring pod is retired, never replaced, and the
// rollout goes on once the StatefulSet has shrunk.
func TestRolloutAndScaleDownInOneEdit(t *testing.T) {
	h, w := convergedForRollout(t, 3, 3)
	h.parkMain("instance_2")
	h.setTag("3.12.1")
	h.scale(3, 2)
	h.rollOut(w, 60)
	w.check(t)
	want := []string{"memgraph-data-1", "memgraph-data-0",
		"memgraph-coordinator-3", "memgraph-coordinator-2", "memgraph-coordinator-1"}
	if diff := cmp.Diff(want, h.replaced); diff != "" {
		t.Errorf("replacement order (-want +got):\n%s", diff)
	}
	if h.pods["memgraph-data-2"] {
		t.Error("memgraph-data-2 still exists")
	}
	h.assertConverged()
	h.assertNoMisuse()
}

// A single data instance has no survivor to take MAIN: it is replaced in place, and comes back
// as the MAIN.
func TestSingleDataInstanceIsReplacedInPlace(t *testing.T) {
	h, w := convergedForRollout(t, 3, 1)
	h.setTag("3.12.1")
	var inPlace bool
	for range 60 {
		h.sync()
		w.observe(h)
		_, _, msg := h.condition(v1alpha1.ConditionUpdated)
		inPlace = inPlace || strings.Contains(msg, "in place")
		if st, _, _ := h.condition(v1alpha1.ConditionUpdated); st == "True" {
			break
		}
	}
	w.check(t)
	if !inPlace {
		t.Error("no Updated message said the single data instance is replaced in place")
	}
	if diff := cmp.Diff([]string{"instance_0"}, h.mains()); diff != "" {
		t.Errorf("MAIN after the rollout (-want +got):\n%s", diff)
	}
	h.rollOut(w, 10)
	h.assertConverged()
	h.assertNoMisuse()
}

// A human moves MAIN in the middle of the rollout: the next step starts from where it is. A change
// of the same version hands MAIN over from the human's MAIN when its pod is next, never back; an
// upgrade moves it to the pod replaced last (the old version's lowest ordinal) first, because only
// that order never makes a newer MAIN over an older replica.
func TestHumanSwitchoverMidRolloutIsTheNewStartingPoint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*harness)
		mains  []string
	}{
		{"a restart", func(h *harness) {
			h.annotations = map[string]any{topology.AnnotationRestartedAt: "2026-01-01T01:00:00Z"}
		}, []string{"instance_0", "instance_1", "instance_2"}},
		{"an upgrade", func(h *harness) { h.setTag("3.12.1") }, []string{"instance_0", "instance_1", "instance_0", "instance_1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, w := convergedForRollout(t, 3, 3)
			tc.change(h)
			for len(h.replaced) < 1 || !h.pods["memgraph-data-2"] {
				h.sync()
				w.observe(h)
			}
			// instance_0 is MAIN; a human hands it to instance_1, the next pod in line.
			c := h.pool.Client(h.network().Coordinator(1).BoltServer)
			ctx := context.Background()
			h.must(c.DemoteInstance(ctx, "instance_0"))
			h.must(c.SetInstanceToMain(ctx, "instance_1"))
			w.observe(h)
			h.rollOut(w, 60)
			w.check(t)
			if diff := cmp.Diff(tc.mains, w.mains); diff != "" {
				t.Errorf("MAIN moved (-want +got):\n%s", diff)
			}
			h.assertNoMisuse()
		})
	}
}

package hooks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/hookmetrics"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// replaceVolume is what `kubectl memgraph rebuild` does to a data pod: its claim and the pod are
// deleted, and the StatefulSet brings the pod back on a fresh volume (on the next round).
func (h *harness) replaceVolume(pod string) {
	if h.freshVolumes == nil {
		h.freshVolumes = map[string]bool{}
	}
	h.freshVolumes[h.hostOf(pod)] = true
	h.replace(pod)
}

// replicaStates are status.replicas as name → state.
func (h *harness) replicaStates() map[string]string {
	out := map[string]string{}
	list, _ := h.lastResp.Status["replicas"].([]any)
	for _, r := range list {
		m := r.(map[string]any)
		out[m["name"].(string)] = m["state"].(string)
	}
	return out
}

func (h *harness) annotate(key, value string) {
	if h.annotations == nil {
		h.annotations = map[string]any{}
	}
	if value == "" {
		delete(h.annotations, key)
		return
	}
	h.annotations[key] = value
}

// A replica Memgraph reports diverged makes Degraded True (ReplicaDiverged) naming it; the
// rebuild annotation unregisters it (one UNREGISTER, proven safe beside another caught-up Sync
// replica) and holds it; its pod back on a fresh volume stays unregistered until the annotation
// goes, is then registered again, recovers from the MAIN, and Degraded clears.
func TestDivergedReplicaIsReportedAndRebuilt(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, 3, 3, func(c *harnessConfig) { c.hook.Registerer = reg })
	h.bootstrap()
	h.assertConverged()
	h.must(h.world.Commit("memgraph", 5))
	h.must(h.world.Diverge(h.hostOf("memgraph-data-2")))

	h.world.ResetLog()
	h.sync()
	if got := h.replicaStates()["instance_2"]; got != memgraph.ReplicaReady {
		t.Errorf("within 30 s of the last read, status.replicas says %q: the record read last, ready", got)
	}
	if n := countQueries(h, memgraph.ShowReplicasQuery); n != 0 {
		t.Errorf("a converged sync within 30 s of the last read sent SHOW REPLICAS %d times", n)
	}
	h.advance(hookmetrics.ReplicaRefresh)
	h.sync()
	if diff := cmp.Diff(map[string]string{"instance_1": "ready", "instance_2": "diverged"}, h.replicaStates()); diff != "" {
		t.Errorf("status.replicas (-want +got):\n%s", diff)
	}
	msg := h.assertCondition(v1alpha1.ConditionDegraded, "True", v1alpha1.ReasonReplicaDiverged)
	for _, want := range []string{"instance_2 is diverged", "kubectl memgraph rebuild memgraph <instance>"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Degraded %q lacks %q", msg, want)
		}
	}
	h.assertCondition(v1alpha1.ConditionConverged, "True", v1alpha1.ReasonAllInstancesRegistered)
	labels := map[string]string{"namespace": "default", "name": "memgraph", "instance": "instance_2"}
	if got := metricValue(t, reg, "memgraph_hooks_replica_state", with(labels, "state", "diverged")); got != 1 {
		t.Errorf("replica_state{state=diverged} = %v, want 1", got)
	}
	if got := metricValue(t, reg, "memgraph_hooks_replica_degraded", with(labels, "reason", "ReplicaDiverged")); got != 1 {
		t.Errorf("replica_degraded{reason=ReplicaDiverged} = %v, want 1", got)
	}

	h.annotate(topology.AnnotationRebuild, "instance_2")
	h.world.ResetLog()
	h.sync()
	if diff := cmp.Diff([]string{"UNREGISTER INSTANCE instance_2"}, h.boltWrites()); diff != "" {
		t.Fatalf("writes of the rebuild (-want +got):\n%s", diff)
	}
	h.assertCondition(v1alpha1.ConditionRebuild, "True", v1alpha1.ReasonRebuildHeld)
	h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonRebuildInProgress)
	if got := h.statusField("rebuild", "phase"); got != string(v1alpha1.RebuildHeld) {
		t.Errorf("status.rebuild.phase = %q, want Held", got)
	}
	if _, listed := h.replicaStates()["instance_2"]; listed {
		t.Errorf("status.replicas still lists the unregistered instance_2: %v", h.replicaStates())
	}
	if msg := h.assertCondition(v1alpha1.ConditionDegraded, "True", v1alpha1.ReasonMembersDown); !strings.Contains(msg, "held unregistered for a rebuild") {
		t.Errorf("Degraded %q does not say instance_2 is held for a rebuild", msg)
	}

	h.replaceVolume("memgraph-data-2")
	for range 3 { // the pod is gone, then back on a fresh volume: held all along
		h.world.ResetLog()
		h.sync()
		if w := h.boltWrites(); len(w) != 0 {
			t.Fatalf("writes while the rebuild holds instance_2: %q", w)
		}
	}
	h.assertCondition(v1alpha1.ConditionRebuild, "True", v1alpha1.ReasonRebuildHeld)

	h.annotate(topology.AnnotationRebuild, "")
	h.world.ResetLog()
	h.sync()
	if w := h.boltWrites(); len(w) != 1 || !strings.HasPrefix(w[0], "REGISTER INSTANCE instance_2 WITH CONFIG") {
		t.Fatalf("writes once the annotation is gone: %q, want instance_2 registered again", w)
	}
	h.advance(hookmetrics.ReplicaRefresh)
	h.sync()
	if diff := cmp.Diff(map[string]string{"instance_1": "ready", "instance_2": "ready"}, h.replicaStates()); diff != "" {
		t.Errorf("status.replicas after the rebuild (-want +got):\n%s", diff)
	}
	h.assertCondition(v1alpha1.ConditionDegraded, "False", v1alpha1.ReasonAllMembersUp)
	h.assertConverged()
	if st, _, _ := h.condition(v1alpha1.ConditionRebuild); st != "" || h.statusField("rebuild", "phase") != "" {
		t.Errorf("the Rebuild condition or status.rebuild outlives the annotation")
	}
	if got := metricValue(t, reg, "memgraph_hooks_replica_state", with(labels, "state", "ready")); got != 1 {
		t.Errorf("replica_state{state=ready} = %v after the rebuild, want 1", got)
	}
	if n, main := h.world.Committed(h.hostOf("memgraph-data-2"))["memgraph"], h.world.Committed(h.hostOf("memgraph-data-0"))["memgraph"]; n != main || n == 0 {
		t.Errorf("the rebuilt replica holds %d transactions, the MAIN %d", n, main)
	}
	h.assertNoMisuse()
}

// The annotation naming the MAIN: the Rebuild condition refuses with the remedy, nothing is sent;
// naming the last Sync replica caught up with the MAIN: it waits, nothing is sent.
func TestRebuildRefusesTheMainAndTheLastSyncCopy(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.bootstrap()
	h.assertConverged()
	for _, tc := range []struct {
		instance string
		reason   v1alpha1.ConditionReason
		msg      string
	}{
		{"instance_0", v1alpha1.ReasonRebuildRefused, "instance_0 is MAIN: the hook never rebuilds the MAIN"},
		{"instance_1", v1alpha1.ReasonRebuildWaiting, "instance_1 is the last Sync replica caught up with MAIN instance_0"},
		{"instance_5", v1alpha1.ReasonRebuildRefused, "names no declared data instance"},
	} {
		h.annotate(topology.AnnotationRebuild, tc.instance)
		h.world.ResetLog()
		h.sync()
		if w := h.boltWrites(); len(w) != 0 {
			t.Errorf("%s: writes %q", tc.instance, w)
		}
		if msg := h.assertCondition(v1alpha1.ConditionRebuild, "False", tc.reason); !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: Rebuild %q lacks %q", tc.instance, msg, tc.msg)
		}
		h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonRebuildInProgress)
	}
	h.annotate(topology.AnnotationRebuild, "")
	h.sync()
	h.assertConverged()
	h.assertNoMisuse()
}

// A replica whose recoveries keep failing (Memgraph's recovery and invalid in turn) is reported
// ReplicaStuck once it has not been ready for spec.replicaHealth.stuckAfter, not before.
func TestStuckReplicaIsReportedAfterStuckAfter(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.spec["replicaHealth"] = map[string]any{"stuckAfter": "2m"}
	h.bootstrap()
	h.assertConverged()
	host := h.hostOf("memgraph-data-1")
	h.kill(host)
	h.must(h.world.Commit("memgraph", 3))
	h.must(h.world.FailRecovery(host, true))
	h.restart(host)
	h.advance(hookmetrics.ReplicaRefresh)
	h.sync()
	if got := h.replicaStates()["instance_1"]; got != memgraph.ReplicaInvalid && got != memgraph.ReplicaRecovery {
		t.Fatalf("instance_1 is %q, want recovery or invalid", got)
	}
	h.assertCondition(v1alpha1.ConditionDegraded, "False", v1alpha1.ReasonAllMembersUp)
	for range 3 {
		h.advance(hookmetrics.ReplicaRefresh + 500*time.Millisecond)
		h.sync()
	}
	h.assertCondition(v1alpha1.ConditionDegraded, "False", v1alpha1.ReasonAllMembersUp)
	h.advance(hookmetrics.ReplicaRefresh)
	h.sync()
	msg := h.assertCondition(v1alpha1.ConditionDegraded, "True", v1alpha1.ReasonReplicaStuck)
	if !strings.Contains(msg, "instance_1 is ") || !strings.Contains(msg, "has not been ready or replicating since 2026-01-01T") {
		t.Errorf("Degraded %q does not name instance_1, its state and since when", msg)
	}
	h.assertNoMisuse()
}

func countQueries(h *harness, text string) int {
	n := 0
	for _, q := range h.world.Queries() {
		if q.Text == text {
			n++
		}
	}
	return n
}

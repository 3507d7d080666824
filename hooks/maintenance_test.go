package hooks_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Hook releases and maintenance windows on the simulator. The harness's clock starts on
// Thursday 2026-01-01 at 00:00 UTC; the windows below open on Saturdays at 02:00 for 4 hours.

var saturdayWindow = []any{map[string]any{"schedule": "0 2 * * 6", "duration": "4h"}}

const nextSaturday = "2026-01-03T02:00:00Z"

// renderedByAnEarlierRelease makes the cluster's StatefulSets and pods what an earlier release of
// the hook left: templates without this release's additions (the coordinators' anti-affinity, an
// older backup agent), no record of what they were rendered from, every pod at that revision.
func (h *harness) renderedByAnEarlierRelease() {
	h.t.Helper()
	for _, set := range []string{topology.CoordinatorSetName(h.name), topology.DataSetName(h.name)} {
		sts := h.children["StatefulSet/"+set]
		meta := sts["metadata"].(map[string]any)
		annotations := meta["annotations"].(map[string]any)
		for _, k := range []string{topology.AnnotationSpecGeneration, topology.AnnotationHookRelease, topology.AnnotationTemplateChange,
			topology.AnnotationAgentImage, topology.AnnotationAgentProtocol} {
			delete(annotations, k)
		}
		pod := sts["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		if set == topology.DataSetName(h.name) {
			for _, c := range pod["containers"].([]any) {
				if c := c.(map[string]any); c["name"] == topology.BackupAgentContainer {
					c["image"] = "memgraph-hooks:v0.1.0"
				}
			}
		} else {
			delete(pod, "affinity")
		}
		earlier := "earlier-" + annotations[topology.AnnotationTemplateHash].(string)
		annotations[topology.AnnotationTemplateHash] = earlier
		for name, st := range h.podStates {
			if strings.HasPrefix(name, set+"-") {
				st.revision = earlier
			}
		}
		h.currentRevs[set] = earlier
		h.controller(set).revision = earlier
	}
}

// annotation is the value of an annotation on the StatefulSet set as last returned.
func (h *harness) setAnnotation(set, key string) string {
	annotations, _ := h.children["StatefulSet/"+set]["metadata"].(map[string]any)["annotations"].(map[string]any)
	v, _ := annotations[key].(string)
	return v
}

// heldCluster is a converged 3+2 cluster with Saturday windows whose StatefulSets an earlier
// release rendered, handed to this hook on Thursday: its first syncs.
func heldCluster(t *testing.T) *harness {
	h := newHarness(t, 3, 2)
	h.generations = true
	h.spec["maintenanceWindows"] = saturdayWindow
	h.bootstrap()
	h.assertConverged()
	h.renderedByAnEarlierRelease()
	for range 4 {
		h.sync()
	}
	return h
}

// assertHeld checks that nothing was replaced, both partitions hold every pod, the StatefulSets
// mark the change as the hook release's, and the status says what waits for which window while
// the cluster is Converged.
func (h *harness) assertHeld(next string) {
	h.t.Helper()
	if len(h.replaced) > 0 {
		h.t.Fatalf("pods replaced outside a window: %v", h.replaced)
	}
	if c, d := h.partitions(); c != 3 || d != 2 {
		h.t.Errorf("partitions %d/%d, want 3/2: every pod held", c, d)
	}
	for _, set := range []string{topology.CoordinatorSetName(h.name), topology.DataSetName(h.name)} {
		if got := h.setAnnotation(set, topology.AnnotationTemplateChange); got != topology.TemplateChangeHookRelease {
			h.t.Errorf("%s: %s = %q, want %q", set, topology.AnnotationTemplateChange, got, topology.TemplateChangeHookRelease)
		}
	}
	msg := h.assertCondition(v1alpha1.ConditionUpdated, "False", v1alpha1.ReasonWaitingForMaintenanceWindow)
	if !strings.Contains(msg, "at "+next) {
		h.t.Errorf("Updated %q does not name the next window, %s", msg, next)
	}
	h.assertConverged()
}

// rollToTheEnd syncs until the rollout is done, checking that at most one pod is down and that
// the MAIN and the leader are handed over before their pods go.
func (h *harness) rollToTheEnd() {
	h.t.Helper()
	w := h.watchRollout(false)
	for i := 0; i < 60; i++ {
		h.sync()
		w.observe(h)
		if st, reason, _ := h.condition(v1alpha1.ConditionUpdated); st == "True" && reason == v1alpha1.ReasonUpToDate {
			break
		}
	}
	w.check(h.t.(*testing.T))
	if w.maxDown > 1 {
		h.t.Errorf("%d pods down at once", w.maxDown)
	}
	h.assertCondition(v1alpha1.ConditionUpdated, "True", v1alpha1.ReasonUpToDate)
	for range 2 {
		h.sync()
	}
	h.assertConverged()
}

// A hook release's template change waits for the window: every pod keeps running outside it, a
// switchover and an edit of the windows meanwhile change nothing of that, and once the window
// opens every pod rolls, one at a time; the mark goes when the rollout is done.
func TestAHookReleaseWaitsForTheMaintenanceWindow(t *testing.T) {
	h := heldCluster(t)
	h.assertHeld(nextSaturday)
	if got := h.setAnnotation(topology.DataSetName(h.name), topology.AnnotationAgentImage); got != topology.DefaultAgentImage {
		t.Errorf("the data pods' agent is pinned to %q, want the hook's %q", got, topology.DefaultAgentImage)
	}

	h.spec["preferredMain"] = "instance_1" // a spec edit that changes no template
	for range 4 {
		h.sync()
	}
	h.assertMains("instance_1")
	h.spec["maintenanceWindows"] = []any{saturdayWindow[0], map[string]any{"schedule": "30 23 * * 5", "duration": "1h"}}
	h.sync()
	h.assertHeld("2026-01-02T23:30:00Z")

	h.advance(50*time.Hour + 30*time.Minute) // Saturday 02:30
	h.rollToTheEnd()
	if len(h.replaced) != 5 {
		t.Errorf("replaced %v, want each of the 5 pods once", h.replaced)
	}
	for _, set := range []string{topology.CoordinatorSetName(h.name), topology.DataSetName(h.name)} {
		if got := h.setAnnotation(set, topology.AnnotationTemplateChange); got != "" {
			t.Errorf("%s still marks a pending change (%q) after the rollout", set, got)
		}
		if got := h.setAnnotation(set, topology.AnnotationHookRelease); got != topology.TemplateRelease {
			t.Errorf("%s: %s = %q, want %q", set, topology.AnnotationHookRelease, got, topology.TemplateRelease)
		}
	}
	h.assertNoMisuse()
}

// The window closes in the middle of the rollout: nothing further is released, and the pod already
// replaced stays at the new revision until the next window.
func TestAWindowClosingHoldsTheRestOfTheRollout(t *testing.T) {
	h := heldCluster(t)
	h.advance(50*time.Hour + 30*time.Minute)
	for i := 0; i < 20 && len(h.replaced) == 0; i++ {
		h.sync()
	}
	if len(h.replaced) != 1 {
		t.Fatalf("replaced %v in the window, want one pod", h.replaced)
	}
	h.advance(4 * time.Hour) // 06:30: closed
	for range 6 {
		h.sync()
	}
	if len(h.replaced) != 1 {
		t.Fatalf("replaced %v after the window closed", h.replaced)
	}
	if c, d := h.partitions(); c != 3 || d != 1 {
		t.Errorf("partitions %d/%d, want 3/1: the replaced pod stays released", c, d)
	}
	msg := h.assertCondition(v1alpha1.ConditionUpdated, "False", v1alpha1.ReasonWaitingForMaintenanceWindow)
	if !strings.Contains(msg, "at 2026-01-10T02:00:00Z") || !strings.Contains(msg, "1 of 5 pods updated") {
		t.Errorf("Updated: %q", msg)
	}
	h.assertNoMisuse()
}

// What the user asks for is never held: a change to the spec rolls at once, and carries the
// hook release's change with it; a restart (kubectl memgraph restart) applies it now.
func TestTheUsersChangesRollPastAClosedWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(h *harness)
	}{
		{"a new image", func(h *harness) { h.spec["image"] = map[string]any{"tag": "3.12.1"} }},
		{"a restart", func(h *harness) {
			h.annotations = map[string]any{topology.AnnotationRestartedAt: "2026-01-01T06:00:00Z"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := heldCluster(t)
			h.assertHeld(nextSaturday)
			tc.edit(h)
			h.rollToTheEnd()
			if len(h.replaced) != 5 {
				t.Errorf("replaced %v, want each of the 5 pods once", h.replaced)
			}
			h.assertNoMisuse()
		})
	}
}

// Without windows, a hook release's change rolls at once, as every change did before windows.
func TestWithoutWindowsAHookReleaseRollsAtOnce(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.generations = true
	h.bootstrap()
	h.renderedByAnEarlierRelease()
	h.rollToTheEnd()
	if len(h.replaced) != 5 {
		t.Errorf("replaced %v, want each of the 5 pods once", h.replaced)
	}
	h.assertNoMisuse()
}

// A safety action is never held: a drain of the MAIN's node hands MAIN over while the hook
// release's change waits, and no pod is replaced for it.
func TestADrainIsNotHeldByAClosedWindow(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.generations = true
	h.spec["maintenanceWindows"] = saturdayWindow
	h.spreadOverNodes()
	h.bootstrap()
	h.assertMains("instance_0")
	h.renderedByAnEarlierRelease()
	h.sync()
	h.cordonNode("n1")
	for range 4 {
		h.sync()
	}
	if mains := h.mains(); len(mains) != 1 || mains[0] == "instance_0" {
		t.Errorf("MAIN %v after the MAIN's node was cordoned: the drain's handover was held", mains)
	}
	if len(h.replaced) > 0 {
		t.Errorf("pods replaced outside a window: %v", h.replaced)
	}
	h.assertCondition(v1alpha1.ConditionUpdated, "False", v1alpha1.ReasonWaitingForMaintenanceWindow)
	h.assertNoMisuse()
}

// The backup agent's image is pinned per cluster: a new hook with another --agent-image changes
// no template of a cluster it takes over (the pin stays), and a new cluster gets the new image.
func TestTheAgentImageStaysPinnedAcrossHookReleases(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.generations = true
	h.bootstrap()
	h.assertConverged()
	before := map[string]string{}
	for _, set := range []string{topology.CoordinatorSetName(h.name), topology.DataSetName(h.name)} {
		before[set] = h.setAnnotation(set, topology.AnnotationTemplateHash)
	}
	h.handler = hooks.NewHandler(hooks.Config{Connector: h.pool, SyncBudget: 5 * time.Second, Now: h.clock.Now,
		AgentSecretData: fixedAgentSecret, AgentImage: "registry.example/memgraph-hooks:v0.2.1"})
	for range 3 {
		h.sync()
	}
	for set, hash := range before {
		if got := h.setAnnotation(set, topology.AnnotationTemplateHash); got != hash {
			t.Errorf("%s's template changed (%s → %s) with the hook's --agent-image", set, hash, got)
		}
	}
	if got := h.setAnnotation(topology.DataSetName(h.name), topology.AnnotationAgentImage); got != topology.DefaultAgentImage {
		t.Errorf("the agent's pin is %q, want the first release's %q", got, topology.DefaultAgentImage)
	}
	if len(h.replaced) > 0 {
		t.Errorf("pods replaced: %v", h.replaced)
	}
}

// Two hook processes (each its own Bolt pool, locks and caches) serve every sync of one cluster at
// once while it scales up, rolls every pod (a restart: handovers of the MAIN and the leadership
// before their pods), switches over and scales down: Memgraph sees no misuse and the cluster
// converges, without a single misuse. (A rollout across Memgraph versions is left out: its last handover makes a newer
// MAIN over the old MAIN, which the simulator excuses only right after that MAIN's DEMOTE, and
// the other process's refused DEMOTE of it comes in between.)
func TestTwoHookProcessesServeOneClusterAtOnce(t *testing.T) {
	h := newHarness(t, 3, 2, withMainlessSettle(0))
	other := bolt.NewPool(bolt.PoolOptions{Resolver: h.world})
	t.Cleanup(func() { _ = other.Close() })
	second := hooks.NewHandler(hooks.Config{Connector: other, SyncBudget: 5 * time.Second, Now: h.clock.Now, AgentSecretData: fixedAgentSecret})
	both := &concurrentHooks{handlers: []http.Handler{h.handler, second}}
	h.bootstrap() // the first election's race is TestConcurrentSyncsFromTwoHookReplicasConverge's
	h.assertConverged()
	h.handler = both
	for _, step := range []struct {
		name string
		edit func()
	}{
		{"scale up", func() { h.spec["dataInstances"] = 3 }},
		{"restart", func() { h.annotations = map[string]any{topology.AnnotationRestartedAt: "2026-01-01T06:00:00Z"} }},
		{"switchover", func() { h.spec["preferredMain"] = "instance_2" }},
		{"scale down", func() { h.spec["dataInstances"], h.spec["preferredMain"] = 2, "instance_1" }},
	} {
		step.edit()
		for i := 0; i < 40; i++ {
			h.sync()
			if st, _, _ := h.condition(v1alpha1.ConditionConverged); st == "True" && i > 2 {
				break
			}
		}
		h.assertConverged()
		h.assertNoMisuse()
	}
	if both.calls.Load() == 0 {
		t.Fatal("the second process served no sync")
	}
	if len(h.replaced) < 6 {
		t.Errorf("replaced %v: the restart did not roll the six pods", h.replaced)
	}
}

// concurrentHooks sends every request to each handler at once and answers with one of their
// answers, in turn: two replicas behind one Service at their most overlapped.
type concurrentHooks struct {
	handlers []http.Handler
	turn     atomic.Int64
	calls    atomic.Int64 // requests the second handler served
}

func (c *concurrentHooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	answers := make([]*httptest.ResponseRecorder, len(c.handlers))
	var wg sync.WaitGroup
	for i, handler := range c.handlers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := r.Clone(r.Context())
			req.Body = io.NopCloser(bytes.NewReader(body))
			answers[i] = httptest.NewRecorder()
			handler.ServeHTTP(answers[i], req)
		}()
	}
	wg.Wait()
	c.calls.Add(1)
	answer := answers[int(c.turn.Add(1))%len(answers)]
	for k, v := range answer.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(answer.Code)
	_, _ = w.Write(answer.Body.Bytes())
}

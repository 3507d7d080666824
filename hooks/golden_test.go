package hooks_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// goldenDir holds the hook's responses as they were before the converged sync was optimised:
// a faster sync must answer exactly as the slower one did. Regenerate with
// go test ./hooks -run TestGoldenResponses -update only for a change meant to alter them.
const goldenDir = "testdata/golden"

// goldenClock is the fixed time every golden response is rendered at.
var goldenClock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestGoldenResponses replays every example request (examples/hook-requests) and the converged
// sync of several cluster sizes, and compares each response, as parsed JSON, with its golden file.
func TestGoldenResponses(t *testing.T) {
	for name, resp := range goldenResponses(t) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(goldenDir, name+".json")
			if *update {
				writeGolden(t, path, resp)
				return
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./hooks -run TestGoldenResponses -update)", err)
			}
			var want, got any
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(resp, &got); err != nil {
				t.Fatalf("response is not JSON: %v\n%s", err, resp)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("response differs from %s (-want +got):\n%s", path, diff)
			}
		})
	}
}

// goldenResponses answers each golden case: name → response body.
func goldenResponses(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	h := newHarness(t, 3, 2, withNow(goldenClock))
	out["example-sync-new-cluster"] = postFile(t, h, "/sync", "sync-new-cluster.json")
	h.reconcileFromFile(t, "sync-new-cluster.json", v1alpha1.ReasonWorkloadsNotReady)
	h.reconcilePodsForDeclared()
	out["example-sync-pods-ready-bootstrap"] = postFile(t, h, "/sync", "sync-pods-ready.json")
	// The same request again: Memgraph is at its declaration, and the PodDisruptionBudgets the
	// request does not carry yet hold Converged (DisruptionBudgetMoving).
	out["example-sync-pods-ready-repeated"] = postFile(t, h, "/sync", "sync-pods-ready.json")
	out["example-customize"] = postFile(t, h, "/customize", "customize.json")
	for _, size := range [][2]int{{3, 1}, {3, 2}, {5, 4}, {7, 15}} {
		c := convergedHarness(t, size[0], size[1])
		code, body := c.post("/sync", c.request())
		if code != http.StatusOK {
			t.Fatalf("%d/%d: %d %s", size[0], size[1], code, body)
		}
		out[fmt.Sprintf("converged-%dx%d", size[0], size[1])] = body
	}
	goldenDayTwo(t, out)
	return out
}

// goldenDayTwo adds the passes whose children are not the converged ones: a pause holding a
// shrink (children frozen as observed, a human's label kept), each pass of hibernating and waking
// (the window and the kept claims), and each pass of a rollout (partitions), paused in its
// middle. Each pass is applied as Metacontroller would before the next.
func goldenDayTwo(t *testing.T, out map[string][]byte) {
	h := newHarness(t, 3, 3)
	h.keepVolumes = true // the claims outlive the pods, as hibernation keeps them
	h.generations = true // each edit of the spec is a generation: the new image is the spec's change
	h.bootstrap()
	h.assertConverged()
	h.pauseAShrinkWithAHumanEdit()
	out["paused-3x3-shrink-pending"] = goldenSync(h)
	h.annotations = nil
	h.scale(3, 3)
	h.sync()
	h.assertConverged()

	h.spec["hibernate"] = true
	for i := 1; i <= 4; i++ {
		h.advance(10 * time.Second)
		out[fmt.Sprintf("hibernate-3x3-pass-%d", i)] = goldenSync(h)
	}
	h.spec["hibernate"] = false
	for i := 1; i <= 3; i++ {
		h.advance(5 * time.Second)
		out[fmt.Sprintf("wake-3x3-pass-%d", i)] = goldenSync(h)
	}
	for range 30 {
		h.advance(5 * time.Second)
		h.sync()
		if st, _, _ := h.condition(v1alpha1.ConditionConverged); st == "True" && len(h.pods) == 6 {
			break
		}
	}
	h.assertConverged()

	h.setTag("3.12.1")
	for i := 1; i <= 6; i++ {
		h.advance(5 * time.Second)
		out[fmt.Sprintf("rollout-3x3-pass-%d", i)] = goldenSync(h)
	}
	h.annotations = map[string]any{topology.AnnotationPaused: "true"}
	out["rollout-3x3-paused"] = goldenSync(h)
}

// goldenSync posts one sync, applies it as harness.sync does, and returns its body.
func goldenSync(h *harness) []byte {
	h.t.Helper()
	code, body := h.post("/sync", h.request())
	h.record("", code, body)
	return body
}

// convergedHarness is a coordinators+data cluster on the simulator after the syncs that
// converge it, its clock fixed at goldenClock.
func convergedHarness(t testing.TB, coordinators, data int) *harness {
	t.Helper()
	h := newHarness(t, coordinators, data, withNow(goldenClock))
	h.bootstrap()
	h.sync()
	h.assertConverged()
	return h
}

func postFile(t *testing.T, h *harness, path, name string) []byte {
	t.Helper()
	code, body := h.post(path, readJSON(t, name))
	if code != http.StatusOK {
		t.Fatalf("%s %s: %d %s", path, name, code, body)
	}
	return body
}

func writeGolden(t *testing.T, path string, resp []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(resp, &v); err != nil {
		t.Fatal(err)
	}
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

package hooks_test

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite golden files and example request files")

// requestsDir holds the request files README's "Debugging with curl" section posts to a hook
// started with --simulate. They are rendered here, so they always match what Metacontroller
// would send for examples/minimal-cluster.yaml, and replayed below.
const requestsDir = "../examples/hook-requests"

func withNow(t time.Time) harnessOption {
	return func(c *harnessConfig) { c.hook.Now = func() time.Time { return t } }
}

func renderRequests(t *testing.T) map[string]any {
	h := newHarness(t, 3, 2, withNow(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	files := map[string]any{
		"customize.json":        map[string]any{"controller": h.request()["controller"], "parent": h.parent()},
		"sync-new-cluster.json": h.request(),
	}
	h.sync()
	// Scheduled pods carry their node, as the scheduler spreads them over three nodes.
	h.placePods([]string{"node-1", "node-2", "node-3"}, []string{"node-1", "node-2"})
	files["sync-pods-ready.json"] = h.request()
	return files
}

func TestRequestFilesAreCurrent(t *testing.T) {
	for name, req := range renderRequests(t) {
		path := filepath.Join(requestsDir, name)
		want, err := json.MarshalIndent(req, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./hooks -update)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s is stale; run go test ./hooks -update (-want +got):\n%s", path, diff)
		}
	}
}

// Replaying the files against a fresh simulated cluster does what README says: the new cluster
// waits for its pods; once they are Ready one sync registers everything. The file carries no
// MAIN's PodDisruptionBudget (Metacontroller sends it once it applied the hook's answer), so
// Converged says the data budget has yet to leave the MAIN's pod out, however often it is posted.
func TestRequestFilesReplay(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.reconcileFromFile(t, "sync-new-cluster.json", v1alpha1.ReasonWorkloadsNotReady)
	h.reconcilePodsForDeclared()
	h.reconcileFromFile(t, "sync-pods-ready.json", v1alpha1.ReasonDisruptionBudgetMoving)
	h.reconcileFromFile(t, "sync-pods-ready.json", v1alpha1.ReasonDisruptionBudgetMoving)
	code, body := h.post("/customize", readJSON(t, "customize.json"))
	if code != http.StatusOK {
		t.Errorf("customize.json: %d %s", code, body)
	}
	h.assertNoMisuse()
}

func (h *harness) reconcileFromFile(t *testing.T, name string, wantReason v1alpha1.ConditionReason) {
	t.Helper()
	code, body := h.post("/sync", readJSON(t, name))
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", name, code, body)
	}
	if err := json.Unmarshal(body, &h.lastResp); err != nil {
		t.Fatal(err)
	}
	if _, reason, msg := h.condition(v1alpha1.ConditionConverged); reason != wantReason {
		t.Errorf("%s: Converged reason %s (%s), want %s", name, reason, msg, wantReason)
	}
}

// reconcilePodsForDeclared starts the simulated instances of the declared 3+2 cluster.
func (h *harness) reconcilePodsForDeclared() {
	h.children = map[string]map[string]any{}
	for _, c := range h.lastResp.Children {
		h.children[c["kind"].(string)+"/"+c["metadata"].(map[string]any)["name"].(string)] = c
	}
	h.reconcilePods()
}

func readJSON(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(requestsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

//go:build e2e

package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// earlierRelease plays, while on, a hook release before the StatefulSets' record: its sync
// answers carry no record and no agent pin, templates without the default
// topologySpreadConstraints (what docs/upgrades.md's v0.2.0 entry says that release adds), and
// the hash annotation of that earlier template. The requests get the hook's own hash back, so the
// hook renders as it would for a cluster it has always run; only the children differ, as the
// earlier release's golden children would.
type earlierRelease struct{ on atomic.Bool }

const earlierHashPrefix = "earlier-"

func (e *earlierRelease) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !e.on.Load() || r.URL.Path != "/sync" {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err == nil {
			body, err = rewriteJSON(body, ownHashes)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		if rec.Code == http.StatusOK {
			if out, err = rewriteJSON(out, earlierChildren); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		maps.Copy(w.Header(), rec.Header())
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(out)
	})
}

func rewriteJSON(raw []byte, rewrite func(map[string]any)) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	rewrite(m)
	return json.Marshal(m)
}

// ownHashes gives the observed StatefulSets of a sync request the hook's own template hash.
func ownHashes(req map[string]any) {
	children, _ := req["children"].(map[string]any)
	sets, _ := children["StatefulSet.apps/v1"].(map[string]any)
	for _, obj := range sets {
		ann, _, _ := unstructured.NestedMap(obj.(map[string]any), "metadata", "annotations")
		if h, ok := ann[topology.AnnotationTemplateHash].(string); ok {
			ann[topology.AnnotationTemplateHash] = strings.TrimPrefix(h, earlierHashPrefix)
			_ = unstructured.SetNestedMap(obj.(map[string]any), ann, "metadata", "annotations")
		}
	}
}

// earlierChildren renders a sync answer's StatefulSets as the earlier release did.
func earlierChildren(resp map[string]any) {
	children, _ := resp["children"].([]any)
	for _, c := range children {
		obj := c.(map[string]any)
		if obj["kind"] != "StatefulSet" {
			continue
		}
		ann, _, _ := unstructured.NestedMap(obj, "metadata", "annotations")
		for _, k := range []string{topology.AnnotationSpecGeneration, topology.AnnotationHookRelease, topology.AnnotationTemplateChange,
			topology.AnnotationAgentImage, topology.AnnotationAgentProtocol} {
			delete(ann, k)
		}
		ann[topology.AnnotationTemplateHash] = earlierHashPrefix + ann[topology.AnnotationTemplateHash].(string)
		_ = unstructured.SetNestedMap(obj, ann, "metadata", "annotations")
		unstructured.RemoveNestedField(obj, "spec", "template", "spec", "topologySpreadConstraints")
	}
}

// Clusters an earlier hook release converged are handed to this one. The cluster with a closed
// maintenance window keeps every pod (each StatefulSet's partition holds them) and says
// WaitingForMaintenanceWindow with the next window's start; the cluster without windows rolls at
// once; once the window is opened, the held cluster rolls one pod at a time and converges.
func TestAHookUpgradeWaitsForTheMaintenanceWindow(t *testing.T) {
	held, open := &earlierRelease{}, &earlierRelease{}
	held.on.Store(true)
	open.on.Store(true)
	hs := startScenarioOpts(t, "window-held", scenarioOptions{wrap: held.wrap})
	free := startScenarioOpts(t, "window-none", scenarioOptions{wrap: open.wrap})
	closedAt := (time.Now().UTC().Hour() + 12) % 24
	hs.create("held", fmt.Sprintf("maintenanceWindows: [{schedule: \"0 %d * * *\", duration: 1h}]", closedAt))
	free.create("rolls", "{}")
	hs.waitConverged("held", convergeTimeout)
	free.waitConverged("rolls", convergeTimeout)
	heldPods, rollPods := hs.podUIDs("held"), free.podUIDs("rolls")

	started := time.Now()
	held.on.Store(false)
	open.on.Store(false)
	free.waitRolloutStarted("rolls")
	free.waitConverged("rolls", rolloutTimeout)
	free.everyPodReplaced("rolls", rollPods)
	t.Logf("the cluster without windows rolled in %s", time.Since(started).Round(time.Second))

	next := fmt.Sprintf("T%02d:00:00Z", closedAt)
	hs.waitStatus("held", "Updated=False WaitingForMaintenanceWindow", time.Minute, func(u *unstructured.Unstructured) error {
		st, reason, msg := conditionStatus(u, string(topology.ConditionUpdated))
		if st != "False" || reason != string(topology.ReasonWaitingForMaintenanceWindow) || !strings.Contains(msg, next) {
			return fmt.Errorf("Updated=%q %s: %s; want False WaitingForMaintenanceWindow naming the window at %s", st, reason, msg, next)
		}
		return nil
	})
	hs.partitionsHold("held")
	if diff := diffUIDs(heldPods, hs.podUIDs("held")); diff != "" {
		t.Errorf("pods of the held cluster replaced outside its window: %s", diff)
	}

	rec := hs.recordRollout("held", 3, 2) // stopped by the test's cleanup
	hs.patchSpec("held", `{"maintenanceWindows":[{"schedule":"* * * * *","duration":"168h"}]}`)
	hs.waitRolloutStarted("held")
	hs.waitConverged("held", rolloutTimeout)
	hs.everyPodReplaced("held", heldPods)
	rec.mu.Lock()
	for _, v := range rec.violations {
		t.Error(v)
	}
	if rec.maxDown > 1 {
		t.Errorf("%d pods of the held cluster were down at once: %v", rec.maxDown, rec.downAt)
	}
	rec.mu.Unlock()
	hs.assertNoMisuse()
	free.assertNoMisuse()
}

// diffUIDs lists the pods whose UID changed or that went.
func diffUIDs(before, after map[string]types.UID) string {
	var changed []string
	for pod, uid := range before {
		if after[pod] != uid {
			changed = append(changed, pod)
		}
	}
	return strings.Join(changed, ", ")
}

//go:build e2e

package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// earlierRelease plays, while on, hook release v0.1.0: its sync answers carry that release's
// StatefulSets, as it rendered them for a converged reference cluster (testdata/releases: the
// golden of v0.1.0's children, its README says how it was made) with the cluster's name and
// namespace put in, at the replicas, partitions and ordinals this hook's pass decides (what each
// release decides alike while it bootstraps and converges a cluster). Their pod-template hash is
// this hook's own, marked: the requests get it back unmarked, so while on the hook passes as it
// would for a cluster it has always run; only the children are the earlier release's.
type earlierRelease struct {
	on     atomic.Bool
	golden map[string]map[string]any // the release's StatefulSets by role: coordinator, data
}

const (
	earlierHashPrefix = "earlier-"
	// earlierGolden holds the StatefulSets, rendered for cluster goldenCluster in namespace
	// goldenNamespace.
	earlierGolden   = "testdata/releases/v0.1.0.json"
	goldenCluster   = "relcluster"
	goldenNamespace = "relns"
)

func newEarlierRelease(t *testing.T) *earlierRelease {
	t.Helper()
	raw, err := os.ReadFile(earlierGolden)
	if err != nil {
		t.Fatal(err)
	}
	var sets map[string]map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&sets); err != nil {
		t.Fatalf("%s: %v", earlierGolden, err)
	}
	e := &earlierRelease{golden: map[string]map[string]any{
		topology.RoleCoordinator: sets[topology.CoordinatorSetName(goldenCluster)], topology.RoleData: sets[topology.DataSetName(goldenCluster)]}}
	for role, set := range e.golden {
		if set == nil {
			t.Fatalf("%s has no %s StatefulSet of cluster %s", earlierGolden, role, goldenCluster)
		}
	}
	e.on.Store(true)
	return e
}

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
			if out, err = rewriteJSON(out, e.children); err != nil {
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

// children replaces a sync answer's StatefulSets by the earlier release's.
func (e *earlierRelease) children(resp map[string]any) {
	children, _ := resp["children"].([]any)
	for i, c := range children {
		if obj := c.(map[string]any); obj["kind"] == "StatefulSet" {
			children[i] = e.statefulSet(obj)
		}
	}
}

// statefulSet is the earlier release's StatefulSet in place of ours, which gives the cluster's
// name and namespace, spec.replicas, spec.updateStrategy (the partition), spec.ordinals and the
// template hash.
func (e *earlierRelease) statefulSet(ours map[string]any) map[string]any {
	name, _, _ := unstructured.NestedString(ours, "metadata", "name")
	namespace, _, _ := unstructured.NestedString(ours, "metadata", "namespace")
	role, cluster := topology.RoleCoordinator, strings.TrimSuffix(name, "-"+topology.RoleCoordinator)
	if cluster == name {
		role, cluster = topology.RoleData, strings.TrimSuffix(name, "-"+topology.RoleData)
	}
	raw, _ := json.Marshal(e.golden[role])
	raw = bytes.ReplaceAll(bytes.ReplaceAll(raw, []byte(goldenCluster), []byte(cluster)), []byte(goldenNamespace), []byte(namespace))
	var set map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	_ = d.Decode(&set) // a copy of what newEarlierRelease decoded
	for _, field := range [][]string{{"spec", "replicas"}, {"spec", "updateStrategy"}, {"spec", "ordinals"}} {
		unstructured.RemoveNestedField(set, field...)
		if v, ok, _ := unstructured.NestedFieldNoCopy(ours, field...); ok {
			_ = unstructured.SetNestedField(set, v, field...)
		}
	}
	hash, _, _ := unstructured.NestedString(ours, "metadata", "annotations", topology.AnnotationTemplateHash)
	_ = unstructured.SetNestedField(set, earlierHashPrefix+hash, "metadata", "annotations", topology.AnnotationTemplateHash)
	return set
}

// Clusters an earlier hook release converged are handed to this one. The cluster with a closed
// maintenance window keeps every pod (each StatefulSet's partition holds them) and says
// WaitingForMaintenanceWindow with the next window's start; the cluster without windows rolls at
// once; once the window is opened, the held cluster rolls one pod at a time and converges.
func TestAHookUpgradeWaitsForTheMaintenanceWindow(t *testing.T) {
	held, open := newEarlierRelease(t), newEarlierRelease(t)
	hs := startScenarioOpts(t, "window-held", scenarioOptions{wrap: held.wrap})
	free := startScenarioOpts(t, "window-none", scenarioOptions{wrap: open.wrap})
	closedAt := (time.Now().UTC().Hour() + 12) % 24
	hs.create("held", fmt.Sprintf("maintenanceWindows: [{schedule: \"0 %d * * *\", duration: 1h}]", closedAt))
	free.create("rolls", "{}")
	hs.waitConverged("held", convergeTimeout)
	free.waitConverged("rolls", convergeTimeout)
	heldPods, rollPods := hs.podUIDs("held"), free.podUIDs("rolls")
	hs.runsEarlierTemplates("held", held)

	started := time.Now()
	held.on.Store(false)
	open.on.Store(false)
	free.waitRolloutStarted("rolls")
	free.waitConverged("rolls", rolloutTimeout)
	free.everyPodReplaced("rolls", rollPods)
	t.Logf("the cluster without windows rolled in %s", time.Since(started).Round(time.Second))

	next := fmt.Sprintf("T%02d:00:00Z", closedAt)
	hs.waitStatus("held", "Updated=False WaitingForMaintenanceWindow", time.Minute, func(u *unstructured.Unstructured) error {
		st, reason, msg := conditionStatus(u, string(v1alpha1.ConditionUpdated))
		if st != "False" || reason != string(v1alpha1.ReasonWaitingForMaintenanceWindow) || !strings.Contains(msg, next) {
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

// runsEarlierTemplates checks that cluster's StatefulSets, as stored, run the pod templates of
// release e: it converged with them.
func (s *scenario) runsEarlierTemplates(cluster string, e *earlierRelease) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for role, set := range map[string]string{topology.RoleCoordinator: topology.CoordinatorSetName(cluster), topology.RoleData: topology.DataSetName(cluster)} {
		sts, err := testEnv.Client.AppsV1().StatefulSets(s.ns).Get(ctx, set, metav1.GetOptions{})
		if err != nil {
			s.t.Fatal(err)
		}
		want, _, _ := unstructured.NestedMap(e.statefulSet(map[string]any{"metadata": map[string]any{"name": set, "namespace": s.ns}}), "spec", "template", "spec")
		got := sts.Spec.Template.Spec
		wantSpread, _, _ := unstructured.NestedSlice(want, "topologySpreadConstraints")
		wantImages := []string{}
		for _, c := range want["containers"].([]any) {
			wantImages = append(wantImages, c.(map[string]any)["image"].(string))
		}
		gotImages := []string{}
		for _, c := range got.Containers {
			gotImages = append(gotImages, c.Image)
		}
		if len(got.TopologySpreadConstraints) != len(wantSpread) || (got.Affinity != nil) != (want["affinity"] != nil) || !slices.Equal(gotImages, wantImages) {
			s.t.Fatalf("StatefulSet %s (%s) does not run release v0.1.0's template: spread %v, affinity %v, images %v; want %v, %v, %v",
				set, role, got.TopologySpreadConstraints, got.Affinity, gotImages, wantSpread, want["affinity"], wantImages)
		}
	}
}

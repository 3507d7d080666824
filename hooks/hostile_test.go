package hooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
)

// A hostile input is one that would take the hook down for every cluster: a number
// in the request that the hook allocated for. Each must now get a 400 or a correct 200, with
// memory bounded by the request's size. The cases are also FuzzSync's seed corpus
// (testdata/fuzz/FuzzSync), rendered from this table.
type hostileCase struct {
	name  string
	query string
	body  []byte
	code  int
	// want is in the 400's error, or in status.warnings of the 200.
	want string
}

// clusterRequest is the sync request of the 3+2 cluster "memgraph" with its StatefulSets settled
// and every pod Ready; edit changes it before it is encoded.
func clusterRequest(edit func(parent, coordinators, data map[string]any, pods map[string]any)) []byte {
	return clusterRequestIn("default", edit)
}

// clusterRequestIn is clusterRequest for the cluster "memgraph" of namespace ns.
func clusterRequestIn(ns string, edit func(parent, coordinators, data map[string]any, pods map[string]any)) []byte {
	parent := validParent()
	parent["metadata"].(map[string]any)["namespace"] = ns
	sets := map[string]map[string]any{}
	for name, n := range map[string]int{"memgraph-coordinator": 3, "memgraph-data": 2} {
		sets[name] = map[string]any{
			"apiVersion": "apps/v1", "kind": "StatefulSet",
			"metadata": map[string]any{"name": name, "namespace": ns, "generation": 1},
			"spec":     map[string]any{"replicas": n},
			"status":   map[string]any{"replicas": n, "readyReplicas": n, "observedGeneration": 1},
		}
	}
	pods := map[string]any{}
	for _, name := range []string{"memgraph-coordinator-1", "memgraph-coordinator-2", "memgraph-coordinator-3", "memgraph-data-0", "memgraph-data-1"} {
		pods[ns+"/"+name] = readyPod(ns, name, map[string]any{})
	}
	edit(parent, sets["memgraph-coordinator"], sets["memgraph-data"], pods)
	raw, err := json.Marshal(map[string]any{
		"controller": map[string]any{"kind": "CompositeController"},
		"parent":     parent,
		"children": map[string]any{"StatefulSet.apps/v1": map[string]any{
			ns + "/memgraph-coordinator": sets["memgraph-coordinator"], ns + "/memgraph-data": sets["memgraph-data"],
		}},
		"related":    map[string]any{"Pod.v1": pods, "Secret.v1": map[string]any{ns + "/memgraph-secrets": licenseSecret(ns)}},
		"finalizing": false,
	})
	if err != nil {
		panic(err)
	}
	return raw
}

func spec(parent map[string]any) map[string]any { return parent["spec"].(map[string]any) }

func hostileCases() []hostileCase {
	noEdit := func(_, _, _, _ map[string]any) {}
	return []hostileCase{
		{name: "baseline", body: clusterRequest(noEdit), code: http.StatusOK},
		{name: "data-instances-max-int32", code: http.StatusBadRequest, want: v1alpha1.MsgDataInstancesMax,
			body: clusterRequest(func(p, _, _, _ map[string]any) { spec(p)["dataInstances"] = 2147483647 })},
		{name: "data-instances-one-million", code: http.StatusBadRequest, want: v1alpha1.MsgDataInstancesMax,
			body: clusterRequest(func(p, _, _, _ map[string]any) { spec(p)["dataInstances"] = 1000000 })},
		{name: "coordinators-max-int32", code: http.StatusBadRequest, want: v1alpha1.MsgCoordinatorsMax,
			body: clusterRequest(func(p, _, _, _ map[string]any) { spec(p)["coordinators"] = 2147483647 })},
		{name: "statefulset-status-replicas-max-int32", code: http.StatusOK,
			want: "StatefulSet memgraph-data: status.replicas 2147483647 is beyond the 128 data instances a MemgraphCluster may have: ignored",
			body: clusterRequest(func(_, _, d, _ map[string]any) { d["status"].(map[string]any)["replicas"] = 2147483647 })},
		{name: "statefulset-spec-replicas-max-int32", code: http.StatusOK,
			want: "StatefulSet memgraph-coordinator: spec.replicas 2147483647 is beyond the 9 coordinators a MemgraphCluster may have: ignored",
			body: clusterRequest(func(_, c, _, _ map[string]any) { c["spec"].(map[string]any)["replicas"] = 2147483647 })},
		{name: "pod-ordinal-2000000000", code: http.StatusOK,
			want: "Pod memgraph-data-2000000000: ordinal 2000000000 is beyond the 128 data instances a MemgraphCluster may have: ignored",
			body: clusterRequest(func(_, _, _, pods map[string]any) {
				pods["default/memgraph-data-2000000000"] = readyPod("default", "memgraph-data-2000000000", map[string]any{})
			})},
		{name: "pod-ordinal-beyond-int64", code: http.StatusOK,
			want: "Pod memgraph-coordinator-99999999999999999999999: ordinal 99999999999999999999999 is beyond the 9 coordinators",
			body: clusterRequest(func(_, _, _, pods map[string]any) {
				pods["default/x"] = readyPod("default", "memgraph-coordinator-99999999999999999999999", map[string]any{})
			})},
		{name: "status-replicas-1e15", code: http.StatusBadRequest,
			want: `children[\"StatefulSet.apps/v1\"][\"default/memgraph-data\"].status.replicas must be an integer between 0 and 2147483647, got 1e+15`,
			body: clusterRequest(func(_, _, d, _ map[string]any) { d["status"].(map[string]any)["replicas"] = json.RawMessage("1e15") })},
		{name: "spec-replicas-string", code: http.StatusBadRequest, want: `.spec.replicas must be an integer between 0 and 2147483647, got a string`,
			body: clusterRequest(func(_, _, d, _ map[string]any) { d["spec"].(map[string]any)["replicas"] = "3" })},
		{name: "explicit-zero-data-instances", code: http.StatusBadRequest, want: v1alpha1.MsgDataInstances,
			body: clusterRequest(func(p, _, _, _ map[string]any) { spec(p)["dataInstances"] = 0 })},
		{name: "envelope-miscased-parent", code: http.StatusBadRequest, want: "no parent",
			body: bytes.Replace(clusterRequest(noEdit), []byte(`"parent"`), []byte(`"Parent"`), 1)},
		{name: "dry-run-miscased", query: "dryrun=true", code: http.StatusBadRequest, want: "did you mean dryRun?",
			body: clusterRequest(noEdit)},
		{name: "dry-run-yes", query: "dryRun=yes", code: http.StatusBadRequest, want: "is not a boolean", body: clusterRequest(noEdit)},
		{name: "long-name", code: http.StatusBadRequest, want: "(8192 bytes)",
			body: clusterRequest(func(p, _, _, _ map[string]any) { p["metadata"].(map[string]any)["name"] = strings.Repeat("m", 8192) })},
	}
}

func postSync(handler http.Handler, query string, body []byte) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body))
	req.URL.RawQuery = query
	handler.ServeHTTP(rec, req)
	return rec
}

// bytesPerRequest is the heap allocated by one request, averaged over a few.
func bytesPerRequest(handler http.Handler, query string, body []byte) uint64 {
	const runs = 4
	postSync(handler, query, body) // warm: one-time costs (the CRD schema is parsed once) are not per request
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		postSync(handler, query, body)
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

// newParentSyncs are n requests of the normal 3+2 sync, each with a parent the hook has not
// seen (its generation differs), so each is admitted and rendered afresh, as after any change
// of the spec: the cost a hostile request is compared with, since a refused parent is never
// remembered (hooks/rendercache.go).
func newParentSyncs(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = clusterRequest(func(p, _, _, _ map[string]any) { p["metadata"].(map[string]any)["generation"] = 100 + i })
	}
	return out
}

// baselineCost is what a normal sync of a parent not seen before allocates: bytes and
// allocations per request.
func baselineCost(handler http.Handler) (bytes uint64, allocs float64) {
	bodies := newParentSyncs(10)
	postSync(handler, "", bodies[0]) // warm: one-time costs (the CRD schema is parsed once)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, body := range bodies[1:5] {
		postSync(handler, "", body)
	}
	runtime.ReadMemStats(&after)
	next := 5
	allocs = testing.AllocsPerRun(4, func() { postSync(handler, "", bodies[next]); next++ })
	return (after.TotalAlloc - before.TotalAlloc) / 4, allocs
}

func TestHostileInputsGetAnAnswerInBoundedMemory(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	cases := hostileCases()
	baseline, baseAllocs := baselineCost(handler)
	t.Logf("baseline sync of a new parent: %d bytes, %.0f allocations", baseline, baseAllocs)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := postSync(handler, tc.query, tc.body)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("%d %.600s\nwant %d with %q", rec.Code, rec.Body, tc.code, tc.want)
			}
			if rec.Code == http.StatusOK {
				assertDeclaredReplicas(t, rec.Body.Bytes())
			}
			// Memory proportional to the request, never to a number inside it: within a small
			// multiple of a normal sync's, plus what decoding a larger body costs.
			limit := 3*baseline + 32*uint64(len(tc.body))
			if got := bytesPerRequest(handler, tc.query, tc.body); got > limit {
				t.Errorf("allocated %d bytes per request, limit %d (baseline %d)", got, limit, baseline)
			}
			if allocs := testing.AllocsPerRun(4, func() { postSync(handler, tc.query, tc.body) }); allocs > 3*baseAllocs {
				t.Errorf("%.0f allocations per request, baseline %.0f", allocs, baseAllocs)
			}
		})
	}
}

// assertDeclaredReplicas checks a 200 returns the declared 3+2: ignored evidence changed nothing.
func assertDeclaredReplicas(t *testing.T, body []byte) {
	t.Helper()
	var resp syncResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, c := range resp.Children {
		if c["kind"] == "StatefulSet" {
			got[c["metadata"].(map[string]any)["name"].(string)] = c["spec"].(map[string]any)["replicas"].(float64)
		}
	}
	if diff := cmp.Diff(map[string]float64{"memgraph-coordinator": 3, "memgraph-data": 2}, got); diff != "" {
		t.Errorf("returned replicas (-want +got):\n%s", diff)
	}
}

// Ignored evidence is reported in status.warnings, sorted and bounded, so the status of the same
// request is always the same.
func TestIgnoredEvidenceWarningsAreSortedAndBounded(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	body := clusterRequest(func(_, _, _, pods map[string]any) {
		for i := range 30 {
			name := fmt.Sprintf("memgraph-data-%d", 1000+i)
			pods["default/"+name] = readyPod("default", name, map[string]any{})
		}
	})
	var first []any
	for range 3 {
		rec := postSync(handler, "", body)
		var resp syncResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		warnings, _ := resp.Status["warnings"].([]any)
		if len(warnings) != v1alpha1.MaxWarnings || warnings[v1alpha1.MaxWarnings-1] != "and 21 more ignored objects" {
			t.Fatalf("warnings %q", warnings)
		}
		if first == nil {
			first = warnings
		} else if diff := cmp.Diff(first, warnings); diff != "" {
			t.Errorf("the same request rendered other warnings (-first +now):\n%s", diff)
		}
	}
	if !strings.HasPrefix(first[0].(string), "Pod memgraph-data-1000: ordinal 1000 is beyond") {
		t.Errorf("warnings are not sorted: %q", first)
	}
}

const fuzzCorpus = "testdata/fuzz/FuzzSync"

// The hostile cases are FuzzSync's committed seed corpus (go test ./hooks -update rewrites it).
func TestFuzzSyncCorpusIsCurrent(t *testing.T) {
	for _, tc := range hostileCases() {
		path := filepath.Join(fuzzCorpus, tc.name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nstring(%q)\n", tc.body, tc.query)
		if *update {
			if err := os.MkdirAll(fuzzCorpus, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./hooks -update)", err)
		}
		if string(got) != want {
			t.Errorf("%s is stale: run go test ./hooks -update", path)
		}
	}
}

package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Every request is decoded once into typed objects; a value the hook reads of the wrong type, or
// outside its range, is a 400 naming its JSON path, anything else is observed. The requests are
// the example one with a spec.tls Secret, with every field the hook reads, and every object and
// list on the way to one, replaced by a value of each JSON type, plus byte-level oddities
// (duplicate and escaped keys, trailing data); and the same paused, when the children are
// returned as observed.
func TestTypedDecodeNamesThePath(t *testing.T) {
	base := baseRequest(t)
	var cases []mutation
	cases = append(cases, mutatedRequests(t, base)...)
	cases = append(cases, mutatedRequests(t, pausedRequest(t, base))...)
	refused := 0
	for _, tc := range cases {
		_, _, err := decodeRequest(tc.body, decodeParents)
		checkDecodeError(t, tc.body, err)
		if err != nil {
			refused++
			if !strings.Contains(err.Error(), tc.where) {
				t.Errorf("mutation of %s: %v, want the message to name %s", tc.where, err, tc.where)
			}
		}
	}
	for _, body := range byteLevelRequests(t, base) {
		_, _, err := decodeRequest(body, decodeParents)
		checkDecodeError(t, body, err)
	}
	// Both answers must occur, or this test proves nothing.
	if refused == 0 || refused == len(cases) {
		t.Errorf("%d of %d mutations refused", refused, len(cases))
	}
	t.Logf("%d mutations, %d refused", len(cases), refused)
}

// FuzzTypedDecode looks for a request body the decode answers with anything but an observation
// or a 400 naming where the problem is; without -fuzz it replays the byte-level cases.
func FuzzTypedDecode(f *testing.F) {
	for _, body := range byteLevelRequests(f, baseRequest(f)) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _, err := decodeSync(httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)), decodeParents)
		checkDecodeError(t, body, err)
	})
}

// decodeParents spares admitting the same parent again for every request.
var decodeParents = newParentCache(maxCachedParents, "")

// checkDecodeError fails unless err is nil or a 400 that names where in the body the problem is:
// a JSON path, or for a body that is not one JSON document, the byte or the document.
func checkDecodeError(t *testing.T, body []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var bad *wire.BadRequest
	if !errors.As(err, &bad) {
		t.Errorf("body %.200q: %v is not a bad request", body, err)
		return
	}
	for _, where := range []string{"parent", "children", "related", "the request body", "malformed JSON at byte", "more than one JSON document", "empty request body"} {
		if strings.Contains(err.Error(), where) {
			return
		}
	}
	t.Errorf("body %.200q: %v names no JSON path", body, err)
}

// baseRequest is the example converged request, its parent asking for Bolt TLS, with the Secret,
// its data StatefulSet with a hibernation window.
func baseRequest(t testing.TB) map[string]any {
	raw, err := os.ReadFile("../examples/hook-requests/sync-pods-ready.json")
	if err != nil {
		t.Fatal(err)
	}
	var req map[string]any
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	spec := req["parent"].(map[string]any)["spec"].(map[string]any)
	spec["tls"] = map[string]any{"secretName": "mg-tls"}
	// The data StatefulSet's hibernation window, as a hibernated cluster's carries it.
	data := req["children"].(map[string]any)[wire.StatefulSetKey].(map[string]any)["default/memgraph-data"].(map[string]any)
	data["spec"].(map[string]any)["ordinals"] = map[string]any{"start": int64(1)}
	req["related"].(map[string]any)[wire.SecretKey] = map[string]any{"default/mg-tls": map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{"name": "mg-tls", "namespace": "default"},
		"data":     map[string]any{"ca.crt": "bm90IGEgY2VydA==", "tls.crt": "eA==", "tls.key": "eA=="},
	}}
	return req
}

// pausedRequest is base with its parent annotated memgraph.com/paused.
func pausedRequest(t testing.TB, base map[string]any) map[string]any {
	raw, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	var paused map[string]any
	if err := json.Unmarshal(raw, &paused); err != nil {
		t.Fatal(err)
	}
	meta := paused["parent"].(map[string]any)["metadata"].(map[string]any)
	meta["annotations"] = map[string]any{topology.AnnotationPaused: "true"}
	return paused
}

// readPaths are the fields the readers read and the objects and lists on the way to them.
var readPaths = []string{
	"", "metadata", "metadata.name", "metadata.namespace", "metadata.generation",
	"metadata.creationTimestamp", "metadata.deletionTimestamp",
	"metadata.labels", "metadata.labels." + wire.RevisionLabel,
	"metadata.annotations", "metadata.annotations." + topology.AnnotationTemplateHash,
	"metadata.annotations." + topology.AnnotationTemplateGeneration,
	"spec", "spec.replicas", "spec.ordinals", "spec.ordinals.start", "spec.containers", "spec.containers.0", "spec.containers.0.name", "spec.containers.0.image",
	"status", "status.replicas", "status.readyReplicas", "status.observedGeneration",
	"status.updateRevision", "status.currentRevision",
	"status.conditions", "status.conditions.0", "status.conditions.0.type", "status.conditions.0.status",
	"type", "data", "data.ca.crt",
}

var mutationValues = []any{
	nil, true, int64(0), int64(1), int64(-1), 2.5, 1e300, int64(3000000000), int64(1) << 62,
	"", "x", "True", "Ready", "2026-01-01T00:00:00Z", "memgraph",
	map[string]any{}, []any{}, []any{nil}, []any{map[string]any{}}, []any{"x"},
	map[string]any{"type": "Ready", "status": "True"}, map[string]any{"name": "memgraph", "image": 5},
}

// mutation is a request with one value replaced, and the object or group holding it.
type mutation struct {
	body  []byte
	where string
}

// mutatedRequests sets every read path of one StatefulSet, one Pod, the Secret and a Service to
// every mutation value, and each group and envelope to a few.
func mutatedRequests(t testing.TB, base map[string]any) []mutation {
	var out []mutation
	objects := [][]string{
		{"children", wire.StatefulSetKey, "default/memgraph-coordinator"},
		{"children", wire.StatefulSetKey, "default/memgraph-data"},
		{"children", wire.ServiceKey, "default/memgraph"},
		{"related", wire.PodKey, "default/memgraph-coordinator-1"},
		{"related", wire.PodKey, "default/memgraph-data-0"},
		{"related", wire.SecretKey, "default/mg-tls"},
	}
	for _, obj := range objects {
		for _, path := range readPaths {
			for _, v := range mutationValues {
				req := cloneJSON(t, base)
				target := req[obj[0]].(map[string]any)[obj[1]].(map[string]any)
				if setPath(target, obj[2], path, v) {
					out = append(out, mutation{marshal(t, req), wire.EntryPath(obj[0], obj[1], obj[2])})
				}
			}
		}
	}
	for _, path := range [][]string{{"children"}, {"related"}, {"children", wire.StatefulSetKey}, {"related", wire.PodKey}, {"children", wire.ServiceKey}} {
		for _, v := range []any{nil, "x", int64(1), []any{}, map[string]any{}, map[string]any{"k": "x"}, map[string]any{"k": nil}} {
			req := cloneJSON(t, base)
			parent := req
			for _, k := range path[:len(path)-1] {
				parent = parent[k].(map[string]any)
			}
			parent[path[len(path)-1]] = v
			out = append(out, mutation{marshal(t, req), path[0]})
		}
	}
	return out
}

// setPath sets obj[key] at the dotted path (a number indexes a list; "data.ca.crt" is one key
// under data), and reports whether the path exists in the base request up to its last step.
func setPath(obj map[string]any, key, path string, v any) bool {
	if path == "" {
		obj[key] = v
		return true
	}
	var cur any = obj[key]
	steps := strings.Split(path, ".")
	if strings.HasPrefix(path, "data.") || strings.Contains(path, "memgraph.com") {
		first, rest, _ := strings.Cut(path, ".")
		if strings.HasPrefix(path, "metadata.annotations.") {
			steps = []string{"metadata", "annotations", strings.TrimPrefix(path, "metadata.annotations.")}
		} else {
			steps = []string{first, rest}
		}
	}
	for i, s := range steps {
		last := i == len(steps)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[s] = v
				return true
			}
			cur = c[s]
		case []any:
			n := 0
			if _, err := fmt.Sscan(s, &n); err != nil || n >= len(c) {
				return false
			}
			if last {
				c[n] = v
				return true
			}
			cur = c[n]
		default:
			return false
		}
	}
	return false
}

// byteLevelRequests are oddities a map never marshals to: duplicate keys at each level the typed
// decode types, keys spelled with escapes or another case, and what may follow the document.
func byteLevelRequests(t testing.TB, base map[string]any) [][]byte {
	body := string(marshal(t, base))
	var out [][]byte
	add := func(s string) { out = append(out, []byte(s)) }
	replacements := [][2]string{
		{`"metadata":{`, `"metadata":{"name":"other"},"metadata":{`},
		{`"status":{`, `"status":{"replicas":9},"status":{`},
		{`"conditions":[`, `"conditions":[],"conditions":[`},
		{`"name":"memgraph-coordinator"`, `"name":"memgraph-coordinator","name":"memgraph-data"`},
		{`"replicas":3`, `"replicas":3,"replicas":1`},
		{`"metadata":{`, `"meta\u0064ata":{`},
		{`"metadata":{`, `"Metadata":{`},
		{`"replicas":3`, `"replicas":3.0`},
		{`"replicas":3`, `"replicas":3e0`},
		{`"replicas":3`, `"replicas":-0`},
		{`"replicas":3`, `"rep\u006cicas":3`},
		{`"type":"Ready"`, `"type":"Re\u0061dy"`},
		{`"StatefulSet.apps/v1":{`, `"StatefulSet.apps/v1":{},"StatefulSet.apps/v1":{`},
		{`"related":{`, `"related":{"Pod.v1":{}},"related":{`},
		{`"default/memgraph-data-0":{`, "\"default/memgraph-data-\xff0\":{"},
		{`"name":"memgraph-data-0"`, "\"name\":\"memgraph-data-\xff0\""},
		{`"replicas":3`, `"replicas":3,"x":1e400`},
		{`"replicas":3`, `"replicas":1e400`},
		// The first Ready condition and the first memgraph container are the ones read.
		{`{"status":"True","type":"Ready"}`, `{"status":"False","type":"Ready"},{"status":"True","type":"Ready"}`},
		{`{"status":"True","type":"Ready"}`, `{"status":"True","type":"Ready"},{"status":5}`},
		{`{"image":"docker.io/memgraph/memgraph:3.12.0","name":"memgraph"}`,
			`{"image":"x:1","name":"memgraph"},{"image":"docker.io/memgraph/memgraph:3.12.0","name":"memgraph"}`},
		{`{"image":"docker.io/memgraph/memgraph:3.12.0","name":"memgraph"}`,
			`{"image":"docker.io/memgraph/memgraph:3.12.0","name":"memgraph"},{"image":5}`},
	}
	for _, r := range replacements {
		for _, n := range []int{1, -1} {
			add(strings.Replace(body, r[0], r[1], n))
		}
	}
	for _, suffix := range []string{"", " ", "\n\t", " {}", "]", "}", "x", "null"} {
		add(body + suffix)
	}
	for _, s := range []string{"null", "[]", "{}", `{"parent":null}`, "  {} ", `"x"`, "{", body[:len(body)/2]} {
		add(s)
	}
	return out
}

func cloneJSON(t testing.TB, v map[string]any) map[string]any {
	var out map[string]any
	if err := json.Unmarshal(marshal(t, v), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func marshal(t testing.TB, v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

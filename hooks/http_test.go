package hooks_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
)

func serve(t *testing.T, handler http.Handler, method, path, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	out, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(out)
}

func validParent() map[string]any {
	return map[string]any{
		"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphCluster",
		"metadata": map[string]any{"name": "memgraph", "namespace": "default", "uid": "u", "generation": 1},
		"spec":     map[string]any{"coordinators": 3, "dataInstances": 2},
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// Every class of bad input is answered 400 with a JSON error naming the problem, so
// Metacontroller changes nothing.
func TestBadRequestsAreRejectedWithTheProblem(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	withParent := func(mutate func(p map[string]any)) string {
		p := validParent()
		mutate(p)
		return mustJSON(t, map[string]any{"parent": p})
	}
	for _, tc := range []struct {
		name, path, body, wantInError string
	}{
		{"empty body", "/sync", "", "empty request body"},
		{"not JSON", "/sync", "{parent:", "malformed JSON"},
		{"two documents", "/sync", `{"parent":{}} {}`, "more than one JSON document"},
		{"array body", "/sync", `[]`, "the request body must be an object, got a list"},
		{"no parent", "/sync", `{"children":{}}`, "no parent"},
		{"null parent", "/sync", `{"parent":null}`, "no parent"},
		{"parent not an object", "/sync", `{"parent":"memgraph"}`, "parent"},
		{"wrong apiVersion", "/sync", withParent(func(p map[string]any) { p["apiVersion"] = "memgraph.com/v2" }), "apiVersion"},
		{"wrong kind", "/sync", withParent(func(p map[string]any) { p["kind"] = "Deployment" }), "kind"},
		{"no name", "/sync", withParent(func(p map[string]any) { delete(p["metadata"].(map[string]any), "name") }), "name"},
		{"wrong field type", "/sync", withParent(func(p map[string]any) { p["spec"] = map[string]any{"coordinators": "three"} }), "coordinators"},
		{"even coordinators", "/sync", withParent(func(p map[string]any) { p["spec"] = map[string]any{"coordinators": 4} }), "odd"},
		{"a broken rule names the parent", "/sync", withParent(func(p map[string]any) { p["spec"] = map[string]any{"coordinators": 4} }),
			"parent default/memgraph has a spec Memgraph cannot run: invalid MemgraphCluster: spec.coordinators"},
		{"zero data instances", "/sync", withParent(func(p map[string]any) { p["spec"] = map[string]any{"dataInstances": 0} }),
			"dataInstances must be at least 1"},
		{"zero coordinators", "/sync", withParent(func(p map[string]any) { p["spec"] = map[string]any{"coordinators": 0} }),
			"coordinators must be odd and at least 3"},
		{"huge cluster domain", "/sync", withParent(func(p map[string]any) {
			p["spec"] = map[string]any{"clusterDomain": strings.Repeat("a", 400<<10)}
		}), "clusterDomain must be at most 253 characters long, got 409600"},
		{"invalid namespace", "/sync", withParent(func(p map[string]any) { p["metadata"].(map[string]any)["namespace"] = "Team_A" }),
			"metadata.namespace must be a namespace name"},
		{"invalid namespace in customize", "/customize", withParent(func(p map[string]any) {
			p["metadata"].(map[string]any)["namespace"] = strings.Repeat("n", 64)
		}), "metadata.namespace must be a namespace name"},
		{"children of wrong type", "/sync", mustJSON(t, map[string]any{"parent": validParent(), "children": "none"}), "children"},
		{"child without name", "/sync", mustJSON(t, map[string]any{"parent": validParent(),
			"children": map[string]any{"StatefulSet.apps/v1": map[string]any{"default/x": map[string]any{"kind": "StatefulSet"}}}}), "metadata.name"},
		{"null child", "/sync", mustJSON(t, map[string]any{"parent": validParent(),
			"children": map[string]any{"StatefulSet.apps/v1": map[string]any{"default/x": nil}}}), "null"},
		{"customize without parent", "/customize", `{}`, "no parent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := serve(t, handler, http.MethodPost, tc.path, tc.body)
			if code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %s", code, body)
			}
			var e struct{ Error string }
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
				t.Fatalf("body %q is not a JSON error", body)
			}
			if !strings.Contains(strings.ToLower(e.Error), strings.ToLower(tc.wantInError)) {
				t.Errorf("error %q does not mention %q", e.Error, tc.wantInError)
			}
		})
	}
}

func TestOversizedBodyIsRejected(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}, MaxBodyBytes: 1024})
	body := `{"parent":` + mustJSON(t, validParent()) + `,"pad":"` + strings.Repeat("x", 2048) + `"}`
	if code, out := serve(t, handler, http.MethodPost, "/sync", body); code != http.StatusBadRequest || !strings.Contains(out, "larger than 1024") {
		t.Errorf("got %d %s, want 400 naming the limit", code, out)
	}
}

// Hook versions v1 and v2 key children differently; identity comes from metadata either way.
func TestBothKeyFormatsReadTheSameChildren(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.sync()
	v2 := h.request()
	v1 := deepCopy(v2)
	for _, group := range []string{"children", "related"} {
		for typ, entries := range v1[group].(map[string]any) {
			rekeyed := map[string]any{}
			for _, obj := range entries.(map[string]any) {
				rekeyed[obj.(map[string]any)["metadata"].(map[string]any)["name"].(string)] = obj
			}
			v1[group].(map[string]any)[typ] = rekeyed
		}
	}
	var answers []map[string]any
	for _, req := range []map[string]any{v1, v2} {
		code, body := h.post("/sync?dryRun=true", req)
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, body)
		}
		var resp map[string]any
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatal(err)
		}
		dropTransitionTimes(resp)
		answers = append(answers, resp)
	}
	if diff := cmp.Diff(answers[1], answers[0]); diff != "" {
		t.Errorf("v1-keyed answer differs from v2-keyed (-v2 +v1):\n%s", diff)
	}
	if plan := answers[0]["plan"].([]any); len(plan) != 6 {
		t.Errorf("plan from v1 keys = %v, want the 6 bootstrap queries (pods seen as Ready)", plan)
	}
}

func dropTransitionTimes(resp map[string]any) {
	status, _ := resp["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		delete(c.(map[string]any), "lastTransitionTime")
	}
}

// The customize hook asks for the cluster's pods, the Secrets its spec names and the Nodes that
// carry the Node decorator's label — the cordoned ones, never every Node.
func TestCustomizeAsksForTheClustersPods(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	code, body := serve(t, handler, http.MethodPost, "/customize", mustJSON(t, map[string]any{"parent": validParent()}))
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	want := `{"relatedResources":[{"apiVersion":"v1","resource":"pods","namespace":"default","labelSelector":{"matchLabels":{"app.kubernetes.io/instance":"memgraph","app.kubernetes.io/name":"memgraph"}}},` +
		`{"apiVersion":"v1","resource":"secrets","namespace":"default","names":["memgraph-secrets"]},` +
		`{"apiVersion":"v1","resource":"nodes","labelSelector":{"matchLabels":{"memgraph.com/cordoned":"true"}}}]}`
	var got, wantObj any
	_ = json.Unmarshal([]byte(body), &got)
	_ = json.Unmarshal([]byte(want), &wantObj)
	if diff := cmp.Diff(wantObj, got); diff != "" {
		t.Errorf("customize response (-want +got):\n%s", diff)
	}
}

func TestProbesAndUnknownRoutes(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	for _, path := range []string{"/healthz", "/readyz"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			if code, _ := serve(t, handler, method, path, ""); code != http.StatusOK {
				t.Errorf("%s %s = %d", method, path, code)
			}
		}
	}
	if code, _ := serve(t, handler, http.MethodPost, "/nope", "{}"); code != http.StatusNotFound {
		t.Errorf("POST /nope = %d, want 404", code)
	}
	if code, _ := serve(t, handler, http.MethodGet, "/metrics", ""); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the hook handler = %d, want 404: the metrics have a listener of their own", code)
	}
}

// A wrong method is a 405 whose Allow header lists the methods the path serves.
func TestWrongMethodsAnswer405WithAllow(t *testing.T) {
	reg := prometheus.NewRegistry()
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}, Registerer: reg})
	metrics := hooks.MetricsHandler(hooks.Config{}, reg)
	for _, tc := range []struct {
		handler      http.Handler
		method, path string
		allow        string
	}{
		{handler, http.MethodGet, "/sync", "POST"},
		{handler, http.MethodPut, "/customize", "POST"},
		{handler, http.MethodPost, "/healthz", "GET, HEAD"},
		{handler, http.MethodDelete, "/readyz", "GET, HEAD"},
		{metrics, http.MethodPost, "/metrics", "GET, HEAD"},
	} {
		rec := httptest.NewRecorder()
		tc.handler.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s = %d with Allow %q, want 405 with Allow %q", tc.method, tc.path, rec.Code, rec.Header().Get("Allow"), tc.allow)
		}
		if !strings.Contains(rec.Body.String(), tc.method+" is not allowed on "+tc.path) {
			t.Errorf("%s %s: body %q", tc.method, tc.path, rec.Body)
		}
	}
}

// The metrics listener serves the hook's own metrics, by GET and HEAD, and nothing else.
func TestMetricsHandlerServesTheHooksMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}, Registerer: reg})
	serve(t, handler, http.MethodPost, "/customize", mustJSON(t, map[string]any{"parent": validParent()}))
	metrics := hooks.MetricsHandler(hooks.Config{}, reg)
	code, body := serve(t, metrics, http.MethodGet, "/metrics", "")
	if code != http.StatusOK || !strings.Contains(body, `memgraph_hooks_requests_total{hook="customize",status="OK"} 1`) {
		t.Errorf("GET /metrics = %d, want the hook's counters; got %.300s", code, body)
	}
	if code, _ := serve(t, metrics, http.MethodHead, "/metrics", ""); code != http.StatusOK {
		t.Errorf("HEAD /metrics = %d", code)
	}
	if code, _ := serve(t, metrics, http.MethodPost, "/sync", "{}"); code != http.StatusNotFound {
		t.Errorf("POST /sync on the metrics listener = %d, want 404", code)
	}
}

// A well-formed request whose cluster cannot be reached still gets its children and a 200.
func TestUnreachableClusterStillGetsChildren(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	code, body := serve(t, handler, http.MethodPost, "/sync", mustJSON(t, map[string]any{"parent": validParent()}))
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var resp struct{ Children []map[string]any }
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Children) != 10 { // nine from topology and the backup-agent Secret
		t.Errorf("got %d children, want 10", len(resp.Children))
	}
	if bytes.Contains([]byte(body), []byte("null")) {
		t.Errorf("response holds a JSON null: %s", body)
	}
}

package hooks_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
)

// writes counts the queries the simulated cluster received that change something.
func (h *harness) writes() int {
	n := 0
	for _, q := range h.world.Queries() {
		if !strings.HasPrefix(q.Text, "SHOW ") {
			n++
		}
	}
	return n
}

// readyToRegister is a harness whose pods are all Ready and whose members are not registered:
// the next sync would run the 6 bootstrap queries.
func readyToRegister(t *testing.T) *harness {
	h := newHarness(t, 3, 2)
	h.sync()
	if h.writes() != 0 {
		t.Fatalf("the first sync wrote %d queries", h.writes())
	}
	return h
}

// Every spelling strconv.ParseBool takes as true is a dry run: it plans and executes nothing.
func TestDryRunSpellings(t *testing.T) {
	h := readyToRegister(t)
	for _, v := range []string{"true", "1", "t", "T", "TRUE", "True"} {
		resp := h.syncWith("?dryRun=" + v)
		if len(resp.Plan) != 6 || h.writes() != 0 {
			t.Errorf("?dryRun=%s: plan %d queries and %d writes, want the 6 bootstrap queries planned and none run", v, len(resp.Plan), h.writes())
		}
	}
	for _, v := range []string{"false", "0", "f", "F", "FALSE", "False"} {
		t.Run("dryRun="+v, func(t *testing.T) {
			h := readyToRegister(t)
			resp := h.syncWith("?dryRun=" + v)
			if resp.Plan != nil || h.writes() != 6 {
				t.Errorf("?dryRun=%s: plan %v and %d writes, want an execution of the 6 bootstrap queries", v, resp.Plan, h.writes())
			}
		})
	}
}

// A dry-run parameter that is not a boolean, or any parameter the endpoint does not know —
// including dryRun in another case — is a 400 and executes nothing.
func TestUnclearQueriesAreRefused(t *testing.T) {
	h := readyToRegister(t)
	for _, tc := range []struct{ query, want string }{
		{"?dryRun=yes", `dryRun="yes" is not a boolean`},
		{"?dryRun=", `dryRun="" is not a boolean`},
		{"?dryRun", `dryRun="" is not a boolean`},
		{"?dryRun=2", `dryRun="2" is not a boolean`},
		{"?dryRun=true&dryRun=false", "dryRun is given 2 times"},
		{"?dryrun=true", `unknown query parameter "dryrun" (parameter names are case-sensitive: did you mean dryRun?)`},
		{"?DRYRUN=1", `unknown query parameter "DRYRUN"`},
		{"?dry_run=true", `unknown query parameter "dry_run": this endpoint accepts only dryRun`},
		{"?dryRun=%zz", "malformed query string"},
		{"?dryRun=true;x=1", "malformed query string"},
	} {
		code, body := h.post("/sync"+tc.query, h.request())
		if code != http.StatusBadRequest || !strings.Contains(string(body), jsonEscaped(tc.want)) {
			t.Errorf("%s: %d %s, want 400 saying %q", tc.query, code, body, tc.want)
		}
	}
	code, body := h.post("/customize?dryRun=true", map[string]any{"parent": h.parent()})
	if code != http.StatusBadRequest || !strings.Contains(string(body), "this endpoint accepts no query parameters") {
		t.Errorf("customize with a query: %d %s", code, body)
	}
	if h.writes() != 0 {
		t.Errorf("refused requests ran %d queries", h.writes())
	}
}

// The envelope's field names are matched as written, like the parent's.
func TestEnvelopeIsCaseSensitive(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	other := validParent()
	other["metadata"].(map[string]any)["name"] = "impostor"
	for _, tc := range []struct {
		name, body string
		code       int
		want       string
	}{
		{"Parent is not parent", `{"Parent":` + mustJSON(t, validParent()) + `}`, http.StatusBadRequest, "no parent"},
		{"a later PARENT does not replace parent", `{"parent":` + mustJSON(t, validParent()) + `,"PARENT":` + mustJSON(t, other) + `}`,
			http.StatusOK, `"name":"memgraph-coordinator"`},
		{"Children is not children", `{"parent":` + mustJSON(t, validParent()) + `,"Children":{"StatefulSet.apps/v1":{"x":null}}}`,
			http.StatusOK, `"name":"memgraph-data"`},
	} {
		code, body := serve(t, handler, http.MethodPost, "/sync", tc.body)
		if code != tc.code || !strings.Contains(body, tc.want) || strings.Contains(body, "impostor") {
			t.Errorf("%s: %d %.300s, want %d containing %s", tc.name, code, body, tc.code, tc.want)
		}
	}
}

// syncWithChild posts a sync whose data StatefulSet (and data pod 0) carry edit's changes.
func syncWithChild(t *testing.T, handler http.Handler, edit func(sts, pod map[string]any)) (int, string) {
	t.Helper()
	sts := map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "memgraph-data", "namespace": "default", "generation": 1},
		"spec":     map[string]any{"replicas": 2},
		"status":   map[string]any{"replicas": 2, "readyReplicas": 2, "observedGeneration": 1},
	}
	pod := readyPod("default", "memgraph-data-0", map[string]any{})
	edit(sts, pod)
	return serve(t, handler, http.MethodPost, "/sync", mustJSON(t, map[string]any{
		"parent":   validParent(),
		"children": map[string]any{"StatefulSet.apps/v1": map[string]any{"default/memgraph-data": sts}},
		"related":  map[string]any{"Pod.v1": map[string]any{"default/memgraph-data-0": pod}},
	}))
}

// A value of the wrong type, or a number outside its Kubernetes type's range, where the hook
// needs it is a 400 naming its path; it is never rounded, wrapped or read as 1.
func TestChildValuesAreReadStrictly(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	const sts = `children["StatefulSet.apps/v1"]["default/memgraph-data"]`
	const pod = `related["Pod.v1"]["default/memgraph-data-0"]`
	raw := func(v string) json.RawMessage { return json.RawMessage(v) }
	for _, tc := range []struct {
		name string
		edit func(sts, pod map[string]any)
		want string
	}{
		{"replicas as a string", func(s, _ map[string]any) { s["spec"].(map[string]any)["replicas"] = "3" },
			sts + `.spec.replicas must be an integer between 0 and 2147483647, got a string`},
		{"fractional replicas", func(s, _ map[string]any) { s["spec"].(map[string]any)["replicas"] = 2.5 },
			sts + ".spec.replicas must be an integer between 0 and 2147483647, got 2.5"},
		{"astronomic replicas", func(s, _ map[string]any) { s["spec"].(map[string]any)["replicas"] = raw("1e300") },
			sts + ".spec.replicas must be an integer between 0 and 2147483647, got 1e+300"},
		{"negative replicas", func(s, _ map[string]any) { s["spec"].(map[string]any)["replicas"] = -1 },
			sts + ".spec.replicas must be an integer between 0 and 2147483647, got -1"},
		{"status replicas beyond int32", func(s, _ map[string]any) { s["status"].(map[string]any)["replicas"] = raw("1000000000000000") },
			sts + ".status.replicas must be an integer between 0 and 2147483647, got 1000000000000000"},
		{"status replicas in exponent form", func(s, _ map[string]any) { s["status"].(map[string]any)["replicas"] = raw("1e15") },
			sts + ".status.replicas must be an integer between 0 and 2147483647, got 1e+15"},
		{"generation as a string", func(s, _ map[string]any) { s["metadata"].(map[string]any)["generation"] = "1" },
			sts + `.metadata.generation must be an integer between 0 and 9223372036854775807, got a string`},
		{"status not an object", func(s, _ map[string]any) { s["status"] = []any{} }, sts + ".status must be an object, got a list"},
		{"pod conditions not a list", func(_, p map[string]any) { p["status"].(map[string]any)["conditions"] = "Ready" },
			pod + `.status.conditions must be a list, got a string`},
		{"pod condition status a boolean", func(_, p map[string]any) {
			p["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Ready", "status": true}}
		}, pod + ".status.conditions[0].status must be a string, got a boolean"},
		{"deletion timestamp a number", func(_, p map[string]any) { p["metadata"].(map[string]any)["deletionTimestamp"] = 5 },
			pod + ".metadata.deletionTimestamp must be a string, got a number"},
		{"creation timestamp not a time", func(_, p map[string]any) { p["metadata"].(map[string]any)["creationTimestamp"] = "yesterday" },
			pod + `.metadata.creationTimestamp must be an RFC 3339 time, got the string "yesterday"`},
		{"revision label a number", func(_, p map[string]any) {
			p["metadata"].(map[string]any)["labels"] = map[string]any{"controller-revision-hash": 7}
		}, pod + ".metadata.labels.controller-revision-hash must be a string, got a number"},
		{"container image a list", func(_, p map[string]any) {
			p["spec"] = map[string]any{"containers": []any{map[string]any{"name": "memgraph", "image": []any{}}}}
		}, pod + ".spec.containers[0].image must be a string, got a list"},
		{"pod node name a number", func(_, p map[string]any) { p["spec"] = map[string]any{"nodeName": 3} },
			pod + ".spec.nodeName must be a string, got a number"},
		{"update revision a number", func(s, _ map[string]any) { s["status"].(map[string]any)["updateRevision"] = 3 },
			sts + ".status.updateRevision must be a string, got a number"},
		{"annotations a list", func(s, _ map[string]any) { s["metadata"].(map[string]any)["annotations"] = []any{} },
			sts + ".metadata.annotations must be an object, got a list"},
	} {
		code, body := syncWithChild(t, handler, tc.edit)
		if code != http.StatusBadRequest || !strings.Contains(body, jsonEscaped(tc.want)) {
			t.Errorf("%s: %d %s\nwant 400 saying %s", tc.name, code, body, tc.want)
		}
	}
	if code, body := syncWithChild(t, handler, func(map[string]any, map[string]any) {}); code != http.StatusOK {
		t.Errorf("the well-formed neighbour: %d %s", code, body)
	}
}

// jsonEscaped is s as it appears inside a JSON string.
func jsonEscaped(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw[1 : len(raw)-1])
}

// A megabyte value is never echoed whole, neither in the 400 nor in the log.
func TestEchoedValuesAreBounded(t *testing.T) {
	var logs bytes.Buffer
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	huge := strings.Repeat("n", 1<<20)
	withName := validParent()
	withName["metadata"].(map[string]any)["name"] = huge
	withVersion := validParent()
	withVersion["apiVersion"] = huge
	for name, tc := range map[string]struct {
		path, body string
		echoed     bool // the message names the value (clipped) rather than only its place
	}{
		"parent name":      {"/sync", mustJSON(t, map[string]any{"parent": withName}), true},
		"customize name":   {"/customize", mustJSON(t, map[string]any{"parent": withName}), true},
		"apiVersion":       {"/sync", mustJSON(t, map[string]any{"parent": withVersion}), true},
		"child key":        {"/sync", mustJSON(t, map[string]any{"parent": validParent(), "children": map[string]any{"StatefulSet.apps/v1": map[string]any{huge: nil}}}), true},
		"query parameter":  {"/sync?" + huge + "=1", mustJSON(t, map[string]any{"parent": validParent()}), true},
		"wrong field type": {"/sync", `{"parent":` + mustJSON(t, validParent()) + `,"children":{"` + huge + `":5}}`, false},
	} {
		logs.Reset()
		code, body := serve(t, handler, http.MethodPost, tc.path, tc.body)
		if code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", name, code)
		}
		if len(body) > 2048 || strings.Contains(body, strings.Repeat("n", v1alpha1.MaxEchoBytes+1)) {
			t.Errorf("%s: the %d-byte body repeats the value: %.300s", name, len(body), body)
		}
		if tc.echoed != strings.Contains(body, "(1048576 bytes)") {
			t.Errorf("%s: body %.400s; want the value's length named: %v", name, body, tc.echoed)
		}
		if logs.Len() > 2048 {
			t.Errorf("%s: logged %d bytes", name, logs.Len())
		}
	}
}

// Every line logged during a sync names the cluster: the hook's own and the Bolt client's.
func TestEveryLogLineOfASyncNamesTheCluster(t *testing.T) {
	h := readyToRegister(t)
	var logs bytes.Buffer
	logger := slog.New(hooks.LogHandler(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	pool := bolt.NewPool(bolt.PoolOptions{Resolver: h.world, Logger: logger})
	t.Cleanup(func() { _ = pool.Close() })
	h.handler = hooks.NewHandler(hooks.Config{Connector: pool, Logger: logger})
	h.sync()
	h.sync()
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec struct{ Msg, Cluster string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		seen[rec.Msg]++
		// The neo4j driver's own debug lines are about pooled connections, which outlive a sync.
		if rec.Cluster != "default/memgraph" && !strings.HasPrefix(rec.Msg, "neo4j driver: ") {
			t.Errorf("log line without cluster=default/memgraph: %s", line)
		}
	}
	for _, msg := range []string{"sync", "executed", "memgraph: query", "memgraph: opened connection pool"} {
		if seen[msg] == 0 {
			t.Errorf("no %q line logged; saw %v", msg, seen)
		}
	}
}

// A Node's spec.unschedulable and spec.taints[].key, the only fields the hook reads of it, are
// read strictly too.
func TestNodeValuesAreReadStrictly(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	const node = `related["Node.v1"]["n1"]`
	for _, tc := range []struct {
		name string
		spec map[string]any
		want string // "" for a 200
	}{
		{"unschedulable a string", map[string]any{"unschedulable": "true"}, node + ".spec.unschedulable must be a boolean, got a string"},
		{"taints not a list", map[string]any{"taints": "NoSchedule"}, node + ".spec.taints must be a list, got a string"},
		{"taint key a number", map[string]any{"taints": []any{map[string]any{"key": "a"}, map[string]any{"key": 1}}},
			node + ".spec.taints[1].key must be a string, got a number"},
		{"a cordoned node", map[string]any{"unschedulable": true, "taints": []any{map[string]any{"key": "node.kubernetes.io/unschedulable"}}}, ""},
	} {
		code, body := serve(t, handler, http.MethodPost, "/sync", mustJSON(t, map[string]any{
			"parent":  validParent(),
			"related": map[string]any{"Node.v1": map[string]any{"n1": map[string]any{"metadata": map[string]any{"name": "n1"}, "spec": tc.spec}}},
		}))
		switch {
		case tc.want == "" && code != http.StatusOK:
			t.Errorf("%s: %d %s, want 200", tc.name, code, body)
		case tc.want != "" && (code != http.StatusBadRequest || !strings.Contains(body, jsonEscaped(tc.want))):
			t.Errorf("%s: %d %s\nwant 400 saying %s", tc.name, code, body, tc.want)
		}
	}
}

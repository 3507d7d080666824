package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The fuzz targets post what they are given to the real handler, whose coordinators are a
// cannedCluster: every request that gets as far as observing sees a converged 3+2 cluster
// "default/memgraph", so mutations of a valid request reach planning and execution. Each answer
// must be one a Metacontroller can act on:
//
//   - a 200 whose body is a sync (or customize) response: children that are objects with an
//     apiVersion, kind and name, a status with conditions, replica counts within the CRD's bounds
//     and partitions within [0, replicas];
//   - or a 4xx with a bounded JSON error, after which not one Bolt query was sent (a rejected
//     request changes nothing and costs the coordinators nothing);
//   - never a 5xx, a panic, or an answer later than the sync budget plus a generous margin;
//   - a dry run (dryRun parsed as true) never writes.
//
// make fuzz runs each target for FUZZTIME; make unit runs their seed corpora, and the fuzz
// smoke step of make test fuzzes each for a few seconds.

const fuzzBudget = 2 * time.Second

// hangLimit is how long one request may take before the target calls it a hang: the budget
// bounds the Bolt work, decoding and rendering are milliseconds even for the largest body.
const hangLimit = fuzzBudget + 10*time.Second

// cannedCluster is a Connector whose every coordinator answers as the converged 3+2 cluster
// "default/memgraph" led by coordinator_1 with MAIN instance_1 (and SHOW REPLICAS as instance_1
// answers it), accepts every write and counts the queries.
type cannedCluster struct {
	rows          []memgraph.Instance
	lag           []memgraph.InstanceLag
	replicas      []memgraph.Replica // instance_1's SHOW REPLICAS
	reads, writes atomic.Int64
}

func newCannedCluster() *cannedCluster {
	n := topology.Network{Cluster: "memgraph", Namespace: "default", ClusterDomain: "cluster.local",
		Ports: topology.Ports{Bolt: 7687, Management: 10000, Replication: 20000, Coordinator: 12000}}
	c := &cannedCluster{}
	for id := 1; id <= 3; id++ {
		co := n.Coordinator(id)
		role := memgraph.RoleFollower
		if id == 1 {
			role = memgraph.RoleLeader
		}
		c.rows = append(c.rows, memgraph.Instance{Name: co.Name, BoltServer: co.BoltServer,
			CoordinatorServer: co.CoordinatorServer, ManagementServer: co.ManagementServer, Health: memgraph.HealthUp, Role: role})
	}
	for ord := 0; ord < 2; ord++ {
		d := n.DataInstance(ord)
		role := memgraph.RoleReplica
		if ord == 1 {
			role = memgraph.RoleMain
		} else {
			c.replicas = append(c.replicas, memgraph.Replica{Name: d.Name, SocketAddress: d.ReplicationServer,
				SyncMode: memgraph.SyncModeSync, Databases: map[string]memgraph.ReplicaDatabase{
					"memgraph": {Timestamp: 7, Status: memgraph.ReplicaReady}}})
		}
		c.rows = append(c.rows, memgraph.Instance{Name: d.Name, BoltServer: d.BoltServer,
			ManagementServer: d.ManagementServer, Health: memgraph.HealthUp, Role: role})
		c.lag = append(c.lag, memgraph.InstanceLag{Instance: d.Name,
			Databases: map[string]memgraph.DatabaseLag{"memgraph": {CommittedTxns: 7}}})
	}
	return c
}

func (c *cannedCluster) Client(string) memgraph.Client { return cannedClient{c} }

func (c *cannedCluster) reset()         { c.reads.Store(0); c.writes.Store(0) }
func (c *cannedCluster) queries() int64 { return c.reads.Load() + c.writes.Load() }

type cannedClient struct{ c *cannedCluster }

func (k cannedClient) ShowInstances(context.Context) ([]memgraph.Instance, error) {
	k.c.reads.Add(1)
	return append([]memgraph.Instance(nil), k.c.rows...), nil
}

func (k cannedClient) ShowReplicationLag(context.Context) ([]memgraph.InstanceLag, error) {
	k.c.reads.Add(1)
	return append([]memgraph.InstanceLag(nil), k.c.lag...), nil
}

func (k cannedClient) ShowReplicas(context.Context) ([]memgraph.Replica, error) {
	k.c.reads.Add(1)
	return append([]memgraph.Replica(nil), k.c.replicas...), nil
}

func (k cannedClient) write() error { k.c.writes.Add(1); return nil }

func (k cannedClient) AddCoordinator(context.Context, int, memgraph.CoordinatorConfig) error {
	return k.write()
}
func (k cannedClient) RegisterInstance(context.Context, string, memgraph.InstanceConfig) error {
	return k.write()
}
func (k cannedClient) SetInstanceToMain(context.Context, string) error            { return k.write() }
func (k cannedClient) DemoteInstance(context.Context, string) error               { return k.write() }
func (k cannedClient) UnregisterInstance(context.Context, string) error           { return k.write() }
func (k cannedClient) RemoveCoordinator(context.Context, int) error               { return k.write() }
func (k cannedClient) UpdateInstanceConfig(context.Context, string, string) error { return k.write() }
func (k cannedClient) UpdateCoordinatorConfig(context.Context, int, string) error { return k.write() }
func (k cannedClient) YieldLeadership(context.Context) error                      { return k.write() }
func (k cannedClient) ForceResetClusterState(context.Context) error               { return k.write() }
func (k cannedClient) SetCoordinatorSetting(context.Context, string, string) error {
	return k.write()
}

// ShowCoordinatorSettings answers with no rows: the fuzzed specs declare no settings, so the
// hook never asks.
func (k cannedClient) ShowCoordinatorSettings(context.Context) ([]memgraph.Setting, error) {
	k.c.reads.Add(1)
	return nil, nil
}

// fuzzHook is the handler under fuzzing and its canned coordinators.
type fuzzHook struct {
	handler http.Handler
	cluster *cannedCluster
}

func newFuzzHook() *fuzzHook {
	c := newCannedCluster()
	return &fuzzHook{cluster: c, handler: hooks.NewHandler(hooks.Config{Connector: c, SyncBudget: fuzzBudget, MaxBodyBytes: 1 << 20})}
}

// post sends one request and checks every property above; hook is "sync" or "customize".
func (f *fuzzHook) post(t *testing.T, hook, query string, body []byte) {
	f.cluster.reset()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/"+hook, strings.NewReader(string(body)))
	req.URL.RawQuery = query
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.handler.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
	case <-time.After(hangLimit):
		t.Fatalf("POST /%s?%.100s hung for %s", hook, query, hangLimit)
	}
	switch {
	case rec.Code == http.StatusOK && hook == "sync":
		checkSyncResponse(t, rec.Body.Bytes())
		if isDryRun(query) && f.cluster.writes.Load() > 0 {
			t.Fatalf("a dry run (?%s) sent %d writes", query, f.cluster.writes.Load())
		}
	case rec.Code == http.StatusOK:
		checkCustomizeResponse(t, rec.Body.Bytes())
	case rec.Code >= 400 && rec.Code < 500:
		var e struct{ Error string }
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" || len(e.Error) > 4200 {
			t.Fatalf("a %d without a bounded JSON error: %v %.300s", rec.Code, err, rec.Body)
		}
		if n := f.cluster.queries(); n > 0 {
			t.Fatalf("a request answered %d sent %d Bolt queries (%d writes): %.300s", rec.Code, n, f.cluster.writes.Load(), rec.Body)
		}
	default:
		t.Fatalf("POST /%s answered %d: %.300s", hook, rec.Code, rec.Body)
	}
}

func isDryRun(query string) bool {
	v, err := url.ParseQuery(query)
	if err != nil || len(v["dryRun"]) != 1 {
		return false
	}
	dry, err := strconv.ParseBool(v["dryRun"][0])
	return err == nil && dry
}

func checkSyncResponse(t *testing.T, body []byte) {
	var resp struct {
		Status   map[string]any   `json:"status"`
		Children []map[string]any `json:"children"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || resp.Children == nil || resp.Status == nil {
		t.Fatalf("a 200 that is not a sync response: %v %.300s", err, body)
	}
	if _, ok := resp.Status["conditions"].([]any); !ok {
		t.Fatalf("a sync response without status.conditions: %.300s", body)
	}
	for _, c := range resp.Children {
		meta, _ := c["metadata"].(map[string]any)
		if c["apiVersion"] == "" || c["kind"] == "" || meta == nil || meta["name"] == "" || meta["name"] == nil {
			t.Fatalf("a child without apiVersion, kind or name: %.300v", c)
		}
		spec, _ := c["spec"].(map[string]any) // a Secret has none
		r, ok := spec["replicas"].(float64)
		if ok && (r < 0 || r > v1alpha1.MaxDataInstances) {
			t.Fatalf("returned %v replicas for %v", r, meta)
		}
		if p, set := partition(c); set && (!ok || p < 0 || p > r) {
			t.Fatalf("returned partition %v for %v replicas of %v", p, r, meta)
		}
	}
}

// partition is a child's spec.updateStrategy.rollingUpdate.partition, if it has one.
func partition(child map[string]any) (float64, bool) {
	spec, _ := child["spec"].(map[string]any)
	strategy, _ := spec["updateStrategy"].(map[string]any)
	rolling, _ := strategy["rollingUpdate"].(map[string]any)
	p, ok := rolling["partition"].(float64)
	return p, ok
}

func checkCustomizeResponse(t *testing.T, body []byte) {
	var resp struct {
		RelatedResources []map[string]any `json:"relatedResources"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.RelatedResources) == 0 {
		t.Fatalf("a 200 that is not a customize response: %v %.300s", err, body)
	}
}

// exampleRequests are the request files README's curl section posts (rendered by
// TestRequestFilesAreCurrent), the hostile cases' baseline and a grown and a shrunk version of it
// (which plan registration, resp. a MAIN handover and retirement, against the canned cluster),
// each with the hook it is for: the structures the mutating target starts from.
func exampleRequests(f *testing.F) []seedRequest {
	out := []seedRequest{
		{hook: "sync", body: clusterRequest(func(_, _, _, _ map[string]any) {})},
		{hook: "sync", body: grownRequest()},
		{hook: "sync", body: shrunkRequest()},
	}
	for _, name := range []string{"sync-new-cluster.json", "sync-pods-ready.json", "customize.json"} {
		raw, err := os.ReadFile(filepath.Join(requestsDir, name))
		if err != nil {
			f.Fatal(err)
		}
		hook := "sync"
		if strings.HasPrefix(name, "customize") {
			hook = "customize"
		}
		out = append(out, seedRequest{hook: hook, body: raw})
	}
	return append(out,
		seedRequest{hook: "sync", body: rollingRequest(f, "memgraph-data")},
		seedRequest{hook: "sync", body: rollingRequest(f, "memgraph-coordinator")})
}

// rollingRequest is sync-pods-ready.json with a new pod template revision for the StatefulSet
// set, whose pods all run the previous one: a rollout starts. Against the canned cluster (MAIN
// instance_1, leader coordinator_1) the data instances' first step hands MAIN over from
// instance_1, the coordinators' releases memgraph-coordinator-3.
func rollingRequest(tb testing.TB, set string) []byte {
	raw, err := os.ReadFile(filepath.Join(requestsDir, "sync-pods-ready.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var req map[string]any
	if err := json.Unmarshal(raw, &req); err != nil {
		tb.Fatal(err)
	}
	sts := req["children"].(map[string]any)["StatefulSet.apps/v1"].(map[string]any)["default/"+set].(map[string]any)
	sts["status"].(map[string]any)["updateRevision"] = set + "-next"
	if raw, err = json.Marshal(req); err != nil {
		tb.Fatal(err)
	}
	return raw
}

// grownRequest declares a third data instance whose pod is Ready: the plan registers it.
func grownRequest() []byte {
	return clusterRequest(func(p, _, d, pods map[string]any) {
		spec(p)["dataInstances"] = 3
		d["spec"].(map[string]any)["replicas"] = 3
		d["status"] = map[string]any{"replicas": 3, "readyReplicas": 3, "observedGeneration": 1}
		pods["default/memgraph-data-2"] = readyPod("default", "memgraph-data-2", map[string]any{})
	})
}

// shrunkRequest declares one data instance while the canned MAIN is instance_1: the plan hands
// MAIN over to instance_0 and unregisters instance_1.
func shrunkRequest() []byte {
	return clusterRequest(func(p, _, _, _ map[string]any) { spec(p)["dataInstances"] = 1 })
}

type seedRequest struct {
	hook string
	body []byte
}

// FuzzSync posts arbitrary bodies and query strings to /sync. Its committed corpus
// (testdata/fuzz/FuzzSync) holds the inputs that once exhausted the hook's memory; the example
// requests are seeds too.
func FuzzSync(f *testing.F) {
	for _, s := range exampleRequests(f) {
		if s.hook == "sync" {
			f.Add(s.body, "")
			f.Add(s.body, "dryRun=true")
		}
	}
	hook := newFuzzHook()
	f.Fuzz(func(t *testing.T, body []byte, query string) { hook.post(t, "sync", query, body) })
}

// FuzzCustomize posts arbitrary bodies and query strings to /customize.
func FuzzCustomize(f *testing.F) {
	for _, s := range exampleRequests(f) {
		f.Add(s.body, "")
	}
	f.Add([]byte(`{"parent":null}`), "")
	f.Add([]byte(`[]`), "dryRun=true")
	hook := newFuzzHook()
	f.Fuzz(func(t *testing.T, body []byte, query string) { hook.post(t, "customize", query, body) })
}

// FuzzHookRequestMutations mutates the example requests structurally rather than byte by byte,
// so the fuzzer spends its time past the JSON syntax: two mutations, each at any node of the
// request (chosen by path modulo the node count) — a value of the wrong type, null, a huge or
// fractional number, deep nesting, a duplicate key, invalid UTF-8, a long string, a miscased or
// deleted key, a swollen array — then the result goes to the hook the request was for.
func FuzzHookRequestMutations(f *testing.F) {
	seeds := exampleRequests(f)
	for i := range seeds {
		for op := range numOps {
			f.Add(uint8(i), uint32(op*7+i), uint8(op), uint32(0), uint8(0), []byte("2147483648"))
		}
	}
	f.Add(uint8(0), uint32(3), uint8(opDeepNest), uint32(9), uint8(opDuplicateKey), []byte{0xff, 0xfe, '"', '\\'})
	hook := newFuzzHook()
	f.Fuzz(func(t *testing.T, seed uint8, path1 uint32, op1 uint8, path2 uint32, op2 uint8, payload []byte) {
		s := seeds[int(seed)%len(seeds)]
		doc, err := parseDoc(s.body)
		if err != nil {
			t.Fatal(err)
		}
		doc = mutate(doc, path1, op1, payload)
		doc = mutate(doc, path2, op2, payload)
		hook.post(t, s.hook, "", encodeDoc(doc))
	})
}

// The fuzz targets are only as good as the paths their inputs reach: the unmutated baseline is
// observed (Bolt reads), a grown spec is executed (Bolt writes), and each mutation changes the
// request it is applied to.
func TestFuzzInputsReachObservationAndExecution(t *testing.T) {
	hook := newFuzzHook()
	hook.post(t, "sync", "", clusterRequest(func(_, _, _, _ map[string]any) {}))
	if hook.cluster.reads.Load() == 0 || hook.cluster.writes.Load() != 0 {
		t.Errorf("baseline: %d reads, %d writes; want reads and no write (converged)", hook.cluster.reads.Load(), hook.cluster.writes.Load())
	}
	for name, body := range map[string][]byte{"grown": grownRequest(), "shrunk": shrunkRequest(), "rolling data": rollingRequest(t, "memgraph-data")} {
		hook.post(t, "sync", "", body)
		if hook.cluster.writes.Load() == 0 {
			t.Errorf("the %s request executed no write: the canned cluster does not reach execution", name)
		}
	}
	if got := syncPartitions(t, hook, rollingRequest(t, "memgraph-coordinator")); got["memgraph-coordinator"] != 2 {
		t.Errorf("the rolling coordinators' request returned partitions %v; want memgraph-coordinator-3 released (2)", got)
	}
	baseline := clusterRequest(func(_, _, _, _ map[string]any) {})
	doc, err := parseDoc(baseline)
	if err != nil {
		t.Fatal(err)
	}
	if got := encodeDoc(doc); !jsonEqual(t, got, baseline) {
		t.Fatalf("parse and encode changed the request:\n%s\n%s", got, baseline)
	}
	for op := range numOps {
		changed := 0
		for path := range uint32(len(slots(&doc))) {
			d, _ := parseDoc(baseline)
			if !bytes.Equal(encodeDoc(mutate(d, path, uint8(op), []byte("x"))), encodeDoc(doc)) {
				changed++
			}
		}
		if changed == 0 {
			t.Errorf("mutation %d changed no node of the baseline", op)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// syncPartitions posts body to /sync and returns each StatefulSet's returned partition by name.
func syncPartitions(t *testing.T, hook *fuzzHook, body []byte) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	hook.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)))
	var resp struct{ Children []map[string]any }
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("POST /sync answered %d (%v): %.300s", rec.Code, err, rec.Body)
	}
	out := map[string]float64{}
	for _, c := range resp.Children {
		if p, ok := partition(c); ok && c["kind"] == "StatefulSet" {
			out[c["metadata"].(map[string]any)["name"].(string)] = p
		}
	}
	return out
}

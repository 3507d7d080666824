package hooks_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// harness plays Metacontroller and the StatefulSet controller around the real hook handler and
// a simulated Memgraph: each sync sends the parent, the children the hook returned last time
// (as applied and settled) and Ready pods for every replica; pods that a StatefulSet sheds
// disappear together with their simulated instance.
type harness struct {
	t           testing.TB
	world       *sim.World
	clock       *sim.ManualClock
	pool        *bolt.Pool
	handler     http.Handler
	name, ns    string
	spec        map[string]any
	children    map[string]map[string]any // "Kind/name" → object as last returned
	pods        map[string]bool           // running pods → whether they answer (have an instance)
	killed      map[string]bool           // hosts a test killed on purpose (h.kill)
	slowJoiners []string                  // hosts given a join delay
	lastResp    syncResponse
	secrets     map[string]any // related Secrets, keyed like Metacontroller's v2 request
	boltTLS     *tls.Config    // when set, every simulated instance serves Bolt only over TLS
}

type syncResponse struct {
	Status             map[string]any   `json:"status"`
	Children           []map[string]any `json:"children"`
	ResyncAfterSeconds float64          `json:"resyncAfterSeconds"`
	Plan               []string         `json:"plan"`
}

// harnessConfig is what a harness is built from.
type harnessConfig struct {
	hook  hooks.Config
	world []sim.Option
	pool  bolt.PoolOptions
}

type harnessOption func(*harnessConfig)

func withBudget(d time.Duration) harnessOption {
	return func(c *harnessConfig) { c.hook.SyncBudget = d }
}

// withForceResetTimeout sets how long the hook waits for FORCE RESET CLUSTER STATE (wall
// clock: the simulated leader only progresses when the test advances its clock).
func withForceResetTimeout(d time.Duration) harnessOption {
	return func(c *harnessConfig) { c.pool.ForceResetTimeout = d }
}

// withWorld adds simulator options (the clock is always the harness's manual clock).
func withWorld(opts ...sim.Option) harnessOption {
	return func(c *harnessConfig) { c.world = append(c.world, opts...) }
}

// epoch is where the harness's manual clock starts.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newHarness builds the hook and a simulated Memgraph on a manual clock: simulated time passes
// only when a test advances it (h.advance), so every timed behaviour is deterministic.
func newHarness(t testing.TB, coordinators, data int, opts ...harnessOption) *harness {
	t.Helper()
	cfg := harnessConfig{hook: hooks.Config{SyncBudget: 5 * time.Second}, pool: bolt.PoolOptions{ForceResetTimeout: 300 * time.Millisecond}}
	for _, o := range opts {
		o(&cfg)
	}
	clock := sim.NewManualClock(epoch)
	world := sim.NewWorld(append(cfg.world, sim.WithClock(clock))...)
	t.Cleanup(world.Close)
	cfg.pool.Resolver, cfg.pool.Logger = world, cfg.hook.Logger
	pool := bolt.NewPool(cfg.pool)
	t.Cleanup(func() { _ = pool.Close() })
	if cfg.hook.Connector == nil {
		cfg.hook.Connector = pool
	}
	h := &harness{
		t: t, world: world, clock: clock, pool: pool, handler: hooks.NewHandler(cfg.hook),
		name: "memgraph", ns: "default",
		spec:     map[string]any{"coordinators": coordinators, "dataInstances": data},
		children: map[string]map[string]any{},
		pods:     map[string]bool{},
	}
	t.Cleanup(func() {
		if t.Failed() {
			h.dumpOnFailure()
		}
	})
	return h
}

func (h *harness) network() topology.Network {
	return topology.Network{Cluster: h.name, Namespace: h.ns, ClusterDomain: "cluster.local",
		Ports: topology.Ports{Bolt: 7687, Management: 10000, Replication: 20000, Coordinator: 12000}}
}

func (h *harness) parent() map[string]any {
	return map[string]any{
		"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphCluster",
		"metadata": map[string]any{"name": h.name, "namespace": h.ns, "uid": "uid-1", "generation": 1},
		"spec":     h.spec,
		"status":   h.lastResp.Status,
	}
}

// request renders the sync request Metacontroller would send now (hook version v2 keys).
func (h *harness) request() map[string]any {
	sets, services := map[string]any{}, map[string]any{}
	for key, obj := range h.children {
		kind, name, _ := strings.Cut(key, "/")
		settled := settle(obj)
		switch kind {
		case "StatefulSet":
			sets[h.ns+"/"+name] = settled
		case "Service":
			services[h.ns+"/"+name] = settled
		}
	}
	pods := map[string]any{}
	for pod := range h.pods {
		pods[h.ns+"/"+pod] = readyPod(h.ns, pod, h.podLabels(pod))
	}
	related := map[string]any{"Pod.v1": pods}
	if h.secrets != nil {
		related["Secret.v1"] = h.secrets
	}
	return map[string]any{
		"controller": map[string]any{"kind": "CompositeController"},
		"parent":     h.parent(),
		"children":   map[string]any{"StatefulSet.apps/v1": sets, "Service.v1": services},
		"related":    related,
		"finalizing": false,
	}
}

func (h *harness) podLabels(pod string) map[string]any {
	role := "data"
	if strings.HasPrefix(pod, topology.CoordinatorSetName(h.name)+"-") {
		role = "coordinator"
	}
	labels := map[string]any{}
	for k, v := range topology.PodSelector(h.name) {
		labels[k] = v
	}
	labels["app.kubernetes.io/component"] = role
	return labels
}

// settle gives a returned StatefulSet the generation and status its controller would report
// once every replica is up.
func settle(obj map[string]any) map[string]any {
	out := deepCopy(obj)
	if out["kind"] != "StatefulSet" {
		return out
	}
	meta := out["metadata"].(map[string]any)
	meta["generation"] = 1
	replicas := out["spec"].(map[string]any)["replicas"]
	out["status"] = map[string]any{"observedGeneration": 1, "replicas": replicas, "readyReplicas": replicas}
	return out
}

func readyPod(ns, name string, labels map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
		"status": map[string]any{"phase": "Running", "conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
		}},
	}
}

// sync posts one sync, records the response as applied, and brings pods in line with the
// returned StatefulSets.
func (h *harness) sync() syncResponse { return h.syncWith("") }

func (h *harness) dryRun() syncResponse { return h.syncWith("?dryRun=true") }

func (h *harness) syncWith(query string) syncResponse {
	h.t.Helper()
	code, body := h.post("/sync"+query, h.request())
	return h.record(query, code, body)
}

// syncAsync posts one sync on another goroutine (so the test can act on the simulator while the
// hook works) and returns the function that waits for it and records it like sync.
func (h *harness) syncAsync() func() syncResponse {
	req := h.request()
	type reply struct {
		code int
		body []byte
	}
	done := make(chan reply, 1)
	go func() {
		code, body := h.post("/sync", req)
		done <- reply{code, body}
	}()
	return func() syncResponse {
		h.t.Helper()
		r := <-done
		return h.record("", r.code, r.body)
	}
}

// advance moves simulated time forward.
func (h *harness) advance(d time.Duration) { h.clock.Advance(d) }

func (h *harness) record(query string, code int, body []byte) syncResponse {
	h.t.Helper()
	if code != http.StatusOK {
		h.t.Fatalf("sync answered %d: %s", code, body)
	}
	var resp syncResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		h.t.Fatalf("decoding sync response: %v\n%s", err, body)
	}
	h.lastResp = resp
	if query != "" {
		return resp
	}
	h.children = map[string]map[string]any{}
	for _, c := range resp.Children {
		h.children[fmt.Sprint(c["kind"], "/", c["metadata"].(map[string]any)["name"])] = c
	}
	h.reconcilePods()
	return resp
}

type httpHandler = http.Handler

func (h *harness) post(path string, body any) (int, []byte) { return h.postTo(h.handler, path, body) }

func (h *harness) postTo(handler http.Handler, path string, body any) (int, []byte) {
	raw, err := json.Marshal(body)
	if err != nil {
		h.t.Error(err)
		return 0, nil
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(raw)))
	out, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, out
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

// reconcilePods plays the StatefulSet controller and the kubelet: a pod (and its simulated
// instance) per replica, highest ordinals shed first.
func (h *harness) reconcilePods() {
	n := h.network()
	want := map[string]bool{}
	if sts, ok := h.children["StatefulSet/"+topology.CoordinatorSetName(h.name)]; ok {
		for i := 0; i < replicasOf(sts); i++ {
			c := n.Coordinator(topology.FirstCoordinatorID + i)
			want[c.Pod] = true
			if !h.pods[c.Pod] {
				h.must(h.world.StartCoordinator(sim.CoordinatorSpec{ID: c.ID(), Host: c.Host, BoltPort: 7687, ManagementPort: 10000, CoordinatorPort: 12000, TLS: h.boltTLS}))
			}
		}
	}
	if sts, ok := h.children["StatefulSet/"+topology.DataSetName(h.name)]; ok {
		for i := 0; i < replicasOf(sts); i++ {
			d := n.DataInstance(topology.FirstDataOrdinal + i)
			want[d.Pod] = true
			if !h.pods[d.Pod] {
				h.must(h.world.StartData(sim.DataSpec{Host: d.Host, BoltPort: 7687, ManagementPort: 10000, TLS: h.boltTLS}))
			}
		}
	}
	for pod := range h.pods {
		if !want[pod] {
			h.world.Remove(h.hostOf(pod))
		}
	}
	h.pods = want
}

func (h *harness) hostOf(pod string) string {
	set := topology.DataSetName(h.name)
	if strings.HasPrefix(pod, topology.CoordinatorSetName(h.name)+"-") {
		set = topology.CoordinatorSetName(h.name)
	}
	return fmt.Sprintf("%s.%s.%s.svc.cluster.local", pod, set, h.ns)
}

func replicasOf(sts map[string]any) int {
	return int(sts["spec"].(map[string]any)["replicas"].(float64))
}

func (h *harness) must(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
}

// condition returns the status, reason and message of a condition in the last response.
func (h *harness) condition(typ topology.ConditionType) (status string, reason topology.ConditionReason, message string) {
	conds, _ := h.lastResp.Status["conditions"].([]any)
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == string(typ) {
			return m["status"].(string), topology.ConditionReason(m["reason"].(string)), m["message"].(string)
		}
	}
	return "", "", ""
}

// replicas returns the replica counts of the last response's StatefulSets.
func (h *harness) replicas() (coordinators, data int) {
	for _, c := range h.lastResp.Children {
		if c["kind"] != "StatefulSet" {
			continue
		}
		name := c["metadata"].(map[string]any)["name"]
		if name == topology.CoordinatorSetName(h.name) {
			coordinators = replicasOf(c)
		} else {
			data = replicasOf(c)
		}
	}
	return coordinators, data
}

func (h *harness) assertNoMisuse() {
	h.t.Helper()
	if m := h.world.Misuses(); len(m) > 0 {
		h.t.Fatalf("the hook misused Memgraph: %+v", m)
	}
}

func (h *harness) dumpOnFailure() {
	status, _ := json.MarshalIndent(h.lastResp.Status, "", "  ")
	h.t.Logf("last status:\n%s", status)
	for _, q := range h.world.Queries() {
		h.t.Logf("query: %+v", q)
	}
}

func deepCopy(obj map[string]any) map[string]any {
	raw, _ := json.Marshal(obj)
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return out
}

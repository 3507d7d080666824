package hooks_test

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// harness plays Metacontroller and the StatefulSet controller around the real hook handler and
// a simulated Memgraph: each sync sends the parent, the children the hook returned last time
// (as applied and settled) and Ready pods for every replica; pods that a StatefulSet sheds
// disappear together with their simulated instance. Revisions are modelled as the StatefulSet
// controller keeps them: a set's update revision is its pod-template hash, a new pod is created at
// the update revision when its index is at or above the partition (else at the current one), and
// once per sync the rolling update the partition permits is applied (rollingUpdate): a replaced
// pod's instance dies, and the pod is not Ready for one sync, after which its instance restarts
// on its volume.
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
	podStates   map[string]*podState      // pod → its revision, image, creation and readiness
	currentRevs map[string]string         // StatefulSet name → status.currentRevision
	replaced    []string                  // pods the StatefulSet controller replaced, in order
	// onReplace, when set, runs right before a pod is replaced (its instance still alive).
	onReplace func(pod string)
	// brokenImages never start: a pod created with one stays not Ready, without an instance.
	brokenImages map[string]bool
	annotations  map[string]any // the MemgraphCluster's metadata.annotations
	// controllerLag: the StatefulSet controller acts one sync behind, on each StatefulSet as the
	// previous sync returned it, and reports the generation it observed accordingly.
	controllerLag bool
	setCtl        map[string]*setController // StatefulSet name → what its controller knows
	started       map[string]bool           // hosts whose instance the World has (alive or killed)
	killed        map[string]bool           // hosts a test killed on purpose (h.kill)
	slowJoiners   []string                  // hosts given a join delay
	lastResp      syncResponse
	secrets       map[string]any // related Secrets, keyed like Metacontroller's v2 request
	// podStatus replaces the status of a pod the request carries: a pod not Ready, and why.
	podStatus map[string]map[string]any
	// noLicense leaves out the license Secret (spec.secrets.name's default, memgraph-secrets)
	// that every request otherwise carries.
	noLicense bool
	boltTLS   *tls.Config // when set, every simulated instance serves Bolt only over TLS
	// tlsDir, when set, holds each pod's projected TLS files (rotation_test.go), projected the
	// Secret content the kubelet projects into a pod it starts.
	tlsDir    string
	projected boltPKI
	dataAuth  *sim.Auth // when set, every simulated data instance has this one user
	// keepVolumes: a shed pod's instance is stopped with its state and restarted on it when its
	// pod comes back (claims retained), instead of removed for good.
	keepVolumes bool
	// freshVolumes are hosts whose claims were deleted with their pod (replaceVolume): the next
	// pod of that name starts the instance on fresh state.
	freshVolumes map[string]bool
	// podNodes are the nodes pods run on (spec.nodeName), nodes the related Nodes, keyed by name
	// as Metacontroller's v2 request keys cluster-scoped objects; nil sends none.
	podNodes map[string]string
	nodes    map[string]any
	// dataRoot, when set, gives every data instance the --data-directory <dataRoot>/<host>,
	// where its snapshots are files (a backup agent reads them there).
	dataRoot string
	// related are more related objects each request carries, by type key then v2 key.
	related map[string]map[string]any
	// ingress and nodePorts are what Kubernetes assigned Services, by name: their
	// status.loadBalancer.ingress, and the node port of their first port.
	ingress   map[string][]any
	nodePorts map[string]int64
	// generations: the parent's metadata.generation grows with each change of its spec, as the
	// API server's does (specSeen is the spec it was last counted for); otherwise it stays 1.
	generations bool
	generation  int64
	specSeen    string
}

// dataDir is the data instance host's data directory: under dataRoot, or none.
func (h *harness) dataDir(host string) string {
	if h.dataRoot == "" {
		return ""
	}
	return filepath.Join(h.dataRoot, host)
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
	// connector, when set, is the hook's Connector made from the harness's pool.
	connector func(*bolt.Pool) memgraph.Connector
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

// withMainlessSettle sets the hook's pause before it makes a MAIN (hooks.Config.MainlessSettle),
// for tests of concurrent writers; 0 is the hook's default.
func withMainlessSettle(d time.Duration) harnessOption {
	return func(c *harnessConfig) { c.hook.MainlessSettle = d }
}

// withWorld adds simulator options (the clock is always the harness's manual clock).
func withWorld(opts ...sim.Option) harnessOption {
	return func(c *harnessConfig) { c.world = append(c.world, opts...) }
}

// fixedAgentSecret is the harness's backup-agent Secret data: fixed values (no agent runs in
// these tests), so that every response is reproducible.
func fixedAgentSecret(*topology.Cluster) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range topology.BackupAgentSecretKeys {
		out[k] = base64.StdEncoding.EncodeToString([]byte("harness " + k))
	}
	return out, nil
}

// epoch is where the harness's manual clock starts.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newHarness builds the hook and a simulated Memgraph on a manual clock: simulated time passes
// only when a test advances it (h.advance), so every timed behaviour is deterministic.
func newHarness(t testing.TB, coordinators, data int, opts ...harnessOption) *harness {
	t.Helper()
	// One hook process at a time, so no pause before a MAIN is made (withMainlessSettle).
	cfg := harnessConfig{hook: hooks.Config{SyncBudget: 5 * time.Second, MainlessSettle: -1},
		pool: bolt.PoolOptions{ForceResetTimeout: 300 * time.Millisecond}}
	for _, o := range opts {
		o(&cfg)
	}
	clock := sim.NewManualClock(epoch)
	if cfg.hook.AgentSecretData == nil {
		cfg.hook.AgentSecretData = fixedAgentSecret // responses are reproducible
	}
	if cfg.hook.Now == nil {
		cfg.hook.Now = clock.Now // pods are created on the same clock: a rollout step's age is simulated time
	}
	world := sim.NewWorld(append(cfg.world, sim.WithClock(clock))...)
	t.Cleanup(world.Close)
	cfg.pool.Resolver, cfg.pool.Logger = world, cfg.hook.Logger
	pool := bolt.NewPool(cfg.pool)
	t.Cleanup(func() { _ = pool.Close() })
	if cfg.hook.Connector == nil {
		cfg.hook.Connector = pool
	}
	if cfg.connector != nil {
		cfg.hook.Connector = cfg.connector(pool)
	}
	h := &harness{
		t: t, world: world, clock: clock, pool: pool, handler: hooks.NewHandler(cfg.hook),
		name: "memgraph", ns: "default",
		spec:        map[string]any{"coordinators": coordinators, "dataInstances": data},
		children:    map[string]map[string]any{},
		pods:        map[string]bool{},
		podStates:   map[string]*podState{},
		currentRevs: map[string]string{},
		setCtl:      map[string]*setController{},
		started:     map[string]bool{},
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
	meta := map[string]any{"name": h.name, "namespace": h.ns, "uid": "uid-1", "generation": h.specGeneration()}
	if h.annotations != nil {
		meta["annotations"] = h.annotations
	}
	return map[string]any{
		"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphCluster",
		"metadata": meta,
		"spec":     h.spec,
		"status":   h.lastResp.Status,
	}
}

// specGeneration is the parent's metadata.generation: 1, or with generations one more for each
// change of the spec.
func (h *harness) specGeneration() int64 {
	if !h.generations {
		return 1
	}
	spec, err := json.Marshal(h.spec)
	if err != nil {
		h.t.Fatal(err)
	}
	if string(spec) != h.specSeen {
		h.generation, h.specSeen = h.generation+1, string(spec)
	}
	return h.generation
}

// request renders the sync request Metacontroller would send now (hook version v2 keys).
func (h *harness) request() map[string]any {
	sets, services, budgets := map[string]any{}, map[string]any{}, map[string]any{}
	for key, obj := range h.children {
		kind, name, _ := strings.Cut(key, "/")
		settled := h.settle(obj)
		switch kind {
		case "StatefulSet":
			sets[h.ns+"/"+name] = settled
		case "Service":
			services[h.ns+"/"+name] = settled
		case "PodDisruptionBudget":
			budgets[h.ns+"/"+name] = settled
		}
	}
	pods := map[string]any{}
	for pod := range h.pods {
		pods[h.ns+"/"+pod] = h.podObject(pod)
	}
	secrets := map[string]any{}
	if !h.noLicense {
		secrets[h.ns+"/memgraph-secrets"] = licenseSecret(h.ns)
	}
	for key, s := range h.secrets {
		secrets[key] = s
	}
	related := map[string]any{"Pod.v1": pods, "Secret.v1": secrets}
	for typ, objs := range h.related {
		related[typ] = objs
	}
	if h.nodes != nil {
		related["Node.v1"] = h.nodes
	}
	return map[string]any{
		"controller": map[string]any{"kind": "CompositeController"},
		"parent":     h.parent(),
		"children":   map[string]any{"StatefulSet.apps/v1": sets, "Service.v1": services, "PodDisruptionBudget.policy/v1": budgets},
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

// settle gives a returned StatefulSet the generation and status its controller reports: every
// replica exists, the ones not down are ready, and its update revision is the pod-template hash
// of the spec it last observed.
func (h *harness) settle(obj map[string]any) map[string]any {
	out := deepCopy(obj)
	if out["kind"] == "Service" {
		return h.assigned(out)
	}
	if out["kind"] != "StatefulSet" {
		return out
	}
	meta := out["metadata"].(map[string]any)
	name := meta["name"].(string)
	c := h.controller(name)
	meta["generation"] = max(c.generation, 1)
	replicas, ready := 0, 0
	for pod := range h.pods {
		if strings.HasPrefix(pod, name+"-") {
			replicas++
			if st := h.podStates[pod]; st == nil || !st.starting {
				ready++
			}
		}
	}
	update := c.revision
	if update == "" {
		update = templateHash(out)
	}
	current := h.currentRevs[name]
	if current == "" {
		current = update
	}
	out["status"] = map[string]any{"observedGeneration": max(c.observed, 1), "replicas": replicas, "readyReplicas": ready,
		"updateRevision": update, "currentRevision": current}
	return out
}

// assigned gives a returned Service what Kubernetes assigned it (h.ingress, h.nodePorts).
func (h *harness) assigned(svc map[string]any) map[string]any {
	name := svc["metadata"].(map[string]any)["name"].(string)
	if ingress, ok := h.ingress[name]; ok {
		svc["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": ingress}}
	}
	if port, ok := h.nodePorts[name]; ok {
		ports := svc["spec"].(map[string]any)["ports"].([]any)
		ports[0].(map[string]any)["nodePort"] = port
	}
	return svc
}

// setController is what the harness's StatefulSet controller knows about one StatefulSet.
type setController struct {
	generation, observed int64
	lastSpec             string         // the spec last returned, as JSON
	revision             string         // the pod-template hash of the spec it last acted on
	pending              map[string]any // with controllerLag: the StatefulSet it acts on next
}

func (h *harness) controller(set string) *setController {
	c := h.setCtl[set]
	if c == nil {
		c = &setController{}
		h.setCtl[set] = c
	}
	return c
}

// acting records the StatefulSet a sync returned (a new spec is a new generation) and returns the
// one the controller acts on now: that one, or with controllerLag the one returned before it.
func (h *harness) acting(sts map[string]any) map[string]any {
	c := h.controller(sts["metadata"].(map[string]any)["name"].(string))
	spec, _ := json.Marshal(sts["spec"])
	previous := c.generation
	if string(spec) != c.lastSpec {
		c.generation, c.lastSpec = c.generation+1, string(spec)
	}
	act, generation := sts, c.generation
	if h.controllerLag && c.pending != nil {
		act, generation = c.pending, previous
	}
	c.pending, c.observed, c.revision = sts, generation, templateHash(act)
	return act
}

// podState is what the harness's StatefulSet controller and kubelet know about one pod.
type podState struct {
	revision string // its controller-revision-hash label
	image    string
	args     []any // the memgraph container's args, as its template had them
	created  time.Time
	starting bool // replaced in the last sync: not Ready, its instance not running yet
}

// podObject renders a pod as Metacontroller would send it.
func (h *harness) podObject(pod string) map[string]any {
	obj := h.podObjectAsRun(pod)
	if status, ok := h.podStatus[pod]; ok {
		obj["status"] = status
	}
	return obj
}

func (h *harness) podObjectAsRun(pod string) map[string]any {
	obj := readyPod(h.ns, pod, h.podLabels(pod))
	st := h.podStates[pod]
	if st == nil {
		return obj // a pod a test put in place by hand
	}
	meta := obj["metadata"].(map[string]any)
	meta["labels"].(map[string]any)["controller-revision-hash"] = st.revision
	meta["creationTimestamp"] = st.created.UTC().Format(time.RFC3339)
	obj["spec"] = map[string]any{"containers": []any{map[string]any{"name": topology.ContainerName, "image": st.image, "args": st.args}}}
	if node := h.podNodes[pod]; node != "" {
		obj["spec"].(map[string]any)["nodeName"] = node
	}
	if st.starting {
		obj["status"] = map[string]any{"phase": "Running", "conditions": []any{
			map[string]any{"type": "Ready", "status": "False"},
		}}
	}
	return obj
}

func templateHash(sts map[string]any) string {
	annotations, _ := sts["metadata"].(map[string]any)["annotations"].(map[string]any)
	hash, _ := annotations[topology.AnnotationTemplateHash].(string)
	return hash
}

func templateImage(sts map[string]any) string {
	pod := sts["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	return pod["containers"].([]any)[0].(map[string]any)["image"].(string)
}

func templateArgs(sts map[string]any) []any {
	pod := sts["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	args, _ := pod["containers"].([]any)[0].(map[string]any)["args"].([]any)
	return args
}

func partitionOf(sts map[string]any) int {
	ru, _ := sts["spec"].(map[string]any)["updateStrategy"].(map[string]any)["rollingUpdate"].(map[string]any)
	p, _ := ru["partition"].(float64)
	return int(p)
}

// licenseSecret is the default license Secret, memgraph-secrets, as the related objects carry it.
func licenseSecret(ns string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "memgraph-secrets", "namespace": ns},
		"data":     map[string]any{"MEMGRAPH_ENTERPRISE_LICENSE": "bGljZW5zZQ==", "MEMGRAPH_ORGANIZATION_NAME": "b3Jn"}}
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
		select {
		case r := <-done:
			return h.record("", r.code, r.body)
		case <-time.After(time.Minute): // h.post fails the test from its goroutine: not a hang
			h.t.Fatal("the sync did not answer within a minute")
			panic("unreachable")
		}
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
	raw, err := metacontrollerJSON(body)
	if err != nil {
		h.t.Error(err)
		return 0, nil
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(raw)))
	out, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, out
}

// metacontrollerJSON encodes a hook request as Metacontroller does, its fields in the order of
// its CompositeHookRequest — controller, parent, children, related, finalizing (v4.17.2
// pkg/controller/composite/api/v1/hooks.go 31–37) — and any other field after them; any other
// body as encoding/json does.
func metacontrollerJSON(body any) ([]byte, error) {
	fields, ok := body.(map[string]any)
	if !ok {
		return json.Marshal(body)
	}
	order := []string{"controller", "parent", "children", "related", "finalizing"}
	for _, k := range sortedCopy(keysOf(fields)) {
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	var out bytes.Buffer
	for _, k := range order {
		v, present := fields[k]
		if !present {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if out.Len() == 0 {
			out.WriteByte('{')
		} else {
			out.WriteByte(',')
		}
		fmt.Fprintf(&out, "%q:%s", k, raw)
	}
	if out.Len() == 0 {
		out.WriteByte('{')
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

// reconcilePods plays the StatefulSet controller and the kubelet: a pod (and its simulated
// instance) per replica, highest ordinals shed first, and the rolling update the partition
// permits (rollingUpdate). A replaced pod is deleted at once and created again by the next
// round, at the revision the partition then gives it, its instance restarting on its volume.
func (h *harness) reconcilePods() {
	n := h.network()
	want, created := map[string]bool{}, map[string]bool{}
	acted := map[string]map[string]any{}
	for _, set := range []string{topology.CoordinatorSetName(h.name), topology.DataSetName(h.name)} {
		if sts, ok := h.children["StatefulSet/"+set]; ok {
			acted[set] = h.acting(sts)
		}
	}
	if sts, ok := acted[topology.CoordinatorSetName(h.name)]; ok {
		for i := 0; i < replicasOf(sts); i++ {
			c := n.Coordinator(topology.FirstCoordinatorID + i)
			want[c.Pod] = true
			if !h.pods[c.Pod] {
				created[c.Pod] = true
				h.createPod(sts, c.Pod, i, func(version string) error {
					return h.world.StartCoordinator(sim.CoordinatorSpec{ID: c.ID(), Host: c.Host, BoltPort: 7687, ManagementPort: 10000,
						CoordinatorPort: 12000, TLS: h.boltTLS, Files: h.tlsFiles(c.Host, c.Pod), Version: version})
				})
			}
		}
	}
	if sts, ok := acted[topology.DataSetName(h.name)]; ok {
		first := startOrdinal(sts, topology.DataSetName(h.name), h.name)
		for i := 0; i < replicasOf(sts); i++ {
			d := n.DataInstance(first + i)
			want[d.Pod] = true
			if !h.pods[d.Pod] {
				created[d.Pod] = true
				h.createPod(sts, d.Pod, i, func(version string) error {
					return h.world.StartData(sim.DataSpec{Host: d.Host, BoltPort: 7687, ManagementPort: 10000, TLS: h.boltTLS,
						Files: h.tlsFiles(d.Host, d.Pod), Version: version, Auth: h.dataAuth, DataDir: h.dataDir(d.Host)})
				})
			}
		}
	}
	for pod := range h.pods {
		if !want[pod] {
			h.shed(pod)
		}
	}
	h.pods = want
	for set, sts := range acted {
		h.rollingUpdate(set, sts, created)
	}
}

// createPod records a new pod of sts at index i, at the revision the partition gives it, and
// starts its instance at the Memgraph version of the pod's image: with start the first time, on
// its volume (RestartAt) when its host ran before; a pod of a broken image starts nothing and is
// never Ready.
func (h *harness) createPod(sts map[string]any, pod string, i int, start func(version string) error) {
	set := sts["metadata"].(map[string]any)["name"].(string)
	st := &podState{revision: templateHash(sts), image: templateImage(sts), args: templateArgs(sts), created: h.clock.Now()}
	if current := h.currentRevs[set]; current == "" {
		h.currentRevs[set] = st.revision
	} else if i < partitionOf(sts) && current != st.revision {
		old := h.podAt(current)
		st.revision, st.image, st.args = current, old.image, old.args
	}
	h.podStates[pod] = st
	host := h.hostOf(pod)
	if h.tlsDir != "" {
		h.projectTo(host) // the kubelet mounts the Secret as it is now
	}
	switch {
	case h.brokenImages[st.image]:
		st.starting = true
	case h.started[host] && h.freshVolumes[host]:
		h.must(h.world.Wipe(host))
		delete(h.freshVolumes, host)
	case h.started[host]:
		h.must(h.world.RestartAt(host, imageTag(st.image)))
	default:
		h.must(start(imageTag(st.image)))
		h.started[host] = true
	}
}

// imageTag is the tag of an image (repository:tag), which the simulator reads as the Memgraph
// version when it is one; "" for an image without a tag.
func imageTag(image string) string {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	return image[i+1:]
}

// podAt is some pod created at revision, whose image and args are the revision's (the harness
// keeps no ControllerRevisions); zero when none is.
func (h *harness) podAt(revision string) podState {
	for _, st := range h.podStates {
		if st.revision == revision {
			return *st
		}
	}
	return podState{}
}

// rollingUpdate replaces, at or above the partition and highest first, every pod not at the
// update revision that is down already, else (while none of the set's pods is down, a pod just
// created counting as down) one that is up, as the StatefulSet controller does with
// maxUnavailable 1 under the Parallel policy; once every pod is at the update revision and up,
// that revision becomes the current one.
func (h *harness) rollingUpdate(set string, sts map[string]any, created map[string]bool) {
	update, replicas, partition := templateHash(sts), replicasOf(sts), partitionOf(sts)
	pod := func(i int) string { return fmt.Sprintf("%s-%d", set, i+startOrdinal(sts, set, h.name)) }
	down := false
	for i := replicas - 1; i >= 0; i-- {
		st := h.podStates[pod(i)]
		switch {
		case st == nil || !st.starting && !created[pod(i)]:
		case i >= partition && st.revision != update:
			h.replace(pod(i))
			down = true
		default:
			down = true
		}
	}
	for i := replicas - 1; i >= partition && !down; i-- {
		if st := h.podStates[pod(i)]; st != nil && st.revision != update {
			h.replace(pod(i))
			return
		}
	}
	for i := 0; i < replicas; i++ {
		if st := h.podStates[pod(i)]; st == nil || st.revision != update || st.starting || created[pod(i)] {
			return
		}
	}
	h.currentRevs[set] = update
}

// replace deletes a pod: its instance dies now; the next round creates the pod again.
func (h *harness) replace(pod string) {
	if h.onReplace != nil {
		h.onReplace(pod)
	}
	if host := h.hostOf(pod); h.world.Running(host) {
		h.must(h.world.Kill(host))
	}
	delete(h.podStates, pod)
	delete(h.pods, pod)
	h.replaced = append(h.replaced, pod)
}

func firstOrdinal(set, cluster string) int {
	if set == topology.CoordinatorSetName(cluster) {
		return topology.FirstCoordinatorID
	}
	return topology.FirstDataOrdinal
}

// shed takes a pod away: its instance stops with its state when volumes are kept (a later pod
// of that name restarts it, createPod), else it is removed for good.
func (h *harness) shed(pod string) {
	delete(h.podStates, pod)
	if h.keepVolumes {
		_ = h.world.Kill(h.hostOf(pod)) // an instance a test killed, or a broken image's, is down already
		return
	}
	h.world.Remove(h.hostOf(pod))
	delete(h.started, h.hostOf(pod))
}

// startOrdinal is a StatefulSet's first ordinal: its spec.ordinals.start (the data window of a
// hibernating cluster) or the role's.
func startOrdinal(sts map[string]any, set, cluster string) int {
	if start := topology.DataWindow(sts); start != nil {
		return int(*start)
	}
	return firstOrdinal(set, cluster)
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
func (h *harness) condition(typ v1alpha1.ConditionType) (status string, reason v1alpha1.ConditionReason, message string) {
	conds, _ := h.lastResp.Status["conditions"].([]any)
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == string(typ) {
			return m["status"].(string), v1alpha1.ConditionReason(m["reason"].(string)), m["message"].(string)
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

package hooks

import (
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The parent cache must change nothing but speed: for many parents, synced in turn through a
// cache too small to hold them all (so parents are forgotten and admitted again) and each
// rendered at several replica counts, partitions and generations, the cached template hashes and
// children equal what topology renders for that parent alone, uncached.
func TestParentCacheChangesNothingButSpeed(t *testing.T) {
	rng := rand.New(rand.NewSource(15))
	parents := make([][]byte, 60)
	for i := range parents {
		parents[i] = randomParent(t, rng, i)
	}
	cache := newParentCache(16, "")
	hits := 0
	for round := 0; round < 3; round++ {
		for _, i := range rng.Perm(len(parents)) {
			raw := parents[i]
			cache.mu.Lock()
			cached := cache.parents[string(raw)] != nil
			cache.mu.Unlock()
			if cached {
				hits++
			}
			p, err := cache.admit(raw)
			if err != nil {
				t.Fatalf("parent %d: %v", i, err)
			}
			assertRendersAsUncached(t, p, raw, randomRendering(rng, p.cluster))
		}
	}
	if hits == 0 {
		t.Fatal("no parent was served from the cache: the test proves nothing")
	}
	if len(cache.parents) > 16 {
		t.Errorf("the cache holds %d parents, more than its bound 16", len(cache.parents))
	}
}

func assertRendersAsUncached(t *testing.T, p *admittedParent, raw []byte, r topology.Rendering) {
	t.Helper()
	fresh, err := topology.Admit(raw)
	if err != nil {
		t.Fatal(err)
	}
	wantCoordinators, wantData, err := topology.PodTemplateHashes(fresh, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if h := p.templateHashes("", ""); h != [2]string{wantCoordinators, wantData} {
		t.Errorf("%s: cached template hashes %s, uncached %s %s", clusterKey(fresh), h, wantCoordinators, wantData)
	}
	if diff := cmp.Diff(fresh.Declare(r.Replicas), p.declare(r.Replicas)); diff != "" {
		t.Errorf("%s: cached Declared differs from uncached (-uncached +cached):\n%s", clusterKey(fresh), diff)
	}
	children, err := topology.Render(fresh, r)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(children)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a miss, then a hit
		got, err := p.children(r)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%s %+v: cached children differ from uncached:\n%s\n%s", clusterKey(fresh), r, got, want)
		}
	}
}

// randomParent is a valid MemgraphCluster varying every input rendering reads: name, namespace,
// the restartedAt annotation and the spec (hibernate and the claims' retention included). Clusters share names, so a cache keyed by less than
// the whole parent would hand one cluster another's children.
func randomParent(t *testing.T, rng *rand.Rand, i int) []byte {
	pick := func(options ...any) any { return options[rng.Intn(len(options))] }
	meta := map[string]any{"name": pick("mg", "graph"), "namespace": pick("default", "prod"), "generation": 1 + i}
	if rng.Intn(2) == 0 {
		meta["annotations"] = map[string]any{topology.AnnotationRestartedAt: pick("2026-01-01T00:00:00Z", "2026-02-02T00:00:00Z")}
	}
	spec := map[string]any{
		"coordinators":  pick(3, 5, 7),
		"dataInstances": 1 + rng.Intn(15),
		"image":         map[string]any{"tag": pick("3.12.0", "3.11.0")},
		"clusterDomain": pick("cluster.local", "corp.internal"),
		"ports":         map[string]any{"bolt": pick(7687, 7688)},
		"storage": map[string]any{
			"data":            map[string]any{"libPVCSize": pick("1Gi", "1024Mi", "50Gi")},
			"retentionPolicy": pick("Retain", "Delete"),
		},
		"hibernate": rng.Intn(3) == 0,
	}
	if rng.Intn(2) == 0 {
		spec["tls"] = map[string]any{"secretName": "bolt-tls"}
	}
	if rng.Intn(2) == 0 {
		spec["coordinatorTemplate"] = map[string]any{"labels": map[string]any{"team": pick("a", "b")}, "extraArgs": []any{"--log-level=TRACE"}}
	}
	raw, err := json.Marshal(map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": v1alpha1.Kind, "metadata": meta, "spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func randomRendering(rng *rand.Rand, c *topology.Cluster) topology.Rendering {
	want := c.Replicas()
	n := func(max int32) int32 { return rng.Int31n(max + 1) }
	r := topology.Rendering{
		Replicas:    topology.Replicas{Coordinators: n(want.Coordinators), DataInstances: n(want.DataInstances)},
		Partitions:  topology.Partitions{Coordinators: n(2), DataInstances: n(2)},
		Generations: topology.TemplateGenerations{Coordinators: int64(n(3)), DataInstances: int64(n(3))},
	}
	if rng.Intn(3) == 0 { // a hibernation window, awake (waking) or hibernating
		w := n(want.DataInstances - 1)
		r.Window = &w
	}
	return r
}

package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
)

// Before the MAIN is known, <cluster>-rw selects no pod (pod-name "", a name no pod has), and
// <cluster>-ro selects every data pod; both on the data instances' Bolt port.
func TestWriteAndReadServicesBeforeMain(t *testing.T) {
	children := render(t, apitest.MinimalCluster(), Replicas{3, 2})
	byID := map[string]map[string]any{}
	for _, child := range children {
		byID[childID(child)] = child
	}
	selector := func(id string) any { return byID[id]["spec"].(map[string]any)["selector"] }
	dataSelector := map[string]any{v1alpha1.LabelName: NameValue, v1alpha1.LabelInstance: "memgraph", v1alpha1.LabelComponent: RoleData}
	wantRW := map[string]any{v1alpha1.LabelName: NameValue, v1alpha1.LabelInstance: "memgraph", v1alpha1.LabelComponent: RoleData, LabelPodName: ""}
	if diff := cmp.Diff(wantRW, selector("service-memgraph-rw")); diff != "" {
		t.Errorf("-rw selector before the MAIN is known (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(dataSelector, selector("service-memgraph-ro")); diff != "" {
		t.Errorf("-ro selector (-want +got):\n%s", diff)
	}
	for _, id := range []string{"service-memgraph-rw", "service-memgraph-ro"} {
		ports := byID[id]["spec"].(map[string]any)["ports"]
		want := []any{map[string]any{"name": PortNameBolt, "port": int64(7687), "targetPort": int64(7687), "protocol": "TCP"}}
		if diff := cmp.Diff(want, ports); diff != "" {
			t.Errorf("%s ports (-want +got):\n%s", id, diff)
		}
	}
}

// A MAIN points -rw at the MAIN's pod and the budgets at it, the same pod, and changes no
// other child.
func TestRenderMainMovesServiceAndBudgetTogether(t *testing.T) {
	c := admit(t, apitest.MinimalCluster())
	for _, mainPod := range []string{"memgraph-data-0", "memgraph-data-2"} {
		before := render(t, apitest.MinimalCluster(), Replicas{3, 3})
		got, err := Render(c, Rendering{Replicas: Replicas{3, 3}, Partitions: Partitions{3, 3}, Generations: TemplateGenerations{1, 1},
			MainPod: mainPod, HeldPod: mainPod})
		if err != nil {
			t.Fatalf("Render with MAIN %s: %v", mainPod, err)
		}
		byID := map[string]map[string]any{}
		for _, child := range got {
			byID[childID(child)] = child
		}
		rwSelector := byID["service-memgraph-rw"]["spec"].(map[string]any)["selector"].(map[string]any)
		budgetSelector := byID["poddisruptionbudget-memgraph-main"]["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
		if rwSelector[LabelPodName] != mainPod || budgetSelector[LabelPodName] != mainPod {
			t.Errorf("MAIN in %s: -rw selects pod %v, the MAIN's budget pod %v", mainPod, rwSelector[LabelPodName], budgetSelector[LabelPodName])
		}
		for i, child := range before {
			id := childID(child)
			if id == "service-memgraph-rw" || id == "poddisruptionbudget-memgraph-data" {
				continue
			}
			if diff := cmp.Diff(child, got[i]); diff != "" {
				t.Errorf("MAIN in %s: %s changed (-before +after):\n%s", mainPod, id, diff)
			}
		}
	}
}

func TestRenderWriteServiceRefuses(t *testing.T) {
	c := admit(t, apitest.MinimalCluster())
	for _, pod := range []string{"memgraph-coordinator-1", "other-data-0"} {
		if _, err := Render(c, Rendering{Replicas: Replicas{3, 2}, MainPod: pod}); err == nil {
			t.Errorf("Render with the MAIN's pod %q: want an error", pod)
		}
	}
	if _, err := Render(nil, Rendering{Replicas: Replicas{3, 2}, MainPod: "memgraph-data-0"}); err == nil {
		t.Error("no cluster: want an error")
	}
}

package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
)

func storedBudget(name, namespace string, labels, selector map[string]any, maxUnavailable int64) map[string]any {
	return map[string]any{
		"apiVersion": "policy/v1",
		"kind":       "PodDisruptionBudget",
		"metadata":   map[string]any{"name": name, "namespace": namespace, "labels": labels},
		"spec": map[string]any{
			"maxUnavailable": maxUnavailable,
			"selector":       map[string]any{"matchLabels": selector},
		},
	}
}

func dataLabels(cluster string, user map[string]any) map[string]any {
	out := map[string]any{
		v1alpha1.LabelName: NameValue, v1alpha1.LabelInstance: cluster, v1alpha1.LabelComponent: RoleData, v1alpha1.LabelManagedBy: ManagedByValue,
	}
	for k, v := range user {
		out[k] = v
	}
	return out
}

func TestMainBudget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster func() *v1alpha1.MemgraphCluster
		mainPod string
		want    map[string]any
	}{
		{"default cluster, MAIN on the first data pod", apitest.MinimalCluster, "memgraph-data-0",
			storedBudget("memgraph-main", "default", dataLabels("memgraph", nil),
				map[string]any{LabelPodName: "memgraph-data-0"}, 0)},
		{"user labels on the data role, MAIN on the third data pod", apitest.EveryKnob, "graph-data-2",
			storedBudget("graph-main", "prod", dataLabels("graph", map[string]any{"team": "graph", "tier": "data"}),
				map[string]any{LabelPodName: "graph-data-2"}, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MainBudget(admit(t, tc.cluster()), tc.mainPod)
			if err != nil {
				t.Fatalf("MainBudget: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("MAIN budget (-want +got):\n%s", diff)
			}
		})
	}
}

// Only one of the cluster's data pods can be the MAIN's.
func TestMainBudgetRefusesAPodThatIsNoDataPod(t *testing.T) {
	c := admit(t, apitest.MinimalCluster())
	for _, pod := range []string{"", "memgraph-coordinator-1", "other-data-0", "memgraph-data-", "memgraph-data-01", "memgraph-data-x"} {
		if got, err := MainBudget(c, pod); err == nil {
			t.Errorf("MainBudget(%q) = %v, want an error", pod, got)
		}
	}
	if _, err := MainBudget(nil, "memgraph-data-0"); err == nil {
		t.Error("MainBudget of no cluster: want an error")
	}
}

// Each role's budget selects exactly its StatefulSet's pods and allows one eviction at a time.
func TestRoleBudgetsSelectTheirStatefulSetsPods(t *testing.T) {
	children := render(t, apitest.EveryKnob(), Replicas{5, 3})
	byID := map[string]map[string]any{}
	for _, c := range children {
		byID[childID(c)] = c
	}
	for _, role := range []struct{ budget, set string }{
		{"poddisruptionbudget-graph-coordinator", "statefulset-graph-coordinator"},
		{"poddisruptionbudget-graph-data", "statefulset-graph-data"},
	} {
		pdb, sts := byID[role.budget], byID[role.set]
		if pdb == nil || sts == nil {
			t.Fatalf("missing %s or %s among %v", role.budget, role.set, children)
		}
		pdbSpec, stsSpec := pdb["spec"].(map[string]any), sts["spec"].(map[string]any)
		if diff := cmp.Diff(stsSpec["selector"], pdbSpec["selector"]); diff != "" {
			t.Errorf("%s selector differs from %s's (-sts +pdb):\n%s", role.budget, role.set, diff)
		}
		if got := pdbSpec["maxUnavailable"]; got != int64(1) {
			t.Errorf("%s maxUnavailable = %v, want 1", role.budget, got)
		}
		if _, ok := pdbSpec["minAvailable"]; ok {
			t.Errorf("%s sets minAvailable as well", role.budget)
		}
	}
}

// With the MAIN's budget in place, the data budget leaves its pod to it (no pod under two
// budgets) and allows two unavailable, the MAIN being one; every other child is untouched but
// the -rw Service, which follows the MAIN with its budget (TestRenderMainMovesServiceAndBudgetTogether).
func TestRenderMainBudget(t *testing.T) {
	c := admit(t, apitest.MinimalCluster())
	children := render(t, apitest.MinimalCluster(), Replicas{3, 3})
	got, err := Render(c, Rendering{Replicas: Replicas{3, 3}, Partitions: Partitions{3, 3}, Generations: TemplateGenerations{1, 1},
		MainPod: "memgraph-data-1", HeldPod: "memgraph-data-1"})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	var ids []string
	for _, child := range got {
		ids = append(ids, childID(child))
	}
	wantIDs := []string{
		"statefulset-memgraph-coordinator", "statefulset-memgraph-data",
		"service-memgraph-coordinator", "service-memgraph-data", "service-memgraph", "service-memgraph-rw", "service-memgraph-ro",
		"poddisruptionbudget-memgraph-coordinator", "poddisruptionbudget-memgraph-data", "poddisruptionbudget-memgraph-main",
	}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Fatalf("children (-want +got):\n%s", diff)
	}
	for i := range 8 {
		if childID(children[i]) == "service-memgraph-rw" {
			continue
		}
		if diff := cmp.Diff(children[i], got[i]); diff != "" {
			t.Errorf("%s changed with the budgets (-before +after):\n%s", childID(children[i]), diff)
		}
	}
	wantData := storedBudget("memgraph-data", "default", dataLabels("memgraph", nil), map[string]any{
		v1alpha1.LabelName: NameValue, v1alpha1.LabelInstance: "memgraph", v1alpha1.LabelComponent: RoleData,
	}, 2)
	wantData["spec"].(map[string]any)["selector"].(map[string]any)["matchExpressions"] = []any{
		map[string]any{"key": LabelPodName, "operator": "NotIn", "values": []any{"memgraph-data-1"}},
	}
	if diff := cmp.Diff(wantData, got[8]); diff != "" {
		t.Errorf("data budget (-want +got):\n%s", diff)
	}
	main, err := MainBudget(c, "memgraph-data-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(main, got[9]); diff != "" {
		t.Errorf("MAIN budget (-want +got):\n%s", diff)
	}
}

func TestRenderMainBudgetRefuses(t *testing.T) {
	c := admit(t, apitest.MinimalCluster())
	if _, err := Render(c, Rendering{Replicas: Replicas{3, 2}, MainPod: "memgraph-coordinator-1"}); err == nil {
		t.Error("a coordinator's pod as the MAIN's: want an error")
	}
}

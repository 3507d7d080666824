package topology

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
)

var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })

func matches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// PodSelector picks the pods of both roles of its cluster and nothing of another cluster, and
// RoleOfPod tells the roles apart from the pods' own labels.
func TestPodSelectorAndRoleOfPod(t *testing.T) {
	var roles []string
	for _, sts := range render(t, apitest.EveryKnob(), Replicas{5, 3})[:2] {
		raw := sts["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
		labels := map[string]string{}
		for k, v := range raw {
			labels[k] = v.(string)
		}
		if !matches(PodSelector("graph"), labels) {
			t.Errorf("PodSelector(graph) misses %s's pods", childID(sts))
		}
		if matches(PodSelector("graph-2"), labels) {
			t.Errorf("PodSelector(graph-2) matches %s's pods", childID(sts))
		}
		roles = append(roles, RoleOfPod(labels))
	}
	if diff := cmp.Diff([]string{RoleCoordinator, RoleData}, roles); diff != "" {
		t.Errorf("RoleOfPod (-want +got):\n%s", diff)
	}
	for _, labels := range []map[string]string{
		nil,
		{v1alpha1.LabelComponent: RoleData},
		{v1alpha1.LabelName: "postgres", v1alpha1.LabelComponent: RoleData},
		{v1alpha1.LabelName: NameValue, v1alpha1.LabelComponent: "client"},
	} {
		if got := RoleOfPod(labels); got != "" {
			t.Errorf("RoleOfPod(%v) = %q, want none", labels, got)
		}
	}
}

// The selectors are fixed by the cluster name and role alone: no knob can move them.
func TestSelectorsDependOnlyOnNameAndRole(t *testing.T) {
	plain := apitest.MinimalCluster()
	plain.Name = "graph"
	plain.Namespace = "prod"
	a, b := render(t, plain, Replicas{3, 2}), render(t, apitest.EveryKnob(), Replicas{5, 3})
	for i := range a {
		for _, field := range []string{"selector"} {
			sa, sb := a[i]["spec"].(map[string]any)[field], b[i]["spec"].(map[string]any)[field]
			if diff := cmp.Diff(sa, sb); diff != "" {
				t.Errorf("%s %s moved with the spec (-plain +every knob):\n%s", childID(a[i]), field, diff)
			}
		}
	}
	if !slices.Equal([]string{v1alpha1.LabelComponent, v1alpha1.LabelInstance, v1alpha1.LabelName}, sortedKeys(RoleSelector("x", RoleData))) {
		t.Errorf("RoleSelector keys %v", sortedKeys(RoleSelector("x", RoleData)))
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

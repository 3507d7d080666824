package hooks_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// placePods puts coordinator i+1 on coordinators[i] and data instance i on data[i].
func (h *harness) placePods(coordinators, data []string) {
	h.podNodes = map[string]string{}
	for i, node := range coordinators {
		h.podNodes[fmt.Sprintf("%s-%d", topology.CoordinatorSetName(h.name), i+1)] = node
	}
	for i, node := range data {
		h.podNodes[fmt.Sprintf("%s-%d", topology.DataSetName(h.name), i)] = node
	}
}

// memgraphArgs are the memgraph container's args in the last response's StatefulSet set.
func (h *harness) memgraphArgs(set string) []string {
	for _, c := range h.lastResp.Children {
		if c["kind"] != "StatefulSet" || c["metadata"].(map[string]any)["name"] != set {
			continue
		}
		pod := c["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		for _, ct := range pod["containers"].([]any) {
			if ct.(map[string]any)["name"] == topology.ContainerName {
				var args []string
				for _, a := range ct.(map[string]any)["args"].([]any) {
					args = append(args, a.(string))
				}
				return args
			}
		}
	}
	return nil
}

// Pods crowded on two nodes — two of three coordinators on n1, the MAIN and its Sync replica on
// n2 — make HighlyAvailable False naming both nodes and what each holds, and the single-node risk
// gauge 1; the pods spread over three nodes, it turns True and the gauge 0. The data pods' memory
// limit becomes --memory-limit, its request below the limit a warning, and both roles' limits
// gauges.
func TestCrowdedNodesAreASingleNodeRisk(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, 3, 2, func(c *harnessConfig) { c.hook.Registerer = reg })
	h.spec["coordinatorTemplate"] = map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "512Mi"}}}
	h.spec["dataTemplate"] = map[string]any{"resources": map[string]any{
		"requests": map[string]any{"memory": "1Gi"}, "limits": map[string]any{"memory": "2Gi"}}}
	h.placePods([]string{"n1", "n1", "n2"}, []string{"n2", "n2"})
	h.bootstrap()
	h.assertConverged()

	status, reason, msg := h.condition(v1alpha1.ConditionHighlyAvailable)
	if status != "False" || reason != v1alpha1.ReasonSingleNodeRisk {
		t.Fatalf("HighlyAvailable %s %s: %s", status, reason, msg)
	}
	main := h.lastResp.Status["main"].(string)
	replica := map[string]string{"instance_0": "instance_1", "instance_1": "instance_0"}[main]
	for _, want := range []string{
		"node n1 holds 2 of 3 coordinators (coordinator_1, coordinator_2), so its loss takes the Raft majority",
		"node n2 holds the MAIN " + main + " with every Sync and StrictSync replica (" + replica + ")",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("HighlyAvailable's message %q lacks %q", msg, want)
		}
	}
	labels := map[string]string{"namespace": h.ns, "name": h.name}
	if got := metricValue(t, reg, "memgraph_hooks_cluster_single_node_risk", labels); got != 1 {
		t.Errorf("single_node_risk = %v on crowded nodes, want 1", got)
	}
	for role, mib := range map[string]float64{topology.RoleCoordinator: 409, topology.RoleData: 1638} {
		l := map[string]string{"namespace": h.ns, "name": h.name, "role": role}
		if got := metricValue(t, reg, "memgraph_hooks_cluster_memory_limit_bytes", l); got != mib*(1<<20) {
			t.Errorf("memory_limit_bytes{role=%s} = %v, want %v MiB", role, got, mib)
		}
	}
	if args := h.memgraphArgs(topology.DataSetName(h.name)); !slices.Contains(args, "--memory-limit=1638") {
		t.Errorf("the data pods' args %q lack --memory-limit=1638 (80%% of 2Gi)", args)
	}
	warnings, _ := h.lastResp.Status["warnings"].([]any)
	if len(warnings) != 1 || !strings.Contains(warnings[0].(string), "sets requests.memory 1Gi and limits.memory 2Gi") {
		t.Errorf("status.warnings %q: want the data pods' memory request below their limit", warnings)
	}

	h.placePods([]string{"n1", "n2", "n3"}, []string{"n1", "n2"})
	h.sync()
	if status, reason, msg := h.condition(v1alpha1.ConditionHighlyAvailable); status != "True" || reason != v1alpha1.ReasonSpreadAcrossNodes ||
		!strings.Contains(msg, "the pods run on 3 nodes") {
		t.Errorf("spread over three nodes: HighlyAvailable %s %s: %s", status, reason, msg)
	}
	if got := metricValue(t, reg, "memgraph_hooks_cluster_single_node_risk", labels); got != 0 {
		t.Errorf("single_node_risk = %v spread over three nodes, want 0", got)
	}
	h.assertNoMisuse()
}

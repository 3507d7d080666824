package examples_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/examples"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The quickstart cluster must decode as a hook would receive it, pass validation, and render the
// topology the README promises, relying on the defaults for everything else.
func TestMinimalClusterIsTheQuickstartCluster(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(examples.MinimalCluster, &doc); err != nil {
		t.Fatalf("minimal-cluster.yaml is not YAML: %v", err)
	}
	if ns, ok := doc["metadata"].(map[string]any)["namespace"]; ok {
		t.Errorf("minimal-cluster.yaml names namespace %v: an example goes where the user applies it, beside the Secret", ns)
	}
	raw, err := examples.MinimalClusterIn("default")
	if err != nil {
		t.Fatal(err)
	}
	mc, err := topology.DecodeCluster(raw)
	if err != nil {
		t.Fatalf("DecodeCluster: %v", err)
	}
	if mc.Name != "memgraph" || mc.Namespace != "default" {
		t.Errorf("cluster is %s/%s, want default/memgraph", mc.Namespace, mc.Name)
	}
	cluster, err := topology.NewCluster(mc)
	if err != nil {
		t.Fatalf("NewCluster: %v", err)
	}
	d := cluster.Spec()
	got := []any{d.Coordinators, d.DataInstances, d.Image.Repository + ":" + d.Image.Tag, d.Secrets.Name}
	want := []any{int32(3), int32(2), "docker.io/memgraph/memgraph:3.12.0", "memgraph-secrets"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaulted quickstart cluster (-want +got):\n%s", diff)
	}
	children, err := topology.Render(cluster, topology.Rendering{Replicas: cluster.Replicas()})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	var names []string
	for _, c := range children {
		names = append(names, c["kind"].(string)+"/"+c["metadata"].(map[string]any)["name"].(string))
	}
	wantNames := []string{
		"StatefulSet/memgraph-coordinator", "StatefulSet/memgraph-data",
		"Service/memgraph-coordinator", "Service/memgraph-data", "Service/memgraph", "Service/memgraph-rw", "Service/memgraph-ro",
		"PodDisruptionBudget/memgraph-coordinator", "PodDisruptionBudget/memgraph-data",
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
}

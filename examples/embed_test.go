package examples_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
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
	mc, err := v1alpha1.DecodeCluster(raw)
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

// The backup example: its cluster is the quickstart cluster with a destination the hook admits,
// and its schedule and backup name that cluster and no store, as admission wants them.
func TestBackupsExample(t *testing.T) {
	var kinds []string
	for _, doc := range strings.Split(string(examples.Backups), "\n---\n") {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Metadata.Namespace != "" {
			t.Errorf("%s names namespace %s", obj.Kind, obj.Metadata.Namespace)
		}
		kinds = append(kinds, obj.Kind)
		raw, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		switch obj.Kind {
		case v1alpha1.Kind:
			var withNS map[string]any
			_ = json.Unmarshal(raw, &withNS)
			withNS["metadata"].(map[string]any)["namespace"] = "default"
			raw, _ = json.Marshal(withNS)
			c, err := topology.Admit(raw)
			if err != nil {
				t.Fatalf("the cluster: %v", err)
			}
			if d := c.BackupDestination(); d == nil || d.S3.Bucket != "memgraph-backups" || c.Name() != "memgraph" {
				t.Errorf("the cluster %s names destination %+v", c.Name(), d)
			}
		case v1alpha1.ScheduledBackupKind:
			var sb v1alpha1.MemgraphScheduledBackup
			if strict, err := kjson.UnmarshalStrict(raw, &sb); err != nil || len(strict) > 0 {
				t.Fatalf("the schedule: %v %v", err, strict)
			}
			if vs := v1alpha1.ScheduledBackupViolations("spec", &sb.Spec); len(vs) > 0 || sb.Spec.BackupTemplate.Cluster != "memgraph" ||
				sb.Spec.BackupOwnerReference != v1alpha1.BackupOwnerNone {
				t.Errorf("the schedule %+v: %v", sb.Spec, vs)
			}
		case v1alpha1.BackupKind:
			var b v1alpha1.MemgraphBackup
			if strict, err := kjson.UnmarshalStrict(raw, &b); err != nil || len(strict) > 0 {
				t.Fatalf("the backup: %v %v", err, strict)
			}
			if vs := v1alpha1.BackupViolations("spec", &b.Spec); len(vs) > 0 || b.Spec.Cluster != "memgraph" {
				t.Errorf("the backup %+v: %v", b.Spec, vs)
			}
		}
	}
	if diff := cmp.Diff([]string{v1alpha1.Kind, v1alpha1.ScheduledBackupKind, v1alpha1.BackupKind}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// kustomizeBuild renders an overlay of the repository with kubectl's built-in kustomize, by
// kind/name.
func kustomizeBuild(t *testing.T, dir ...string) map[string]*unstructured.Unstructured {
	t.Helper()
	return kustomizeBuildAt(t, repoPath(dir...))
}

// kustomizeBuildAt renders the overlay at path, by kind/name.
func kustomizeBuildAt(t *testing.T, path string) map[string]*unstructured.Unstructured {
	t.Helper()
	e := needEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := e.Kubectl(ctx, "kustomize", path)
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", path, err)
	}
	objects := map[string]*unstructured.Unstructured{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj != nil {
			u := &unstructured.Unstructured{Object: obj}
			objects[u.GetKind()+"/"+u.GetName()] = u
		}
	}
	return objects
}

func hookImage(t *testing.T, objects map[string]*unstructured.Unstructured) string {
	t.Helper()
	dep := objects["Deployment/memgraph-hooks"]
	if dep == nil {
		t.Fatal("no Deployment memgraph-hooks")
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	image, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image")
	return image
}

// agentImage is the hook's MEMGRAPH_HOOKS_AGENT_IMAGE, which its --agent-image expands: the image
// of every data pod's backup-agent sidecar.
func agentImage(t *testing.T, objects map[string]*unstructured.Unstructured) string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(objects["Deployment/memgraph-hooks"].Object, "spec", "template", "spec", "containers")
	env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	for _, e := range env {
		if e.(map[string]any)["name"] == "MEMGRAPH_HOOKS_AGENT_IMAGE" {
			return fmt.Sprint(e.(map[string]any)["value"])
		}
	}
	return ""
}

// README's install steps work with kubectl alone. Every install path runs the image `make
// image` builds, in the hook and in the backup agents; the README's registry overlay, put over
// any of them, moves both to the registry's image. examples/install-with-monitoring adds the
// monitoring component (PodMonitors, PrometheusRule, dashboard) and its namespace, which the
// default install leaves out.
func TestInstallOverlaysBuildWithKubectl(t *testing.T) {
	monitoringObjects := []string{"PodMonitor/memgraph-hooks", "PodMonitor/memgraph", "PrometheusRule/memgraph-hooks",
		"ConfigMap/memgraph-cluster-dashboard"}
	for _, install := range [][]string{{"manifests"}, {"examples", "install-with-cert-manager"},
		{"examples", "install-with-mtls"}, {"examples", "install-with-monitoring"}} {
		name := strings.Join(install, "/")
		objects := kustomizeBuild(t, install...)
		if hook, agent := hookImage(t, objects), agentImage(t, objects); hook != topology.DefaultAgentImage || agent != hook {
			t.Errorf("%s runs image %q, its backup agents %q; want %s for both", name, hook, agent, topology.DefaultAgentImage)
		}
		dir, image := readmeRegistryOverlay(t, repoPath(install...))
		moved := kustomizeBuildAt(t, dir)
		if hook, agent := hookImage(t, moved), agentImage(t, moved); hook != image || agent != image {
			t.Errorf("the README's registry overlay over %s runs image %q, its backup agents %q; want %s for both", name, hook, agent, image)
		}
	}
	plain := kustomizeBuild(t, "manifests")
	for _, kind := range monitoringObjects {
		if plain[kind] != nil {
			t.Errorf("manifests/ has %s: the monitoring component must stay optional", kind)
		}
	}

	monitored := kustomizeBuild(t, "examples", "install-with-monitoring")
	for _, kind := range monitoringObjects {
		if monitored[kind] == nil {
			t.Errorf("examples/install-with-monitoring has no %s", kind)
		}
	}
	dashboard := monitored["ConfigMap/memgraph-cluster-dashboard"]
	if dashboard != nil && dashboard.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("the dashboard ConfigMap's labels %v lack grafana_dashboard: \"1\"", dashboard.GetLabels())
	}
	rules, _, _ := unstructured.NestedSlice(monitored["NetworkPolicy/memgraph-hooks"].Object, "spec", "ingress")
	if len(rules) != 2 {
		t.Fatalf("NetworkPolicy rules %v", rules)
	}
	from := rules[1].(map[string]any)["from"].([]any)[0].(map[string]any)
	ns, _, _ := unstructured.NestedString(from, "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name")
	port := rules[1].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"]
	if ns != "observability" || port != int64(9090) && port != float64(9090) {
		t.Errorf("the monitoring rule admits namespace %q on port %v, want observability on 9090", ns, port)
	}
}

// readmeRegistryOverlay writes the README's "Installing from a registry" kustomization into a
// directory of its own, its resources pointed at install, and returns the directory and the
// image its images: entry names.
func readmeRegistryOverlay(t *testing.T, install string) (dir, image string) {
	t.Helper()
	readme := string(readFile(t, repoPath("README.md")))
	start := strings.Index(readme, "\n## Installing from a registry\n")
	if start < 0 {
		t.Fatal(`README.md has no "Installing from a registry" section`)
	}
	section := readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(section)
	if block == nil {
		t.Fatal("the README's registry section has no yaml block")
	}
	var k struct {
		Resources []string `json:"resources"`
		Images    []struct {
			Name, NewName, NewTag string
		} `json:"images"`
	}
	if err := yaml.UnmarshalStrict([]byte(block[1]), &k); err != nil || len(k.Images) != 1 || len(k.Resources) != 1 {
		t.Fatalf("the README's registry overlay is not one resource and one image: %v\n%s", err, block[1])
	}
	if k.Images[0].Name != "memgraph-hooks" {
		t.Errorf("the README's images: entry names %q, not the image manifests/ runs", k.Images[0].Name)
	}
	dir = t.TempDir()
	rel, err := filepath.Rel(dir, install)
	if err != nil {
		t.Fatal(err)
	}
	overlay := strings.Replace(block[1], k.Resources[0], rel, 1)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, k.Images[0].NewName + ":" + k.Images[0].NewTag
}

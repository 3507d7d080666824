//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// kustomizeBuild renders an overlay with kubectl's built-in kustomize, by kind/name.
func kustomizeBuild(t *testing.T, dir ...string) map[string]*unstructured.Unstructured {
	t.Helper()
	e := needEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := e.Kubectl(ctx, "kustomize", repoPath(dir...))
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", strings.Join(dir, "/"), err)
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

// README's install steps work with kubectl alone: the image override of examples/install, and
// examples/install-with-monitoring's monitoring component (PodMonitors, PrometheusRule, dashboard)
// and monitoring namespace.
func TestInstallOverlaysBuildWithKubectl(t *testing.T) {
	monitoringObjects := []string{"PodMonitor/memgraph-hooks", "PodMonitor/memgraph", "PrometheusRule/memgraph-hooks",
		"ConfigMap/memgraph-cluster-dashboard"}
	plain := kustomizeBuild(t, "examples", "install")
	if got, agent := hookImage(t, plain), agentImage(t, plain); got != "memgraph-hooks:dev" || agent != got {
		t.Errorf("examples/install runs image %q, its backup agents %q", got, agent)
	}
	for _, kind := range monitoringObjects {
		if plain[kind] != nil {
			t.Errorf("examples/install has %s: the monitoring component must stay optional", kind)
		}
	}

	monitored := kustomizeBuild(t, "examples", "install-with-monitoring")
	if got, agent := hookImage(t, monitored), agentImage(t, monitored); got != "memgraph-hooks:dev" || agent != got {
		t.Errorf("examples/install-with-monitoring runs image %q, its backup agents %q", got, agent)
	}
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

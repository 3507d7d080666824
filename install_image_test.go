package memgraphhooks_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// installPaths are the directories the README tells a user to apply with kubectl apply -k.
var installPaths = []string{"manifests", "examples/install-with-cert-manager", "examples/install-with-mtls", "examples/install-with-monitoring"}

// hookImages renders the kustomization at dir and returns the hook's image and its backup
// agents' (MEMGRAPH_HOOKS_AGENT_IMAGE, the value of --agent-image).
func hookImages(t *testing.T, dir string) (hook, agent string) {
	t.Helper()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	for _, r := range resources.Resources() {
		if r.GetKind() != "Deployment" || r.GetName() != "memgraph-hooks" {
			continue
		}
		raw, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		var dep appsv1.Deployment
		if err := yaml.Unmarshal(raw, &dep); err != nil {
			t.Fatal(err)
		}
		c := dep.Spec.Template.Spec.Containers[0]
		if i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "MEMGRAPH_HOOKS_AGENT_IMAGE" }); i >= 0 {
			agent = c.Env[i].Value
		}
		return c.Image, agent
	}
	t.Fatalf("%s renders no Deployment memgraph-hooks", dir)
	return "", ""
}

// One image name everywhere: the one make image builds is the one every install path runs, in
// the hook and in the backup agents, and the hook's own default for the agents. An images:
// entry of an overlay over any install path sets both.
func TestOneImageNameEverywhere(t *testing.T) {
	image := regexp.MustCompile(`(?m)^IMAGE \?= (\S+)$`).FindStringSubmatch(readDoc(t, "Makefile"))
	if image == nil {
		t.Fatal("the Makefile sets no default IMAGE")
	}
	if topology.DefaultAgentImage != image[1] {
		t.Errorf("--agent-image defaults to %s, make image builds %s", topology.DefaultAgentImage, image[1])
	}
	const registry = "registry.example.com/team/memgraph-hooks:v9.9.9"
	for _, path := range installPaths {
		if hook, agent := hookImages(t, path); hook != image[1] || agent != image[1] {
			t.Errorf("%s runs %q, its backup agents %q; want %s, the image make image builds", path, hook, agent, image[1])
		}
		overlay := t.TempDir()
		abs, err := filepath.Abs(path)
		if err != nil {
			t.Fatal(err)
		}
		base, err := filepath.Rel(overlay, abs) // kustomize takes no absolute resource path
		if err != nil {
			t.Fatal(err)
		}
		kustomization := "resources: [" + base + "]\nimages:\n- name: memgraph-hooks\n  newName: registry.example.com/team/memgraph-hooks\n  newTag: v9.9.9\n"
		if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
			t.Fatal(err)
		}
		if hook, agent := hookImages(t, overlay); hook != registry || agent != registry {
			t.Errorf("an images: entry over %s runs %q, its backup agents %q; want %s for both", path, hook, agent, registry)
		}
	}
}

//go:build e2e

package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/e2e/metacontroller"
)

// clusterController is the CompositeController of MemgraphClusters (manifests/compositecontroller.yaml).
const clusterController = "memgraph-hooks"

// installation is what a scenario plays of an install: the hook's Deployment (its arguments and
// Secret volumes), the CompositeController the test Metacontroller follows and the
// DecoratorController that labels the cordoned Nodes.
type installation struct {
	deployment appsv1.Deployment
	controller *metacontroller.CompositeController
	nodes      *metacontroller.DecoratorController
}

// nodeDecorator is the DecoratorController of the Nodes (manifests/node-decorator.yaml).
const nodeDecorator = "memgraph-nodes"

// installationOf reads manifests/ when dir is empty, otherwise what `kubectl kustomize <dir>`
// builds: the objects a user applies with kubectl apply -k.
func installationOf(t *testing.T, dir []string) installation {
	t.Helper()
	if len(dir) == 0 {
		cc, err := metacontroller.LoadCompositeController(repoPath("manifests"), clusterController)
		if err != nil {
			t.Fatalf("read the CompositeController from manifests/: %v", err)
		}
		dc, err := metacontroller.LoadDecoratorController(repoPath("manifests"), nodeDecorator)
		if err != nil {
			t.Fatalf("read the DecoratorController from manifests/: %v", err)
		}
		return installation{deployment: shippedDeployment(t), controller: cc, nodes: dc}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := needEnv(t).Kubectl(ctx, "kustomize", repoPath(dir...))
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", strings.Join(dir, "/"), err)
	}
	var in installation
	for _, doc := range strings.Split(out, "\n---\n") {
		var probe struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &probe); err != nil {
			t.Fatal(err)
		}
		switch probe.Kind {
		case "Deployment":
			if err := yaml.UnmarshalStrict([]byte(doc), &in.deployment); err != nil {
				t.Fatal(err)
			}
		case "CompositeController":
			cc, err := metacontroller.ParseCompositeController([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if cc.Name == clusterController {
				in.controller = cc
			}
		case "DecoratorController":
			dc, err := metacontroller.ParseDecoratorController([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if dc.Name == nodeDecorator {
				in.nodes = dc
			}
		}
	}
	if in.deployment.Name == "" || in.controller == nil || in.nodes == nil {
		t.Fatalf("%s builds no Deployment, no CompositeController or no DecoratorController of the Nodes", strings.Join(dir, "/"))
	}
	return in
}

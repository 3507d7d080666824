//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const memoryPolicy = "memgraph-hooks-memory"

// installMemoryPolicy applies manifests/memory-warning-policy.yaml, removed when the test ends
// unless it was there before (`kubectl apply -k manifests/` installs it too).
func installMemoryPolicy(t *testing.T, ctx context.Context) {
	t.Helper()
	e := needEnv(t)
	policies := e.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	if _, err := policies.Get(ctx, memoryPolicy, metav1.GetOptions{}); err != nil {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, _ = e.Kubectl(ctx, "delete", "--ignore-not-found", "-f", repoPath("manifests", "memory-warning-policy.yaml"))
		})
	}
	if _, err := e.Kubectl(ctx, "apply", "-f", repoPath("manifests", "memory-warning-policy.yaml")); err != nil {
		t.Fatal(err)
	}
}

// dryRunApply applies a MemgraphCluster with spec in server-side dry run and returns what kubectl
// printed: its warnings, and whether the API server admitted it.
func dryRunApply(t *testing.T, ctx context.Context, namespace, spec string) string {
	t.Helper()
	raw, err := yaml.Marshal(mgcObject(t, namespace, "memory", spec).Object)
	if err != nil {
		t.Fatal(err)
	}
	out, err := needEnv(t).KubectlStdin(ctx, raw, "apply", "--dry-run=server", "-f", "-")
	if err != nil {
		t.Fatalf("the API server refused %q (a warning must never refuse): %v", spec, err)
	}
	return out
}

// The memory warning policy warns exactly when the hook's Go twin does (topology.MemoryWarnings,
// which status.warnings carries), with the same words, and never refuses.
func TestMemoryWarningPolicyWarnsAsTheGoTwin(t *testing.T) {
	installCRD(t)
	ns := newNamespace(t, "memory-warning")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	installMemoryPolicy(t, ctx)
	differ := "dataTemplate: {resources: {requests: {memory: 1Gi}, limits: {memory: 2Gi}}}"
	// A new policy takes a moment to reach the API server's admission chain.
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if out := dryRunApply(t, ctx, ns, differ); !strings.Contains(out, memoryPolicy) {
			return fmt.Errorf("no warning yet: %s", out)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{
		"{}",
		differ,
		"dataTemplate: {resources: {requests: {memory: 2Gi}, limits: {memory: 2Gi}}}",
		"dataTemplate: {resources: {requests: {memory: 2048Mi}, limits: {memory: 2Gi}}}",
		"dataTemplate: {resources: {limits: {memory: 2Gi}}}",
		"dataTemplate: {resources: {requests: {memory: 4Gi}}}",
		"dataTemplate: {resources: {requests: {cpu: '1'}, limits: {cpu: '2'}}}",
		"coordinatorTemplate: {resources: {requests: {memory: 1Gi}, limits: {memory: 2Gi}}}",
	} {
		t.Run(spec, func(t *testing.T) {
			out := dryRunApply(t, ctx, ns, spec)
			obj, err := json.Marshal(mgcObject(t, ns, "memory", spec).Object)
			if err != nil {
				t.Fatal(err)
			}
			c, err := topology.Admit(obj)
			if err != nil {
				t.Fatal(err)
			}
			twin := c.Warnings()
			if warned := strings.Contains(out, memoryPolicy); warned != (len(twin) > 0) {
				t.Fatalf("the API server warned: %v; the Go twin: %q\n%s", warned, twin, out)
			}
			for _, w := range twin {
				if !strings.Contains(out, w) {
					t.Errorf("the API server's warning differs from the Go twin's %q:\n%s", w, out)
				}
			}
		})
	}
}

//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// quickstartCommands are the shell lines of README's "Quickstart on a cluster" section, with
// backslash continuations joined.
func quickstartCommands(t *testing.T) []string {
	t.Helper()
	readme := string(readFile(t, repoPath("README.md")))
	start := strings.Index(readme, "## Quickstart on a cluster")
	if start < 0 {
		t.Fatal("README.md has no \"Quickstart on a cluster\" section")
	}
	section := readme[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var lines []string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		joined := regexp.MustCompile(`\\\n\s*`).ReplaceAllString(block[1], "")
		for _, line := range strings.Split(joined, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				lines = append(lines, line)
			}
		}
	}
	return lines
}

// notRunHere are the quickstart's commands this test does not run, each with where it is
// exercised instead; every other line runs as written.
var notRunHere = []struct{ prefix, why string }{
	{"kubectl apply -k 'https://github.com/metacontroller/", "Metacontroller: the suite runs its stand-in (e2e/metacontroller)"},
	{"make image", "docker cannot run in CI: TestDockerfileBuildsTheBinaryTheInstallRuns runs the Dockerfile's build line"},
	{"kind load docker-image", "no kind in CI"},
	{"kubectl apply -k manifests/", "the hook runs in the test process; TestApplyKustomizeManifests applies manifests/ with this kubectl, TestInstallOverlaysBuildWithKubectl builds it"},
	{"go run ./cmd/memgraph-hooks-secrets | kubectl apply -f -", "run as written by installHookSecrets (security_test.go) for the scenarios' hook"},
	{"kubectl -n memgraph-hooks rollout status deployment memgraph-hooks", "no hook Deployment runs here: the hook runs in the test process"},
	{"kubectl port-forward svc/memgraph-rw", "kwok pods serve no port: the test checks -rw's endpoints are the MAIN's pod instead"},
	{"mgconsole", "no Memgraph here: the simulator answers the hook"},
	{"go install ./cmd/kubectl-memgraph", "TestKubectlPlugin builds and runs the plugin through kubectl"},
	{"kubectl memgraph ", "TestKubectlPlugin"},
}

// TestQuickstartAsWritten runs README's quickstart commands as written — the license Secret,
// the example cluster, kubectl wait and get — in the current namespace of a kubeconfig whose
// context names a fresh namespace, as a user's would: the example names no namespace, so the
// cluster lands beside the Secret. Then the cluster is converged with every member registered,
// its budgets in place, -rw's endpoints the MAIN's pod, and resyncs change nothing.
func TestQuickstartAsWritten(t *testing.T) {
	s := startScenario(t, "quickstart")
	// A fresh namespace, as a new user has it: the quickstart creates the license Secret itself.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := testEnv.Client.CoreV1().Secrets(s.ns).Delete(ctx, licenseSecretName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, readFile(t, testEnv.Kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	shell := func(line string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+testEnv.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := shell("kubectl config set-context --current --namespace=" + s.ns); err != nil {
		t.Fatalf("kubectl config set-context: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		_, _ = shell("kubectl delete -f examples/minimal-cluster.yaml --wait=false")
	})
	ran := 0
	for _, line := range quickstartCommands(t) {
		if i := slices.IndexFunc(notRunHere, func(n struct{ prefix, why string }) bool { return strings.HasPrefix(line, n.prefix) }); i >= 0 {
			t.Logf("not run here: %s (%s)", line, notRunHere[i].why)
			continue
		}
		out, err := shell(line)
		for deadline := time.Now().Add(time.Minute); err != nil && strings.HasPrefix(line, "kubectl wait") &&
			strings.Contains(out, ".status.conditions accessor error") && time.Now().Before(deadline); {
			// kubectl wait refuses an object with no conditions yet, which the hook's first
			// status gives it; a user would run it again (env.Kubectl does the same).
			time.Sleep(200 * time.Millisecond)
			out, err = shell(line)
		}
		t.Logf("$ %s\n%s", line, indent(out, "  "))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		ran++
	}
	if ran < 4 {
		t.Fatalf("ran %d quickstart commands, want at least the Secret, apply, wait and get", ran)
	}
	name := fromYAML(t, string(readFile(t, repoPath("examples", "minimal-cluster.yaml")))).GetName()
	mgc := s.waitConverged(name, convergeTimeout)
	if st, reason, msg := conditionStatus(mgc, "Ready"); st != "True" {
		t.Errorf("Ready = %s %s: %s", st, reason, msg)
	}
	s.declaredMembers(mgc, int(v1alpha1.DefaultCoordinators), int(v1alpha1.DefaultDataInstances))
	mainPod := mainPodOf(t, name, mgc)
	s.assertBudgets(name, v1alpha1.DefaultCoordinators, mainPod)
	s.waitFor(time.Minute, func() error {
		if sel, eps := rwState(s.ns, name); sel != mainPod || !slices.Equal(eps, []string{mainPod}) {
			return fmt.Errorf("%s selects %q with ready endpoints %v, want %s alone", topology.WriteServiceName(name), sel, eps, mainPod)
		}
		return nil
	})
	s.assertNoMisuse()
	if t.Failed() {
		return
	}
	// No churn: the hook's children applied again on every resync change nothing.
	s.assertNoChurn(4)
}

//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var (
	pluginDirOnce sync.Once
	pluginDir     string
	pluginErr     error
)

// pluginOnPath builds cmd/kubectl-memgraph into a directory of its own and returns it, for PATH:
// kubectl finds the plugin there as a user's kubectl finds an installed one.
func pluginOnPath(t *testing.T) string {
	t.Helper()
	e := needEnv(t)
	pluginDirOnce.Do(func() {
		pluginDir = filepath.Join(e.Dir, "plugin-bin")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(pluginDir, "kubectl-memgraph"), "./cmd/kubectl-memgraph")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			pluginErr = fmt.Errorf("go build ./cmd/kubectl-memgraph: %w\n%s", err, out)
		}
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	return pluginDir
}

// kubectlMemgraph runs `kubectl memgraph args… -n <ns>` through the pinned kubectl's plugin
// mechanism and returns its output and error.
func (s *scenario) kubectlMemgraph(args ...string) (string, error) {
	s.t.Helper()
	dir := pluginOnPath(s.t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(testEnv.BinDir, "kubectl"), append([]string{"memgraph"}, append(args, "-n", s.ns)...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+testEnv.Kubeconfig, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	s.t.Logf("$ kubectl memgraph %s\n%s", strings.Join(args, " "), indent(string(out), "  "))
	return string(out), err
}

func (s *scenario) mustKubectlMemgraph(args ...string) string {
	s.t.Helper()
	out, err := s.kubectlMemgraph(args...)
	if err != nil {
		s.t.Fatalf("kubectl memgraph %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// TestKubectlPlugin runs every verb of `kubectl memgraph`, through kubectl's plugin mechanism,
// against a live MemgraphCluster, each with --wait, and checks what each changed: status shows
// the members and their node, switchover moves MAIN, pause and resume flip Paused, restart replaces every pod,
// hibernate and wake park and start the cluster; --dry-run and a refusal change nothing.
func TestKubectlPlugin(t *testing.T) {
	const name = "plug"
	s := startScenario(t, "plugin")
	s.create(name, "{}")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 2)
	main := s.raft().Main

	out := s.mustKubectlMemgraph("status", name)
	// Every pod runs on the one node of the control plane: the nodes section says what it takes.
	for _, want := range []string{"MAIN:      " + main, "coordinator_1", "instance_1", "Converged", "Last operations:",
		"Nodes:", "the Raft majority (3 of 3 coordinators)", "HighlyAvailable  False"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q", want)
		}
	}

	target := "instance_1"
	if main == target {
		target = "instance_0"
	}
	before, err := mgcClient(s.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out := s.mustKubectlMemgraph("switchover", name, "--to", target, "--dry-run"); !strings.Contains(out, `"preferredMain":"`+target+`"`) {
		t.Errorf("switchover --dry-run does not print the patch")
	}
	if out, err := s.kubectlMemgraph("switchover", name, "--to", "instance_7"); err == nil || !strings.Contains(out, "declared data instances") {
		t.Errorf("switchover to an undeclared instance: %v, want a refusal naming the rule", err)
	}
	after, err := mgcClient(s.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("--dry-run or a refusal changed the cluster (resourceVersion %s → %s)", before.GetResourceVersion(), after.GetResourceVersion())
	}

	out = s.mustKubectlMemgraph("switchover", name, "--to", target, "--wait", "--timeout=3m")
	if got := s.raft().Main; got != target || !strings.Contains(out, "switchover "+name+": done") {
		t.Errorf("after switchover --wait: MAIN %s, want %s", got, target)
	}

	s.mustKubectlMemgraph("pause", name, "--wait", "--timeout=1m")
	s.waitStatus(name, "Paused=True", time.Second, func(mgc *unstructured.Unstructured) error { return condIs(mgc, "Paused", "True") })
	s.mustKubectlMemgraph("resume", name, "--wait", "--timeout=1m")
	s.waitStatus(name, "Paused=False", time.Second, func(mgc *unstructured.Unstructured) error { return condIs(mgc, "Paused", "False") })

	pods := s.podUIDs(name)
	s.mustKubectlMemgraph("restart", name, "--wait", "--timeout=5m")
	for pod, uid := range s.podUIDs(name) {
		if pods[pod] == uid {
			t.Errorf("pod %s was not restarted", pod)
		}
	}
	s.waitConverged(name, convergeTimeout)

	s.mustKubectlMemgraph("hibernate", name, "--wait", "--timeout=5m")
	if n := len(s.podUIDs(name)); n != 0 {
		t.Errorf("%d pods after hibernate --wait, want none", n)
	}
	s.mustKubectlMemgraph("wake", name, "--wait", "--timeout=5m")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 2)
	s.assertNoMisuse()
}

// condIs is nil when mgc's condition typ has status want.
func condIs(mgc *unstructured.Unstructured, typ, want string) error {
	conds, _, _ := unstructured.NestedSlice(mgc.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			if m["status"] == want {
				return nil
			}
			return fmt.Errorf("%s=%v, want %s", typ, m["status"], want)
		}
	}
	return fmt.Errorf("no %s condition", typ)
}

package env

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Kubectl runs the pinned kubectl against the environment and returns its combined output.
//
// `kubectl wait` refuses at once to wait on an object whose status has no conditions yet
// (".status.conditions accessor error: <nil> is of the type <nil>"), which a freshly created
// object — a CRD before the API server marks it, a MemgraphCluster before the hook's first
// status — may not have; a wait so refused is asked again until ctx ends.
func (e *Env) Kubectl(ctx context.Context, args ...string) (string, error) {
	for {
		out, err := e.KubectlStdin(ctx, nil, args...)
		if err == nil || len(args) == 0 || args[0] != "wait" || !strings.Contains(out, ".status.conditions accessor error") {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// KubectlStdin is Kubectl with data on stdin (for `apply -f -`).
func (e *Env) KubectlStdin(ctx context.Context, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, e.binary("kubectl"), append([]string{"--kubeconfig=" + e.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.Kubeconfig)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// Binaries locates the control-plane binaries: $E2E_BIN when set, else the cache that
// e2e/tools/build.sh fills (building on first use, which takes minutes). repoRoot is the
// module root. The returned stage directory holds kwok's Stage YAMLs.
func Binaries(ctx context.Context, repoRoot string, logf func(string, ...any)) (binDir, stageDir string, err error) {
	if dir := os.Getenv("E2E_BIN"); dir != "" {
		return dir, filepath.Join(filepath.Dir(dir), "kwok-stage"), checkBinaries(dir)
	}
	script := filepath.Join(repoRoot, "e2e", "tools", "build.sh")
	cmd := exec.CommandContext(ctx, "bash", script)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = logWriter{logf}
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("%s: %w", script, err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	binDir = lines[len(lines)-1]
	return binDir, filepath.Join(filepath.Dir(binDir), "kwok-stage"), checkBinaries(binDir)
}

// Built reports whether the cache already holds every binary (so Binaries will be quick).
func Built(repoRoot string) bool {
	if dir := os.Getenv("E2E_BIN"); dir != "" {
		return checkBinaries(dir) == nil
	}
	out, err := exec.Command("bash", filepath.Join(repoRoot, "e2e", "tools", "build.sh"), "--print-bin-dir").Output()
	if err != nil {
		return false
	}
	_, storeErr := ObjectStoreBinary(repoRoot)
	return checkBinaries(strings.TrimSpace(string(out))) == nil && storeErr == nil
}

// ObjectStoreBinary is versitygw's path: in $E2E_BIN when set, else in the cache that
// e2e/tools/build.sh fills (Binaries builds it with the control plane).
func ObjectStoreBinary(repoRoot string) (string, error) {
	if dir := os.Getenv("E2E_BIN"); dir != "" {
		return filepath.Join(dir, "versitygw"), nil
	}
	out, err := exec.Command("bash", filepath.Join(repoRoot, "e2e", "tools", "build.sh"), "--print-versitygw-bin-dir").Output()
	if err != nil {
		return "", err
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "versitygw")
	if info, err := os.Stat(path); err != nil || info.Mode()&0o111 == 0 {
		return "", fmt.Errorf("missing object store binary %s", path)
	}
	return path, nil
}

var requiredBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"}

func checkBinaries(dir string) error {
	for _, b := range requiredBinaries {
		if info, err := os.Stat(filepath.Join(dir, b)); err != nil || info.Mode()&0o111 == 0 {
			return fmt.Errorf("missing control-plane binary %s in %s", b, dir)
		}
	}
	return nil
}

type logWriter struct{ logf func(string, ...any) }

func (w logWriter) Write(p []byte) (int, error) {
	if w.logf != nil {
		for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
			w.logf("%s", line)
		}
	}
	return len(p), nil
}

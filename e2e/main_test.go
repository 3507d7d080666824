//go:build e2e

// Package e2e_test runs the suite against a real kube-apiserver, etcd, kube-controller-manager,
// kube-scheduler and kwok started on 127.0.0.1 by TestMain (see e2e/README.md):
//
//	go test -tags e2e -timeout 60m ./e2e/...
package e2e_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/e2e/env"
)

var (
	testEnv    *env.Env
	skipReason string
	repoRoot   string
)

// coldBuildBudget is how long the first build of the control plane may take on 2 cores with
// an empty Go build cache (measured ~15 minutes, plus module downloads on a fresh machine).
const coldBuildBudget = 40 * time.Minute

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
}

func run(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		logf("%v", err)
		return 1
	}
	repoRoot = filepath.Dir(wd)
	if !env.Built(repoRoot) {
		if t := flag.Lookup("test.timeout"); t != nil {
			if d, ok := t.Value.(flag.Getter).Get().(time.Duration); ok && d > 0 && d < coldBuildBudget {
				skipReason = fmt.Sprintf("the control plane is not built yet and -timeout %s is too short for the first build "+
					"(15-30 min on 2 cores): run e2e/tools/build.sh once, or pass -timeout 60m", d)
				return m.Run()
			}
		}
		logf("building the control plane (first run on this machine: ~15 minutes) ...")
	}
	ctx := context.Background()
	started := time.Now()
	binDir, stageDir, err := env.Binaries(ctx, repoRoot, logf)
	if err != nil {
		skipReason = "control-plane binaries cannot be built: " + err.Error()
		return m.Run()
	}
	logf("binaries in %s (%s)", binDir, time.Since(started).Round(time.Second))
	storeBin, err := env.ObjectStoreBinary(repoRoot)
	if err != nil {
		logf("object store: %v (the backup tests will fail)", err)
	}
	testEnv, err = env.Start(ctx, env.Options{BinDir: binDir, StageDir: stageDir, ObjectStoreBinary: storeBin, Logf: logf})
	if err != nil {
		logf("start control plane: %v", err)
		return 1
	}
	code := m.Run()
	testEnv.Stop()
	if code == 0 && os.Getenv("E2E_KEEP") == "" {
		_ = testEnv.Cleanup()
	} else {
		logf("control-plane logs and kubeconfig kept in %s", testEnv.Dir)
	}
	return code
}

// needEnv skips the test when the control plane could not be started.
func needEnv(t *testing.T) *env.Env {
	t.Helper()
	if testEnv == nil {
		t.Skip("e2e: " + skipReason)
	}
	if err := testEnv.CheckAlive(); err != nil {
		t.Fatalf("control plane is down: %v", err)
	}
	return testEnv
}

func repoPath(parts ...string) string {
	return filepath.Join(append([]string{repoRoot}, parts...)...)
}

package env

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeControllers is an Env whose BinDir holds shell scripts named after the controllers.
func fakeControllers(t *testing.T, scripts map[string]string) (*Env, func() string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var lines []string
	e := &Env{BinDir: dir, LogDir: filepath.Join(dir, "logs"), logf: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}}
	if err := os.MkdirAll(e.LogDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return e, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(lines, "\n")
	}
}

func restartLogs(t *testing.T, e *Env, name string) int {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(e.LogDir, name+"-restart-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return len(logs)
}

// With CHAOS_SEED=17, kube-scheduler exited of itself mid-soak (its cache contradicted by a pod
// update after API server restarts) and, unsupervised, left every later pod Pending: the cluster
// could not converge. A controller that exits of itself starts again, as the kubelet restarts a
// static pod; one the environment stops stays stopped.
func TestChaosSeed17AControllerThatExitsOfItselfStartsAgain(t *testing.T) {
	e, logged := fakeControllers(t, map[string]string{
		"kube-scheduler": "echo 'scheduler cache is corrupted'; exit 1",
		"kwok":           "exec sleep 60",
	})
	if err := e.startController("kube-scheduler", "", nil, restartHooks{}); err != nil {
		t.Fatal(err)
	}
	if err := e.startController("kwok", "", nil, restartHooks{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * crashRestartDelay)
	for restartLogs(t, e, "kube-scheduler") < 2 {
		if time.Now().After(deadline) {
			e.Stop()
			t.Fatalf("kube-scheduler exited and was started again %d times in %s, want 2; log:\n%s",
				restartLogs(t, e, "kube-scheduler"), 20*crashRestartDelay, logged())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logged(), "kube-scheduler exited of itself (exit status 1); started again") {
		t.Errorf("the restart is not logged:\n%s", logged())
	}
	e.Stop()
	stopped := restartLogs(t, e, "kube-scheduler")
	time.Sleep(3 * crashRestartDelay)
	if n := restartLogs(t, e, "kube-scheduler"); n != stopped {
		t.Errorf("kube-scheduler started %d more times after Stop", n-stopped)
	}
	if n := restartLogs(t, e, "kwok"); n != 0 {
		t.Errorf("kwok, which Stop ended, started again %d times", n)
	}
	if err := e.CheckAlive(); err != nil {
		t.Errorf("CheckAlive after Stop: %v", err)
	}
}

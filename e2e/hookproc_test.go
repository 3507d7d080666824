//go:build e2e

package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	hookBinOnce sync.Once
	hookBin     string
	hookBinErr  error
)

// hookBinary builds cmd/memgraph-hooks once per run, into the environment's working directory,
// as the Dockerfile does.
func hookBinary(t *testing.T) string {
	t.Helper()
	e := needEnv(t)
	hookBinOnce.Do(func() {
		hookBin = filepath.Join(e.Dir, "bin", "memgraph-hooks")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		// The Dockerfile's build line, so that the binary is the image's and the build shares
		// its compiled packages with TestDockerfileBuildsTheBinaryTheInstallRuns.
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", hookBin, "./cmd/memgraph-hooks")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			hookBinErr = fmt.Errorf("go build ./cmd/memgraph-hooks: %w\n%s", err, out)
		}
	})
	if hookBinErr != nil {
		t.Fatal(hookBinErr)
	}
	return hookBin
}

// hookProcess is the hook binary run as a child process with the Deployment's arguments
// (deployedArgs), on a fixed loopback address so that a restarted process takes over from a
// killed one as a restarted pod behind its Service would.
type hookProcess struct {
	t           *testing.T
	bin         string
	args        []string
	addr        string // the hooks' listener
	metricsAddr string
	logDir      string
	incarnation int

	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// startHookProcess runs the hook binary with the Deployment's arguments, listening on loopback,
// plus extra (e.g. --resolve flags).
func startHookProcess(t *testing.T, extra ...string) *hookProcess {
	t.Helper()
	ports := freeLoopbackPorts(t, 2)
	p := &hookProcess{t: t, bin: hookBinary(t), logDir: t.TempDir(),
		addr: ports[0], metricsAddr: ports[1]}
	for _, a := range deployedArgs(t) {
		if !strings.HasPrefix(a, "--listen=") && !strings.HasPrefix(a, "--metrics-listen=") {
			p.args = append(p.args, a)
		}
	}
	p.args = append(p.args, "--listen="+p.addr, "--metrics-listen="+p.metricsAddr)
	p.args = append(p.args, extra...)
	p.start()
	t.Cleanup(p.kill)
	return p
}

// start runs a new incarnation and waits until it logs "serving hooks".
func (p *hookProcess) start() {
	p.t.Helper()
	p.incarnation++
	p.log = filepath.Join(p.logDir, fmt.Sprintf("hook-%d.log", p.incarnation))
	logFile, err := os.Create(p.log)
	if err != nil {
		p.t.Fatal(err)
	}
	p.cmd = exec.Command(p.bin, p.args...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		p.t.Fatal(err)
	}
	done := make(chan struct{})
	p.done = done
	go func(cmd *exec.Cmd) {
		_ = cmd.Wait()
		logFile.Close()
		close(done)
	}(p.cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = eventually(ctx, 20*time.Millisecond, func() error {
		select {
		case <-done:
			return fmt.Errorf("the hook exited: %s", p.logs())
		default:
		}
		if !strings.Contains(p.logs(), `"msg":"serving hooks"`) {
			return fmt.Errorf("not serving yet")
		}
		return nil
	})
	if err != nil {
		p.t.Fatal(err)
	}
}

// kill sends SIGKILL and waits for the process to be gone: no deferred cleanup, no drain, its
// connections closed by the kernel.
func (p *hookProcess) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// running reports whether the current incarnation is alive.
func (p *hookProcess) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// logs returns every incarnation's log, oldest first.
func (p *hookProcess) logs() string {
	var b strings.Builder
	for i := 1; i <= p.incarnation; i++ {
		data, _ := os.ReadFile(filepath.Join(p.logDir, fmt.Sprintf("hook-%d.log", i)))
		fmt.Fprintf(&b, "--- incarnation %d\n%s", i, data)
	}
	return b.String()
}

// usage reads the running process's peak resident set (VmHWM) and CPU time (user + system)
// from /proc.
func (p *hookProcess) usage() (peakRSS int64, cpu time.Duration) {
	p.t.Helper()
	pid := p.cmd.Process.Pid
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		p.t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			peakRSS = kb << 10
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		p.t.Fatal(err)
	}
	// Fields after the parenthesised command: state is field 3, utime 14, stime 15 (clock ticks
	// of 1/100 s, USER_HZ on Linux).
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return peakRSS, time.Duration(utime+stime) * 10 * time.Millisecond
}

func freeLoopbackPorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

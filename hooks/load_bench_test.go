package hooks_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// BenchmarkHTTPLoad is a bounded loopback load test. The hook is the shipped binary,
// built here and started with --simulate and the Go settings (GOMEMLIMIT, GOGC) of the shipped
// Deployment; the yardstick is a bare net/http server that decodes each request into a map and
// encodes the same response, a process of its own with the same settings. Keep-alive clients
// post examples/hook-requests/sync-pods-ready.json with the PodDisruptionBudgets the hook's first
// answer returned — the hook's converged sync once that sync has registered the simulated
// cluster — to each in alternating phases, and each figure is
// requests per CPU-second of that server process alone (Linux: /proc). Then 100 syncs are
// posted at once and the hook process's peak RSS is reported.
func BenchmarkHTTPLoad(b *testing.B) {
	if b.N > 1 {
		b.Skip("a fixed-duration load test: run with -benchtime 1x")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("reads each server's CPU time and peak RSS from /proc")
	}
	dir := b.TempDir()
	env := deploymentGoEnv(b)
	req, err := os.ReadFile(filepath.Join(requestsDir, "sync-pods-ready.json"))
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	hook := startHook(b, dir, env)
	req, response := hook.converge(b, client, req)
	writeLoadFile(b, dir, "response.json", response)
	bare := startBareServer(b, dir, env)

	const workers, phase, phases = 4, 500 * time.Millisecond, 8
	var hookLoad, bareLoad serverLoad
	for i := 0; i < phases; i++ {
		hookLoad.add(hook.load(b, client, req, workers, phase))
		bareLoad.add(bare.load(b, client, req, workers, phase))
	}
	hook.load(b, client, req, 100, 0) // 100 at once
	hookRate, bareRate := hookLoad.perCPUSecond(), bareLoad.perCPUSecond()
	b.ReportMetric(hookRate, "hook-syncs/cpu-s")
	b.ReportMetric(bareRate, "bare-syncs/cpu-s")
	b.ReportMetric(hookRate/bareRate, "hook/bare-rate")
	b.ReportMetric(float64(hook.peakRSS(b))/(1<<20), "hook-peak-RSS-MiB")
}

// deploymentGoEnv is the Go runtime settings (GOMEMLIMIT, GOGC) of the shipped Deployment.
func deploymentGoEnv(b *testing.B) []string {
	raw, err := os.ReadFile("../manifests/deployment.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var dep appsv1.Deployment
	if err := yaml.Unmarshal(raw, &dep); err != nil {
		b.Fatal(err)
	}
	var env []string
	for _, c := range dep.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, "GO") {
				env = append(env, e.Name+"="+e.Value)
			}
		}
	}
	return env
}

// serverLoad is what one server did in some phases.
type serverLoad struct {
	requests int64
	cpu      time.Duration
}

func (l *serverLoad) add(o serverLoad) { l.requests, l.cpu = l.requests+o.requests, l.cpu+o.cpu }

func (l serverLoad) perCPUSecond() float64 { return float64(l.requests) / l.cpu.Seconds() }

type loadServer struct {
	base string
	cmd  *exec.Cmd
}

// startHook builds the hook and starts it with --simulate on a free loopback port.
func startHook(b *testing.B, dir string, env []string) *loadServer {
	bin := filepath.Join(dir, "memgraph-hooks")
	build := exec.Command("go", "build", "-o", bin, "../cmd/memgraph-hooks")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the hook: %v\n%s", err, out)
	}
	addr := freeLoopbackAddr(b)
	cmd := exec.Command(bin, "--simulate", "--listen="+addr, "--metrics-listen=", "--log-level=info")
	cmd.Env = append(os.Environ(), env...)
	s := &loadServer{base: "http://" + addr, cmd: cmd}
	s.start(b)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			_ = resp.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			b.Fatal("the hook did not come up")
		}
	}
}

func freeLoopbackAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func (s *loadServer) start(b *testing.B) {
	if err := s.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() })
}

// converge posts the request three times — the first sync registers the simulated cluster and
// returns the MAIN's PodDisruptionBudget, which the later requests observe, as Metacontroller's
// would — and returns the converged request and the last answer, which must be the converged one.
func (s *loadServer) converge(b *testing.B, client *http.Client, req []byte) (converged, answer []byte) {
	var body []byte
	for i := range 3 {
		if i > 0 {
			req = observingBudgets(b, req, decodeSync(b, body))
		}
		resp, err := client.Post(s.base+"/sync", "application/json", bytes.NewReader(req))
		if err != nil {
			b.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %s", resp.Status, body)
		}
	}
	if !bytes.Contains(body, []byte(`"AllInstancesRegistered"`)) {
		b.Fatalf("the simulated cluster did not converge: %s", body)
	}
	return req, body
}

func decodeSync(t testing.TB, body []byte) syncResponse {
	t.Helper()
	var resp syncResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return resp
}

// observingBudgets is req with the PodDisruptionBudgets resp returned among its children, as
// Metacontroller observes them once it has applied resp.
func observingBudgets(t testing.TB, req []byte, resp syncResponse) []byte {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(req, &r); err != nil {
		t.Fatal(err)
	}
	budgets := map[string]any{}
	for _, c := range resp.Children {
		if c["kind"] == "PodDisruptionBudget" {
			meta := c["metadata"].(map[string]any)
			budgets[fmt.Sprint(meta["namespace"], "/", meta["name"])] = c
		}
	}
	r["children"].(map[string]any)["PodDisruptionBudget.policy/v1"] = budgets
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// startBareServer re-executes the test binary as the bare server (TestLoadServer).
func startBareServer(b *testing.B, dir string, env []string) *loadServer {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestLoadServer$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), env...), loadDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	s := &loadServer{cmd: cmd}
	s.start(b)
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		if addr, ok := strings.CutPrefix(scanner.Text(), "LISTENING "); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			s.base = "http://" + addr
			return s
		}
	}
	b.Fatal("the bare server exited before listening")
	return nil
}

// load posts req from workers keep-alive clients for d (or once each when d is 0) and returns
// the requests answered 200 and the server's CPU time meanwhile.
func (s *loadServer) load(b *testing.B, client *http.Client, req []byte, workers int, d time.Duration) serverLoad {
	before := s.cpu(b)
	var served atomic.Int64
	var failed atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := true; first || time.Now().Before(deadline); first = false {
				resp, err := client.Post(s.base+"/sync", "application/json", bytes.NewReader(req))
				if err != nil {
					failed.Store(err.Error())
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Store(resp.Status)
					return
				}
				served.Add(1)
			}
		}()
	}
	wg.Wait()
	if msg := failed.Load(); msg != nil {
		b.Fatalf("load on %s: %v", s.base, msg)
	}
	return serverLoad{requests: served.Load(), cpu: s.cpu(b) - before}
}

// clockTicks is Linux's USER_HZ, the unit of /proc/<pid>/stat's CPU times.
const clockTicks = 100

// cpu is the server process's user and system CPU time so far.
func (s *loadServer) cpu(b *testing.B) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name (which may hold spaces) start at the state, field 3;
	// utime and stime are fields 14 and 15.
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("reading %s: %v %v", raw, err1, err2)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// peakRSS is the server process's peak resident set size (VmHWM) in bytes.
func (s *loadServer) peakRSS(b *testing.B) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kib << 10
		}
	}
	b.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

const loadDirEnv = "MEMGRAPH_HOOKS_LOAD_DIR"

// TestLoadServer is BenchmarkHTTPLoad's bare server; it does nothing unless started by it. It
// decodes each request into a map and encodes the hook's converged response, until killed.
func TestLoadServer(t *testing.T) {
	dir := os.Getenv(loadDirEnv)
	if dir == "" {
		t.Skip("the bare server process of BenchmarkHTTPLoad")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "response.json"))
	if err != nil {
		t.Fatal(err)
	}
	var response map[string]any
	if err := json.Unmarshal(raw, &response); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(response)
	})}
	fmt.Println("LISTENING", l.Addr())
	_ = srv.Serve(l)
}

func writeLoadFile(b *testing.B, dir, name string, data []byte) {
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		b.Fatal(err)
	}
}

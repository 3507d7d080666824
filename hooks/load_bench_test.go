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
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// BenchmarkHTTPLoad is a bounded loopback load test (issue 15): keep-alive clients post the
// converged 3/2 sync to the hook, and the same bytes to a bare net/http server that decodes them
// into a map and encodes the same response, in alternating phases. Each server is a process of
// its own (this test binary, re-executed) running with the shipped Deployment's GOMEMLIMIT and
// GOGC, and reports the CPU time it used, so each figure is requests per CPU-second of that
// server alone. Then 100 syncs are posted at once and the hook process's peak RSS is reported.
func BenchmarkHTTPLoad(b *testing.B) {
	if b.N > 1 {
		b.Skip("a fixed-duration load test: run with -benchtime 1x")
	}
	dir := b.TempDir()
	env := deploymentGoEnv(b)
	hook := startLoadServer(b, "hook", dir, env)
	bare := startLoadServer(b, "bare", dir, env)
	req, err := os.ReadFile(filepath.Join(dir, "request.json"))
	if err != nil {
		b.Fatal(err)
	}
	const workers, phase, phases = 4, 500 * time.Millisecond, 8
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
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
	b.ReportMetric(float64(hook.usage(b, client).PeakRSS)/(1<<20), "hook-peak-RSS-MiB")
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

// startLoadServer re-executes the test binary as a load server of kind ("hook" or "bare"); the
// hook server writes the request and response the bare server replays into dir.
func startLoadServer(b *testing.B, kind, dir string, env []string) *loadServer {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestLoadServer$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), env...), loadServerEnv+"="+kind, loadDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		if addr, ok := strings.CutPrefix(scanner.Text(), "LISTENING "); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return &loadServer{base: "http://" + addr, cmd: cmd}
		}
	}
	b.Fatalf("%s load server exited before listening", kind)
	return nil
}

// load posts req from workers keep-alive clients for d (or once each when d is 0) and returns
// the requests answered 200 and the server's CPU time meanwhile.
func (s *loadServer) load(b *testing.B, client *http.Client, req []byte, workers int, d time.Duration) serverLoad {
	before := s.usage(b, client).CPU
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
	return serverLoad{requests: served.Load(), cpu: s.usage(b, client).CPU - before}
}

// serverUsage is what a load server reports about itself.
type serverUsage struct {
	CPU     time.Duration `json:"cpu"`
	PeakRSS int64         `json:"peakRSS"`
}

func (s *loadServer) usage(b *testing.B, client *http.Client) serverUsage {
	resp, err := client.Get(s.base + usagePath)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var u serverUsage
	if err := json.NewDecoder(resp.Body).Decode(&u); err != nil {
		b.Fatal(err)
	}
	return u
}

const (
	loadServerEnv = "MEMGRAPH_HOOKS_LOAD_SERVER"
	loadDirEnv    = "MEMGRAPH_HOOKS_LOAD_DIR"
	usagePath     = "/debug/usage"
)

// TestLoadServer is BenchmarkHTTPLoad's server process; it does nothing unless started by it.
// It serves until its stdin closes.
func TestLoadServer(t *testing.T) {
	kind := os.Getenv(loadServerEnv)
	if kind == "" {
		t.Skip("the server process of BenchmarkHTTPLoad")
	}
	dir := os.Getenv(loadDirEnv)
	var sync http.Handler
	switch kind {
	case "hook":
		cb := newConvergedBench(t, 3, 2)
		writeLoadFile(t, dir, "request.json", cb.request)
		response, err := json.Marshal(cb.response)
		if err != nil {
			t.Fatal(err)
		}
		writeLoadFile(t, dir, "response.json", response)
		sync = cb.h.handler
	case "bare":
		sync = bareServer(t, dir)
	default:
		t.Fatalf("unknown load server %q", kind)
	}
	mux := http.NewServeMux()
	mux.Handle("/", sync)
	mux.HandleFunc(usagePath, func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(serverUsage{CPU: processCPU(), PeakRSS: peakRSS()})
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	fmt.Println("LISTENING", l.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = srv.Close()
}

// bareServer decodes each request into a map and encodes the hook's converged response.
func bareServer(t *testing.T, dir string) http.Handler {
	raw, err := os.ReadFile(filepath.Join(dir, "response.json"))
	if err != nil {
		t.Fatal(err)
	}
	var response map[string]any
	if err := json.Unmarshal(raw, &response); err != nil {
		t.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(response)
	})
}

func writeLoadFile(t *testing.T, dir, name string, data []byte) {
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

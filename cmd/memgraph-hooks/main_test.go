package main

import (
	"bytes"
	stdcmp "cmp"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
)

// The debugging walk-through of docs/operations.md: --simulate serves the example cluster, and the example
// request with every pod Ready registers it in one sync.
func TestSimulateServesTheExampleCluster(t *testing.T) {
	world, err := startSimulation(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer world.Close()
	pool := bolt.NewPool(bolt.PoolOptions{Resolver: chainResolver{memgraph.StaticResolver{}, world}})
	defer pool.Close()
	handler := hooks.NewHandler(hooks.Config{Connector: pool})

	body, err := os.ReadFile("../../examples/hook-requests/sync-pods-ready.json")
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)))
	var resp struct {
		Status struct {
			Main, Leader string
			Conditions   []struct{ Type, Status, Reason string }
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if resp.Status.Main != "instance_0" || resp.Status.Leader != "coordinator_1" {
		t.Errorf("main %q leader %q, want instance_0 and coordinator_1", resp.Status.Main, resp.Status.Leader)
	}
	// Paused, Hibernated and Degraded are False on a running, healthy cluster; so is Converged,
	// for the request carries no MAIN's PodDisruptionBudget yet (DisruptionBudgetMoving); every
	// other condition is True.
	want := map[string]string{"Paused": "False", "Hibernated": "False", "Degraded": "False", "Converged": "False"}
	for _, c := range resp.Status.Conditions {
		if w := stdcmp.Or(want[c.Type], "True"); c.Status != w {
			t.Errorf("%s = %s (%s), want %s", c.Type, c.Status, c.Reason, w)
		}
		if c.Type == "Converged" && c.Reason != string(v1alpha1.ReasonDisruptionBudgetMoving) {
			t.Errorf("Converged reason %s, want %s", c.Reason, v1alpha1.ReasonDisruptionBudgetMoving)
		}
	}
	if m := world.Misuses(); len(m) > 0 {
		t.Errorf("misuses: %+v", m)
	}
}

// Each flag that tunes the hook reaches the handler's configuration with the value given, and
// the handler runs with the defaults docs/operations.md states when none is given.
func TestFlags(t *testing.T) {
	o, err := parseFlags([]string{"--resolve", "a.svc:7687=127.0.0.1:17687", "--sync-budget", "3s", "--max-body-bytes", "4096",
		"--certificate-projection-grace", "5m", "--agent-image", "registry.example/hooks:v9"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.hookConfig(nil, nil, nil)
	if got := cfg.AgentResolver.Resolve("a.svc:7687"); got != "127.0.0.1:17687" {
		t.Errorf("--resolve mapped a.svc:7687 to %q", got)
	}
	type tuned struct {
		SyncBudget, ProjectionGrace time.Duration
		MaxBodyBytes                int64
		AgentImage                  string
	}
	of := func(c hooks.Config) tuned {
		return tuned{c.SyncBudget, c.ProjectionGrace, c.MaxBodyBytes, c.AgentImage}
	}
	if diff := cmp.Diff(tuned{3 * time.Second, 5 * time.Minute, 4096, "registry.example/hooks:v9"}, of(cfg)); diff != "" {
		t.Errorf("the flags in the handler's configuration (-want +got):\n%s", diff)
	}
	defaults, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := tuned{6 * time.Second, 2 * time.Minute, 8 << 20, "memgraph-hooks:dev"}
	if diff := cmp.Diff(want, of(defaults.hookConfig(nil, nil, nil))); diff != "" {
		t.Errorf("the defaults in the handler's configuration (-want +got):\n%s", diff)
	}
	for _, bad := range [][]string{{"--sync-budget", "0s"}, {"--resolve", "no-equals"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
	if _, err := newLogger("loud"); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Errorf("newLogger(loud) = %v, want an error naming the flag", err)
	}
}

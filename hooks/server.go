// Package hooks is the HTTP shell around the pure core: it decodes Metacontroller's requests,
// observes the cluster over Bolt, plans, executes within a time budget and encodes the answer.
//
// Contract with Metacontroller: a well-formed request always gets a 200 with the desired
// children (a failed Bolt step becomes a status condition carrying Memgraph's message); a
// malformed one gets a 400 naming the problem, and one without the configured credentials a 401
// (auth.go), both of which make Metacontroller change nothing.
package hooks

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// Defaults for Config's zero values.
const (
	// DefaultSyncBudget keeps a sync well inside Metacontroller's default 10 s webhook timeout
	// (manifests/compositecontroller.yaml), leaving room for rendering and the network.
	DefaultSyncBudget   = 6 * time.Second
	DefaultMaxBodyBytes = 8 << 20
)

// Config wires the handler.
type Config struct {
	Connector    memgraph.Connector // how coordinators are reached
	SyncBudget   time.Duration      // shared deadline of every dial and query of one sync
	MaxBodyBytes int64
	Logger       *slog.Logger
	// Registerer receives the hook's metrics; nil means a private registry. /metrics serves
	// Gatherer (the private registry when nil).
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	Now        func() time.Time

	// Token, when set, is the bearer token every request must carry, except GET /healthz and
	// GET /readyz (and GET /metrics unless ProtectMetrics).
	Token TokenSource
	// ClientCertRequired demands a TLS client certificate on the same requests; the server's TLS
	// configuration (Credentials.TLSConfig) verifies it against the client CA.
	ClientCertRequired bool
	// ProtectMetrics puts /metrics behind the same credentials.
	ProtectMetrics bool
}

type handler struct {
	cfg     Config
	log     *slog.Logger
	locks   *clusterLocks
	metrics *metrics
}

// NewHandler returns the hook's HTTP API: POST /sync, POST /customize, GET /healthz,
// GET /readyz and GET /metrics.
func NewHandler(cfg Config) http.Handler {
	if cfg.SyncBudget <= 0 {
		cfg.SyncBudget = DefaultSyncBudget
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Registerer == nil {
		reg := prometheus.NewRegistry()
		cfg.Registerer, cfg.Gatherer = reg, reg
	}
	if cfg.Gatherer == nil {
		cfg.Gatherer = prometheus.DefaultGatherer
	}
	h := &handler{cfg: cfg, log: cfg.Logger, locks: newClusterLocks(), metrics: newMetrics(cfg.Registerer)}

	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Use(h.authenticate)
	r.Use(h.limitBody)
	r.Post("/sync", h.handleSync)
	r.Post("/customize", h.handleCustomize)
	r.Get("/healthz", ok)
	r.Get("/readyz", ok)
	r.Handle("/metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{}))
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		h.writeJSON(w, "other", http.StatusMethodNotAllowed, errorBody{Error: r.Method + " is not allowed on " + r.URL.Path})
	})
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		h.writeJSON(w, "other", http.StatusNotFound, errorBody{Error: "no such endpoint: " + r.URL.Path + " (use POST /sync or POST /customize)"})
	})
	return r
}

func ok(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

func (h *handler) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

type errorBody struct {
	Error string `json:"error"`
}

// fail answers a request that could not be served: 400 for a bad request, 500 otherwise
// (which a well-formed request never reaches).
func (h *handler) fail(w http.ResponseWriter, hook string, err error) {
	var bad *badRequest
	if errors.As(err, &bad) {
		h.log.Warn("rejected hook request", "hook", hook, "error", err.Error())
		h.writeJSON(w, hook, http.StatusBadRequest, errorBody{Error: err.Error()})
		return
	}
	h.log.Error("hook failed", "hook", hook, "error", err.Error())
	h.writeJSON(w, hook, http.StatusInternalServerError, errorBody{Error: err.Error()})
}

func (h *handler) writeJSON(w http.ResponseWriter, hook string, code int, body any) {
	raw, err := json.Marshal(body)
	if err != nil {
		code, raw = http.StatusInternalServerError, []byte(`{"error":"encoding response"}`)
	}
	h.metrics.requests.WithLabelValues(hook, http.StatusText(code)).Inc()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(raw, '\n'))
}

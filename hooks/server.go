// Package hooks is the HTTP shell around the pure core: it decodes Metacontroller's requests,
// reads the cluster over Bolt, asks the planner what each read means and what to do, runs the
// commands within a time budget and encodes the answer. It decides nothing itself: every choice
// of a pass (the view, the plan, the checks before a step, the meaning of an error, the status)
// is a pure function of package planner or topology (README.md, "Architecture").
//
// Contract with Metacontroller: a well-formed request always gets a 200 with the desired
// children (a failed Bolt step becomes a status condition carrying Memgraph's message); a
// malformed one gets a 400 naming the problem, and one without the configured credentials a 401
// (auth.go), both of which make Metacontroller change nothing.
package hooks

import (
	"cmp"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/hookmetrics"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/users"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Defaults for Config's zero values.
const (
	// DefaultSyncBudget keeps a sync well inside Metacontroller's default 10 s webhook timeout
	// (manifests/compositecontroller.yaml), leaving room for rendering and the network.
	DefaultSyncBudget   = 6 * time.Second
	DefaultMaxBodyBytes = 8 << 20
	// DefaultMainlessSettle is far longer than the DEMOTE-to-SET gap of a handover (two Raft
	// writes back to back) and far shorter than the sync budget.
	DefaultMainlessSettle = time.Second
)

// Config wires the handler.
type Config struct {
	Connector    memgraph.Connector // how coordinators are reached
	SyncBudget   time.Duration      // shared deadline of every dial and query of one sync
	MaxBodyBytes int64
	Logger       *slog.Logger
	// Registerer receives the hook's metrics; nil means a private registry. MetricsHandler
	// serves them on a listener of their own.
	Registerer prometheus.Registerer
	Now        func() time.Time

	// Token, when set, is the bearer token every request must carry, except GET /healthz and
	// GET /readyz (and GET /metrics on MetricsHandler unless ProtectMetrics).
	Token serving.TokenSource
	// ClientCertRequired demands a TLS client certificate on the same requests; the server's TLS
	// configuration (Credentials.TLSConfig) verifies it against the client CA.
	ClientCertRequired bool
	// ProtectMetrics puts MetricsHandler's /metrics behind the same credentials.
	ProtectMetrics bool

	// AgentResolver maps a backup agent's advertised host:port (its data pod's FQDN and the
	// backup-agent port) to the one to dial; nil dials it as advertised. TLS still verifies the
	// advertised name.
	AgentResolver memgraph.Resolver
	// AgentImage is the image of the backup-agent sidecar of a new cluster's data pods ("" is
	// topology.DefaultAgentImage): the hook's own. A cluster keeps the image it was first given
	// as long as the hook speaks its agent's API (planner.NextAgentPin).
	AgentImage string
	// AgentSecretData generates a cluster's backup-agent Secret data (base64 values, every key
	// of topology.BackupAgentSecretKeys) when none is observed; nil generates a random token and
	// key pair (backupcontroller.NewAgentSecretData). Tests fix it to make responses reproducible.
	AgentSecretData func(c *topology.Cluster) (map[string]string, error)
	// UserPassword generates the password of a MemgraphUser's generated Secret; nil draws 32
	// random letters and digits (users.NewPassword). PasswordHashCost is the bcrypt cost of the
	// password hashes sent to Memgraph (0: bcrypt's default, 10). Tests fix both.
	UserPassword     func() (string, error)
	PasswordHashCost int
	// MainlessSettle is how long a pass waits, when the leader shows no MAIN right before SET
	// INSTANCE … TO MAIN or FORCE RESET CLUSTER STATE, before it reads again and runs the step
	// only if there is still none (planner.Input.MainlessSettle): another hook replica may be
	// between the DEMOTE and the SET of a handover. Zero means DefaultMainlessSettle, a negative
	// value no pause.
	MainlessSettle time.Duration
	// ProjectionGrace is how long after a TLS Secret's content is first seen the kubelet is
	// counted on to have projected it into every pod (planner.RotationInput.Grace); zero means
	// planner.ProjectionGrace.
	ProjectionGrace time.Duration
}

type handler struct {
	cfg     Config
	log     *slog.Logger
	locks   *clusterLocks
	metrics *hookmetrics.Metrics
	parents *parentCache // admitted parents and their rendered children (rendercache.go)
	// operations keeps status.lastOperation from going backwards (operationLog).
	operations *operationLog
	backups    *backupcontroller.Controller // the MemgraphBackup and MemgraphScheduledBackup hooks
	users      *users.Controller            // the MemgraphUser hooks
}

// NewHandler returns the hook's HTTP API: POST /sync and POST /customize (MemgraphClusters), POST
// /backup/sync and /backup/customize (MemgraphBackups), POST /scheduledbackup/sync
// (MemgraphScheduledBackups), POST /user/sync and /user/customize (MemgraphUsers), POST
// /nodes/sync (the Nodes' cordon label, handleNodeSync), GET (and HEAD) /healthz and /readyz. A
// wrong method gets a 405 with an Allow header.
func NewHandler(cfg Config) http.Handler {
	h := newHandler(cfg)
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Use(h.authenticate)
	r.Use(h.limitBody)
	r.Post("/sync", h.handleSync)
	r.Post("/customize", h.handleCustomize)
	r.Post("/nodes/sync", h.handleNodeSync)
	r.Post("/backup/sync", h.answer("backup", h.backups.Sync))
	r.Post("/backup/customize", h.answer("backup-customize", h.backups.Customize))
	r.Post("/scheduledbackup/sync", h.answer("scheduledbackup", h.backups.ScheduledSync))
	r.Post("/user/sync", h.answer("user", h.users.Sync))
	r.Post("/user/customize", h.answer("user-customize", h.users.Customize))
	for _, path := range []string{"/healthz", "/readyz"} {
		r.Get(path, ok)
		r.Head(path, ok)
	}
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		setAllow(w, r, req.URL.Path)
		h.writeJSON(w, "other", http.StatusMethodNotAllowed, notAllowed(req))
	})
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		h.writeJSON(w, "other", http.StatusNotFound, wire.ErrorBody{Error: "no such endpoint: " + v1alpha1.Clip(req.URL.Path) + " (use POST /sync or POST /customize)"})
	})
	return r
}

// newHandler applies Config's defaults.
func newHandler(cfg Config) *handler {
	if cfg.SyncBudget <= 0 {
		cfg.SyncBudget = DefaultSyncBudget
	}
	if cfg.MainlessSettle == 0 {
		cfg.MainlessSettle = DefaultMainlessSettle
	}
	if cfg.ProjectionGrace <= 0 {
		cfg.ProjectionGrace = planner.ProjectionGrace
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
		cfg.Registerer = prometheus.NewRegistry()
	}
	locks := newClusterLocks()
	h := &handler{cfg: cfg, log: cfg.Logger, locks: locks, metrics: hookmetrics.New(cfg.Registerer, locks.size, cfg.Now),
		parents: newParentCache(maxCachedParents, cmp.Or(cfg.AgentImage, topology.DefaultAgentImage)), operations: newOperationLog()}
	h.backups = backupcontroller.New(backupcontroller.Config{Budget: cfg.SyncBudget, Now: cfg.Now, Log: cfg.Logger, Connector: cfg.Connector,
		AgentResolver: cfg.AgentResolver,
		Metrics:       h.metrics.Backups})
	h.users = users.New(users.Config{Budget: cfg.SyncBudget, Now: cfg.Now, Log: cfg.Logger, Connector: cfg.Connector,
		NewPassword: cfg.UserPassword, HashCost: cfg.PasswordHashCost})
	return h
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

// fail answers a request that could not be served: 400 for a bad request, 500 otherwise
// (which a well-formed request never reaches).
func (h *handler) fail(w http.ResponseWriter, hook string, err error) {
	msg := wire.BoundError(err.Error())
	var bad *wire.BadRequest
	if errors.As(err, &bad) {
		log := h.log
		if bad.Cluster != "" {
			log = log.With(logCluster, bad.Cluster)
		}
		log.Warn("rejected hook request", "hook", hook, "error", msg)
		h.writeJSON(w, hook, http.StatusBadRequest, wire.ErrorBody{Error: msg})
		return
	}
	h.log.Error("hook failed", "hook", hook, "error", msg)
	h.writeJSON(w, hook, http.StatusInternalServerError, wire.ErrorBody{Error: msg})
}

// answer serves a controller's hook: the response serve returns, or the failure of a request it
// could not serve, written and counted as hook's.
func (h *handler) answer(hook string, serve func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := serve(r)
		if err != nil {
			h.fail(w, hook, err)
			return
		}
		h.writeJSON(w, hook, http.StatusOK, body)
	}
}

func (h *handler) writeJSON(w http.ResponseWriter, hook string, code int, body any) {
	code = wire.WriteJSON(w, code, body)
	h.metrics.Requests.WithLabelValues(hook, http.StatusText(code)).Inc()
}

// writeEncoded writes a body already encoded as JSON.
func (h *handler) writeEncoded(w http.ResponseWriter, hook string, code int, raw []byte) {
	wire.WriteBody(w, code, raw)
	h.metrics.Requests.WithLabelValues(hook, http.StatusText(code)).Inc()
}

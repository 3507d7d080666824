package hooks

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
)

var routeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// setAllow sets the Allow header of a 405 to the methods routes serves on path (RFC 9110 §15.5.6).
func setAllow(w http.ResponseWriter, routes chi.Routes, path string) {
	var allowed []string
	for _, m := range routeMethods {
		if routes.Match(chi.NewRouteContext(), m, path) {
			allowed = append(allowed, m)
		}
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
}

func notAllowed(r *http.Request) wire.ErrorBody {
	return wire.ErrorBody{Error: v1alpha1.Clip(r.Method) + " is not allowed on " + v1alpha1.Clip(r.URL.Path)}
}

// MetricsHandler serves the hook's metrics from g at GET (and HEAD) /metrics. It runs on a
// listener of its own (--metrics-listen), so a NetworkPolicy can admit a monitoring namespace
// to the metrics without admitting it to the hooks. With cfg.ProtectMetrics it demands the
// credentials the hooks demand (cfg.Token, cfg.ClientCertRequired) and counts refusals into the
// hooks' metrics (cfg.Registerer); otherwise it is open.
func MetricsHandler(cfg Config, g prometheus.Gatherer) http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	if cfg.ProtectMetrics {
		r.Use(newHandler(cfg).authenticate)
	}
	metrics := promhttp.HandlerFor(g, promhttp.HandlerOpts{})
	r.Get("/metrics", metrics.ServeHTTP)
	r.Head("/metrics", metrics.ServeHTTP)
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		setAllow(w, r, req.URL.Path)
		wire.WriteJSON(w, http.StatusMethodNotAllowed, notAllowed(req))
	})
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		wire.WriteJSON(w, http.StatusNotFound, wire.ErrorBody{Error: "no such endpoint: " + v1alpha1.Clip(req.URL.Path) + " (use GET /metrics)"})
	})
	return r
}

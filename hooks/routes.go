package hooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
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

func notAllowed(r *http.Request) errorBody {
	return errorBody{Error: topology.Clip(r.Method) + " is not allowed on " + topology.Clip(r.URL.Path)}
}

// maxErrorBytes bounds an error message a response or a log line carries: each echoed value
// is already bounded (topology.Clip), this is the backstop for a message listing many.
const maxErrorBytes = 4096

func boundError(msg string) string {
	if len(msg) <= maxErrorBytes {
		return msg
	}
	return topology.Clip(msg[:maxErrorBytes-topology.MaxEchoBytes]) + "… (error truncated)"
}

// writeJSONBody writes body as JSON with code (500 when body does not encode) and returns the code
// sent.
func writeJSONBody(w http.ResponseWriter, code int, body any) int {
	raw, err := marshalUnescaped(body)
	if err != nil {
		code, raw = http.StatusInternalServerError, []byte(`{"error":"encoding response"}`)
	}
	writeBody(w, code, append(raw, '\n'))
	return code
}

// marshalUnescaped is json.Marshal without its HTML escaping: messages are read by people, in
// logs, kubectl and curl, where "instance_<n>" must not read "instance_\u003cn\u003e". The
// bodies go to Metacontroller and HTTP clients, never into HTML.
func marshalUnescaped(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeBody writes raw, a JSON document ending in a newline, with code.
func writeBody(w http.ResponseWriter, code int, raw []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(raw)
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
		writeJSONBody(w, http.StatusMethodNotAllowed, notAllowed(req))
	})
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		writeJSONBody(w, http.StatusNotFound, errorBody{Error: "no such endpoint: " + topology.Clip(req.URL.Path) + " (use GET /metrics)"})
	})
	return r
}

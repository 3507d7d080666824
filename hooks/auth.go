package hooks

import (
	"net/http"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
)

// authenticate admits a request only with the credentials the Config demands (serving.Guard);
// a refusal is answered 401, counted and logged without any credential.
func (h *handler) authenticate(next http.Handler) http.Handler {
	guard := serving.Guard{Tokens: h.cfg.Token, ClientCertRequired: h.cfg.ClientCertRequired, ProtectMetrics: h.cfg.ProtectMetrics}
	return guard.Middleware(h.refuse)(next)
}

func (h *handler) refuse(w http.ResponseWriter, r *http.Request, reason, msg string) {
	h.metrics.AuthFailures.WithLabelValues(reason).Inc()
	h.log.Warn("refused an unauthenticated request", "method", r.Method, "path", r.URL.Path,
		"remote", r.RemoteAddr, "reason", reason)
	h.writeJSON(w, endpointLabel(r.URL.Path), http.StatusUnauthorized, wire.ErrorBody{Error: msg})
}

// endpointLabel bounds the requests metric's hook label to known endpoints.
func endpointLabel(path string) string {
	switch path {
	case "/sync":
		return "sync"
	case "/customize":
		return "customize"
	case "/metrics":
		return "metrics"
	}
	return "other"
}

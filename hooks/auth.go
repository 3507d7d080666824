package hooks

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// TokenSource yields the bearer tokens a request may present: any one of them admits it. It is
// asked on every request, so a source that re-reads its file (Credentials) rotates tokens without
// a restart; accepting the old and the new token together lets Metacontroller switch from one to
// the other with no call refused. No tokens, or only empty ones, admit nobody.
type TokenSource interface {
	Tokens() [][]byte
}

// Reasons a request is refused, as the auth-failures metric's label.
const (
	refusedNoClientCert  = "no_client_certificate"
	refusedMissingToken  = "missing_token"
	refusedMalformed     = "malformed_authorization"
	refusedInvalidToken  = "invalid_token"
	authenticateResponse = `Bearer realm="memgraph-hooks"`
)

// authenticate admits a request to a protected endpoint only with the credentials the Config
// demands: a client certificate (the TLS layer has already verified any certificate presented
// against the client CA, see Credentials) and the bearer token. Anything else is answered 401
// before the body is read, so nothing is decoded and no coordinator is dialled. Probes stay open:
// the kubelet carries neither credential.
func (h *handler) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.protected(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if reason, msg := h.refusal(r); reason != "" {
			h.refuse(w, r, reason, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// protected is every path but the probes, and /metrics unless ProtectMetrics: unknown paths are
// refused too, rather than telling an anonymous caller which paths exist.
func (h *handler) protected(path string) bool {
	if h.cfg.Token == nil && !h.cfg.ClientCertRequired {
		return false
	}
	switch path {
	case "/healthz", "/readyz":
		return false
	case "/metrics":
		return h.cfg.ProtectMetrics
	}
	return true
}

// refusal says why r may not pass ("" when it may) and what to tell the caller.
func (h *handler) refusal(r *http.Request) (reason, msg string) {
	if h.cfg.ClientCertRequired && (r.TLS == nil || len(r.TLS.PeerCertificates) == 0) {
		return refusedNoClientCert, "this endpoint requires a TLS client certificate signed by the hook's client CA"
	}
	if h.cfg.Token == nil {
		return "", ""
	}
	values := r.Header.Values("Authorization")
	switch {
	case len(values) == 0:
		return refusedMissingToken, "this endpoint requires an Authorization: Bearer header (the CompositeController's endpointConfigs authorization)"
	case len(values) > 1:
		return refusedMalformed, "more than one Authorization header"
	}
	presented, ok := bearerToken(values[0])
	if !ok {
		return refusedMalformed, "the Authorization header is not a Bearer token"
	}
	if !anyTokenMatches(presented, h.cfg.Token.Tokens()) {
		return refusedInvalidToken, "the bearer token is not valid"
	}
	return "", ""
}

// bearerToken extracts the token of an "Authorization: Bearer <token>" value (RFC 6750; the
// scheme is case-insensitive).
func bearerToken(header string) ([]byte, bool) {
	scheme, rest, found := strings.Cut(header, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return nil, false
	}
	token := strings.TrimLeft(rest, " ")
	return []byte(token), token != ""
}

// anyTokenMatches compares presented with every accepted token, all of them whatever the
// outcome, so that how long it takes does not tell which token matched.
func anyTokenMatches(presented []byte, accepted [][]byte) bool {
	matched := false
	for _, token := range accepted {
		matched = tokenMatches(presented, token) || matched
	}
	return matched
}

// tokenMatches compares in constant time. Both sides are hashed first, so that neither where the
// first differing byte is nor a difference in length shows in how long the comparison takes
// (subtle.ConstantTimeCompare returns at once on unequal lengths).
func tokenMatches(presented, expected []byte) bool {
	if len(expected) == 0 {
		return false
	}
	p, e := sha256.Sum256(presented), sha256.Sum256(expected)
	return subtle.ConstantTimeCompare(p[:], e[:]) == 1
}

// refuse answers 401, counts the refusal and logs it without any credential.
func (h *handler) refuse(w http.ResponseWriter, r *http.Request, reason, msg string) {
	h.metrics.authFailures.WithLabelValues(reason).Inc()
	h.log.Warn("refused an unauthenticated request", "method", r.Method, "path", r.URL.Path,
		"remote", r.RemoteAddr, "reason", reason)
	if reason == refusedInvalidToken {
		w.Header().Set("WWW-Authenticate", authenticateResponse+`, error="invalid_token"`)
	} else {
		w.Header().Set("WWW-Authenticate", authenticateResponse)
	}
	h.writeJSON(w, endpointLabel(r.URL.Path), http.StatusUnauthorized, errorBody{Error: msg})
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

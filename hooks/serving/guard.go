package serving

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
	RefusedNoClientCert = "no_client_certificate"
	RefusedMissingToken = "missing_token"
	RefusedMalformed    = "malformed_authorization"
	RefusedInvalidToken = "invalid_token"
)

const authenticateResponse = `Bearer realm="memgraph-hooks"`

// Guard says which requests the credentials admit: with Tokens, only a request carrying one of
// them as its bearer token; with ClientCertRequired, only one that presented a TLS client
// certificate (the TLS layer has already verified any certificate presented against the client
// CA, see Credentials). Probes stay open: the kubelet carries neither credential.
type Guard struct {
	Tokens             TokenSource
	ClientCertRequired bool
	ProtectMetrics     bool // /metrics needs the credentials too
}

// Refuser answers a refused request: reason is one of the Refused… constants, msg what to tell
// the caller (Challenge has set WWW-Authenticate).
type Refuser func(w http.ResponseWriter, r *http.Request, reason, msg string)

// Middleware admits a request to a protected path only with the credentials the guard demands;
// anything else is handed to refuse before the body is read, so nothing is decoded and no
// coordinator is dialled.
func (g Guard) Middleware(refuse Refuser) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if g.Protects(r.URL.Path) {
				if reason, msg := g.Refusal(r); reason != "" {
					challenge(w, reason)
					refuse(w, r, reason, msg)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Protects is every path but the probes, and /metrics unless ProtectMetrics, when the guard
// demands any credential: unknown paths are refused too, rather than telling an anonymous caller
// which paths exist.
func (g Guard) Protects(path string) bool {
	if g.Tokens == nil && !g.ClientCertRequired {
		return false
	}
	switch path {
	case "/healthz", "/readyz":
		return false
	case "/metrics":
		return g.ProtectMetrics
	}
	return true
}

// Refusal says why r may not pass ("" when it may) and what to tell the caller.
func (g Guard) Refusal(r *http.Request) (reason, msg string) {
	if g.ClientCertRequired && (r.TLS == nil || len(r.TLS.PeerCertificates) == 0) {
		return RefusedNoClientCert, "this endpoint requires a TLS client certificate signed by the hook's client CA"
	}
	if g.Tokens == nil {
		return "", ""
	}
	values := r.Header.Values("Authorization")
	switch {
	case len(values) == 0:
		return RefusedMissingToken, "this endpoint requires an Authorization: Bearer header (the CompositeController's endpointConfigs authorization)"
	case len(values) > 1:
		return RefusedMalformed, "more than one Authorization header"
	}
	presented, ok := bearerToken(values[0])
	if !ok {
		return RefusedMalformed, "the Authorization header is not a Bearer token"
	}
	if !anyTokenMatches(presented, g.Tokens.Tokens()) {
		return RefusedInvalidToken, "the bearer token is not valid"
	}
	return "", ""
}

// challenge sets the WWW-Authenticate header of a 401 for reason (RFC 6750 §3).
func challenge(w http.ResponseWriter, reason string) {
	if reason == RefusedInvalidToken {
		w.Header().Set("WWW-Authenticate", authenticateResponse+`, error="invalid_token"`)
	} else {
		w.Header().Set("WWW-Authenticate", authenticateResponse)
	}
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

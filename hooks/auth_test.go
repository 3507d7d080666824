package hooks_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

const goodToken = "s3cr3t-token-for-metacontroller-0123456789"

type staticToken string

func (s staticToken) Tokens() [][]byte { return [][]byte{[]byte(s)} }

// countingConnector records every Client it hands out: a refused request must not get one.
type countingConnector struct {
	inner   memgraph.Connector
	clients atomic.Int64
}

func (c *countingConnector) Client(address string) memgraph.Client {
	c.clients.Add(1)
	return c.inner.Client(address)
}

type authFixture struct {
	handler http.Handler
	metrics http.Handler // the metrics listener's handler, sharing the hooks' Config
	conn    *countingConnector
	reg     *prometheus.Registry
	logs    *bytes.Buffer
}

func newAuthFixture(t *testing.T, edit func(*hooks.Config)) authFixture {
	t.Helper()
	f := authFixture{conn: &countingConnector{inner: unreachable{}}, reg: prometheus.NewRegistry(), logs: &bytes.Buffer{}}
	cfg := hooks.Config{
		Connector: f.conn, Token: staticToken(goodToken), Registerer: f.reg,
		Logger: slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	f.handler = hooks.NewHandler(cfg)
	f.metrics = hooks.MetricsHandler(cfg, f.reg)
	return f
}

func (f authFixture) do(method, path, body string, header http.Header) *httptest.ResponseRecorder {
	return serveWithHeader(f.handler, method, path, body, header)
}

func serveWithHeader(h http.Handler, method, path, body string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// scrape GETs /metrics from the metrics listener's handler.
func (f authFixture) scrape(header http.Header) *httptest.ResponseRecorder {
	return serveWithHeader(f.metrics, http.MethodGet, "/metrics", "", header)
}

func bearer(values ...string) http.Header {
	h := http.Header{}
	for _, v := range values {
		h.Add("Authorization", v)
	}
	return h
}

// readySyncBody is a sync request whose pods are all Ready: accepted, it would dial the
// coordinators.
func readySyncBody(t *testing.T) string {
	t.Helper()
	return mustJSON(t, readJSON(t, "sync-pods-ready.json"))
}

// Without the right bearer token, /sync and /customize answer 401 with a JSON error before
// reading the body: nothing is decoded (a malformed body is not even noticed), nothing is
// dialled, the refusal is counted and logged without any token.
func TestRequestsWithoutTheTokenAreRefused(t *testing.T) {
	f := newAuthFixture(t, nil)
	wrong := "not-the-token-but-long-enough-0123456789"
	cases := []struct {
		name   string
		header http.Header
		reason string
	}{
		{"no Authorization header", nil, "missing_token"},
		{"Basic scheme", bearer("Basic " + goodToken), "malformed_authorization"},
		{"Bearer without a token", bearer("Bearer "), "malformed_authorization"},
		{"two Authorization headers", bearer("Bearer "+goodToken, "Bearer "+goodToken), "malformed_authorization"},
		{"wrong token", bearer("Bearer " + wrong), "invalid_token"},
		{"right token as a prefix", bearer("Bearer " + goodToken + "x"), "invalid_token"},
		{"truncated token", bearer("Bearer " + goodToken[:len(goodToken)-1]), "invalid_token"},
	}
	for _, tc := range cases {
		for _, path := range []string{"/sync", "/customize", "/sync?dryRun=true", "/no-such-path"} {
			for _, body := range []string{readySyncBody(t), "{not json"} {
				rec := f.do(http.MethodPost, path, body, tc.header)
				if rec.Code != http.StatusUnauthorized {
					t.Fatalf("%s %s: %d %s, want 401", tc.name, path, rec.Code, rec.Body)
				}
				var e struct{ Error string }
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
					t.Errorf("%s %s: body %q is not a JSON error", tc.name, path, rec.Body)
				}
				if !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("%s %s: WWW-Authenticate %q", tc.name, path, rec.Header().Get("WWW-Authenticate"))
				}
			}
		}
		if got := authFailures(t, f.reg, tc.reason); got == 0 {
			t.Errorf("%s: no %s refusal counted", tc.name, tc.reason)
		}
	}
	if n := f.conn.clients.Load(); n != 0 {
		t.Errorf("refused requests dialled %d coordinator clients", n)
	}
	for _, secret := range []string{goodToken, wrong, goodToken[:20]} {
		if strings.Contains(f.logs.String(), secret) {
			t.Errorf("a token appears in the log:\n%s", f.logs)
		}
	}
	if !strings.Contains(f.logs.String(), "refused an unauthenticated request") {
		t.Errorf("refusals are not logged:\n%s", f.logs)
	}
}

// authFailures reads memgraph_hooks_auth_failures_total{reason}.
func authFailures(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	return metricValue(t, reg, "memgraph_hooks_auth_failures_total", map[string]string{"reason": reason})
}

// metricValue is the value of the counter or gauge name whose labels include labels; 0 when
// there is none.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue metrics
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// The right token, under any capitalisation of the scheme, gets the request served; the probes
// need no token at all, /metrics only when ProtectMetrics asks for it.
func TestTheTokenAdmitsAndProbesStayOpen(t *testing.T) {
	f := newAuthFixture(t, nil)
	for _, scheme := range []string{"Bearer ", "bearer ", "BEARER  "} {
		rec := f.do(http.MethodPost, "/customize", mustJSON(t, map[string]any{"parent": validParent()}), bearer(scheme+goodToken))
		if rec.Code != http.StatusOK {
			t.Errorf("%q: %d %s", scheme, rec.Code, rec.Body)
		}
	}
	if rec := f.do(http.MethodPost, "/sync", readySyncBody(t), bearer("Bearer "+goodToken)); rec.Code != http.StatusOK || f.conn.clients.Load() == 0 {
		t.Errorf("an authenticated sync: %d, %d clients; want 200 and a dial", rec.Code, f.conn.clients.Load())
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if rec := f.do(http.MethodGet, path, "", nil); rec.Code != http.StatusOK {
			t.Errorf("GET %s without a token: %d", path, rec.Code)
		}
	}
	if rec := f.scrape(nil); rec.Code != http.StatusOK {
		t.Errorf("GET /metrics without a token: %d", rec.Code)
	}
	protected := newAuthFixture(t, func(c *hooks.Config) { c.ProtectMetrics = true })
	if rec := protected.scrape(nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without a token under ProtectMetrics: %d, want 401", rec.Code)
	}
	if rec := protected.scrape(bearer("Bearer " + goodToken)); rec.Code != http.StatusOK {
		t.Errorf("GET /metrics with the token under ProtectMetrics: %d", rec.Code)
	}
	if got := authFailures(t, protected.reg, "missing_token"); got != 1 {
		t.Errorf("refused scrapes counted %v times, want 1 in the hooks' own counter", got)
	}
	if rec := protected.do(http.MethodGet, "/healthz", "", nil); rec.Code != http.StatusOK {
		t.Errorf("GET /healthz under ProtectMetrics: %d", rec.Code)
	}
}

// An empty token (a source that lost its value) admits nobody, not everybody.
func TestEmptyTokenAdmitsNobody(t *testing.T) {
	f := newAuthFixture(t, func(c *hooks.Config) { c.Token = staticToken("") })
	for _, h := range []http.Header{nil, bearer("Bearer "), bearer("Bearer x")} {
		if rec := f.do(http.MethodPost, "/customize", "{}", h); rec.Code != http.StatusUnauthorized {
			t.Errorf("header %v: %d, want 401", h, rec.Code)
		}
	}
}

// ClientCertRequired refuses a request that came without a (verified) client certificate, with
// or without a token.
func TestClientCertificateIsRequired(t *testing.T) {
	f := newAuthFixture(t, func(c *hooks.Config) { c.Token, c.ClientCertRequired = nil, true })
	body := mustJSON(t, map[string]any{"parent": validParent()})
	if rec := f.do(http.MethodPost, "/customize", body, bearer("Bearer "+goodToken)); rec.Code != http.StatusUnauthorized {
		t.Errorf("no TLS client certificate: %d, want 401", rec.Code)
	}
	req := httptest.NewRequest(http.MethodPost, "/customize", strings.NewReader(body))
	req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{{}}}
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("with a client certificate: %d %s", rec.Code, rec.Body)
	}
	if got := authFailures(t, f.reg, "no_client_certificate"); got != 1 {
		t.Errorf("no_client_certificate refusals = %v, want 1", got)
	}
}

package hooks_test

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
)

const boltSecret = "memgraph-bolt-tls"

// boltPKI is a cluster's TLS material: a CA and a pair valid for every member of the harness's
// cluster (memgraph in default), for server and client authentication as intra-cluster TLS
// needs (newLeafPKI issues others).
type boltPKI struct {
	ca   *pki.Authority
	pair pki.Pair
	// bundle, when set, is ca.crt instead of the CA's own certificate (several CAs while one
	// rotates).
	bundle []byte
}

// caPEM is the Secret's ca.crt.
func (b boltPKI) caPEM() []byte {
	if b.bundle != nil {
		return b.bundle
	}
	return b.ca.CertPEM
}

func newBoltPKI(t testing.TB, dnsNames ...string) boltPKI {
	t.Helper()
	if len(dnsNames) == 0 {
		dnsNames = []string{"*.memgraph-coordinator.default.svc.cluster.local", "*.memgraph-data.default.svc.cluster.local"}
	}
	return newLeafPKI(t, pki.Leaf{DNSNames: dnsNames, Server: true, Client: true})
}

// newLeafPKI is a new CA and the pair it issues for leaf (named memgraph, valid for an hour).
func newLeafPKI(t testing.TB, leaf pki.Leaf) boltPKI {
	t.Helper()
	ca, err := pki.NewAuthority("memgraph bolt CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf.CommonName, leaf.Validity = "memgraph", time.Hour
	pair, err := ca.Issue(leaf)
	if err != nil {
		t.Fatal(err)
	}
	return boltPKI{ca: ca, pair: pair}
}

func (b boltPKI) serverConfig(t testing.TB) *tls.Config {
	t.Helper()
	cert, err := tls.X509KeyPair(b.pair.CertPEM, b.pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// secret renders the kubernetes.io/tls Secret as Metacontroller sends a related object.
func (b boltPKI) secret(ns, name string) map[string]any {
	enc := base64.StdEncoding.EncodeToString
	return map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data": map[string]any{
			"ca.crt": enc(b.caPEM()), "tls.crt": enc(b.pair.CertPEM), "tls.key": enc(b.pair.KeyPEM),
		},
	}
}

// secretMaterial is fragments of the Secret's content, as sent (base64 of the PEM) and as
// decoded (PEM text), from the start and the middle of each value: a leak of any part of a value,
// even one cut short by a message bound, contains one of them.
func (b boltPKI) secretMaterial() map[string]string {
	out := map[string]string{}
	fragments := func(what, s string, from int) {
		out[what+" (start)"] = s[from : from+24]
		out[what+" (middle)"] = s[len(s)/2 : len(s)/2+24]
	}
	for name, pemBytes := range map[string][]byte{"ca.crt": b.ca.CertPEM, "tls.crt": b.pair.CertPEM, "tls.key": b.pair.KeyPEM} {
		// Past the base64 of the "-----BEGIN …-----" line, which every PEM value shares.
		fragments(name+" base64", base64.StdEncoding.EncodeToString(pemBytes), 48)
		body := strings.Join(strings.Split(string(pemBytes), "\n")[1:], "")
		fragments(name+" PEM", body, 0)
	}
	return out
}

// newTLSHarness is a harness whose cluster sets spec.tls and whose simulated instances serve
// Bolt only over TLS, with the Secret among the related objects.
func newTLSHarness(t testing.TB, coordinators, data int, opts ...harnessOption) (*harness, boltPKI) {
	t.Helper()
	b := newBoltPKI(t)
	h := newHarness(t, coordinators, data, opts...)
	h.spec["tls"] = map[string]any{"secretName": boltSecret}
	h.boltTLS = b.serverConfig(t)
	h.secrets = map[string]any{"default/" + boltSecret: b.secret("default", boltSecret)}
	return h, b
}

// With spec.tls the hook reaches the coordinators over TLS (the simulated Memgraph refuses
// plaintext) verified with the Secret's CA, and converges as without TLS.
func TestSpecTLSConvergesOverBoltTLS(t *testing.T) {
	h, _ := newTLSHarness(t, 3, 2)
	h.sync()
	h.sync()
	h.settleBudgets()
	for _, typ := range []v1alpha1.ConditionType{v1alpha1.ConditionReady, v1alpha1.ConditionConverged} {
		if status, reason, msg := h.condition(typ); status != "True" {
			t.Errorf("%s = %s %s: %s", typ, status, reason, msg)
		}
	}
	h.assertNoMisuse()
	for _, c := range h.lastResp.Children {
		if c["kind"] != "StatefulSet" {
			continue
		}
		args := c["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["args"]
		if !strings.Contains(mustJSON(t, args), "--bolt-cert-file=/etc/memgraph/ssl/tls.crt") {
			t.Errorf("%s runs without --bolt-cert-file: %v", c["metadata"].(map[string]any)["name"], args)
		}
	}
}

// Without a usable Secret the hook dials nothing (no plaintext fallback), still returns the
// children, and says what is wrong in Ready and Converged: SecretMissing naming it when it does
// not exist in the cluster's namespace, TLSConfigInvalid when it is unusable.
func TestUnusableTLSSecretIsTLSConfigInvalid(t *testing.T) {
	other := newBoltPKI(t)
	elsewhere := newBoltPKI(t, "*.elsewhere.svc")
	for _, tc := range []struct {
		name   string
		secret func(good map[string]any) map[string]any // nil: no Secret
		want   string
	}{
		{"missing", nil, "Secret default/memgraph-bolt-tls (spec.tls.secretName: Bolt's TLS certificate"},
		{"opaque", func(s map[string]any) map[string]any { s["type"] = "Opaque"; return s }, `is of type "Opaque", want kubernetes.io/tls`},
		{"no ca.crt", func(s map[string]any) map[string]any { delete(s["data"].(map[string]any), "ca.crt"); return s }, "has no ca.crt"},
		{"no tls.key", func(s map[string]any) map[string]any { delete(s["data"].(map[string]any), "tls.key"); return s }, "has no tls.key"},
		{"ca.crt not base64", func(s map[string]any) map[string]any { s["data"].(map[string]any)["ca.crt"] = "%%%"; return s }, "ca.crt that is not valid base64"},
		{"ca.crt not a certificate", func(s map[string]any) map[string]any {
			s["data"].(map[string]any)["ca.crt"] = base64.StdEncoding.EncodeToString([]byte("hello"))
			return s
		}, "unusable ca.crt: the CA bundle holds no PEM-encoded certificate"},
		{"tls.crt from another CA", func(s map[string]any) map[string]any {
			s["data"].(map[string]any)["ca.crt"] = other.secret("", "")["data"].(map[string]any)["ca.crt"]
			return s
		}, "does not verify against its ca.crt for coordinator memgraph-coordinator-1.memgraph-coordinator.default.svc.cluster.local: x509: certificate signed by unknown authority"},
		{"tls.crt for other names", func(map[string]any) map[string]any { return elsewhere.secret("default", boltSecret) }, "not memgraph-coordinator-1.memgraph-coordinator.default.svc.cluster.local"},
		{"same name, other namespace", func(s map[string]any) map[string]any {
			s["metadata"].(map[string]any)["namespace"] = "other"
			return s
		}, "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, b := newTLSHarness(t, 3, 2)
			h.sync() // pods appear
			h.secrets = map[string]any{}
			if tc.secret != nil {
				h.secrets["x/"+boltSecret] = tc.secret(b.secret("default", boltSecret))
			}
			resp := h.sync()
			want := v1alpha1.ReasonTLSConfigInvalid
			if strings.Contains(tc.want, "does not exist") || tc.secret == nil {
				want = v1alpha1.ReasonSecretMissing
			}
			for _, typ := range []v1alpha1.ConditionType{v1alpha1.ConditionReady, v1alpha1.ConditionConverged} {
				status, reason, msg := h.condition(typ)
				if status != "False" || reason != want || !strings.Contains(msg, tc.want) {
					t.Errorf("%s = %s %s %q, want False %s mentioning %q", typ, status, reason, msg, want, tc.want)
				}
			}
			if len(resp.Children) != 10 { // nine from topology and the backup-agent Secret
				t.Errorf("%d children returned, want all 10", len(resp.Children))
			}
			if q := h.world.Queries(); len(q) != 0 {
				t.Errorf("the hook dialled Memgraph without a usable TLS Secret: %+v", q)
			}
		})
	}
}

// Fixing the Secret is enough: the next sync converges.
func TestFixedTLSSecretConverges(t *testing.T) {
	h, _ := newTLSHarness(t, 3, 2)
	good := h.secrets
	h.secrets = map[string]any{}
	h.sync()
	h.sync()
	if _, reason, _ := h.condition(v1alpha1.ConditionReady); reason != v1alpha1.ReasonSecretMissing {
		t.Fatalf("Ready reason %s without the Secret, want SecretMissing", reason)
	}
	h.secrets = good
	h.sync()
	h.settleBudgets()
	if status, reason, msg := h.condition(v1alpha1.ConditionConverged); status != "True" {
		t.Errorf("Converged = %s %s %s after the Secret appeared", status, reason, msg)
	}
}

func TestCustomizeAsksForTheTLSSecret(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	parent := validParent()
	parent["spec"].(map[string]any)["tls"] = map[string]any{"secretName": boltSecret}
	code, body := serve(t, handler, http.MethodPost, "/customize", mustJSON(t, map[string]any{"parent": parent}))
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var resp struct{ RelatedResources []map[string]any }
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"apiVersion": "v1", "resource": "secrets", "namespace": "default", "names": []any{"memgraph-secrets", boltSecret}}
	if len(resp.RelatedResources) != 3 {
		t.Fatalf("related rules %v, want the pods, the Secret and the Nodes", resp.RelatedResources)
	}
	if diff := cmp.Diff(want, resp.RelatedResources[1]); diff != "" {
		t.Errorf("Secret rule (-want +got):\n%s", diff)
	}
}

// The Secret travels through the hook (Metacontroller sends it whole, tls.key included), yet no
// byte of it reaches a log line, a status, a dry-run plan or an error.
func TestNoSecretMaterialInLogsOrResponses(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, b := newTLSHarness(t, 3, 2, func(c *harnessConfig) { c.hook.Logger = logger })
	var bodies []string
	record := func(code int, body []byte) {
		t.Helper()
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, body)
		}
		bodies = append(bodies, string(body))
	}
	h.sync() // pods appear
	record(h.post("/sync?dryRun=true", h.request()))
	h.sync() // registers everything over TLS
	bodies = append(bodies, mustJSON(t, h.lastResp))
	record(h.post("/customize", map[string]any{"parent": h.parent()}))
	broken := b.secret("default", boltSecret)
	broken["data"].(map[string]any)["ca.crt"] = newBoltPKI(t).secret("", "")["data"].(map[string]any)["ca.crt"]
	h.secrets = map[string]any{"default/" + boltSecret: broken}
	record(h.post("/sync", h.request()))
	malformed := h.request()
	malformed["related"].(map[string]any)["Secret.v1"].(map[string]any)["default/"+boltSecret].(map[string]any)["metadata"] = map[string]any{}
	code, body := h.post("/sync", malformed)
	if code != http.StatusBadRequest {
		t.Fatalf("a Secret without a name: %d %s, want 400", code, body)
	}
	bodies = append(bodies, string(body))

	if logs.Len() == 0 || !strings.Contains(logs.String(), "executed") {
		t.Fatalf("captured no hook log to check: %q", logs.String())
	}
	haystacks := map[string]string{"logs": logs.String(), "responses": strings.Join(bodies, "\n")}
	for where, text := range haystacks {
		for what, needle := range b.secretMaterial() {
			if strings.Contains(text, needle) {
				t.Errorf("%s contain the Secret's %s", where, what)
			}
		}
	}
}

// A handover reads SHOW REPLICAS on the MAIN data instance, over TLS verified for the data
// instance's name: a certificate valid for the coordinators only lets the cluster run but holds
// every handover, saying why.
func TestSpecTLSReachesTheMainForSwitchovers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		dnsNames []string
		moved    bool
	}{
		{"a certificate for both roles", nil, true},
		{"a certificate for the coordinators only", []string{"*.memgraph-coordinator.default.svc.cluster.local"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newTLSHarness(t, 3, 2)
			b := newBoltPKI(t, tc.dnsNames...)
			h.boltTLS = b.serverConfig(t)
			h.secrets = map[string]any{"default/" + boltSecret: b.secret("default", boltSecret)}
			if !tc.moved {
				// Bolt alone: with intra-cluster TLS the certificate is TLSCertificateMismatch first
				// (TestIntraClusterCertificateMismatch).
				h.spec["tls"] = map[string]any{"secretName": boltSecret, "intraCluster": false}
			}
			h.bootstrap()
			h.assertConverged()
			h.spec["preferredMain"] = "instance_1"
			h.sync()
			main := h.world.Raft().Clusters[0].Main
			if tc.moved {
				if main != "instance_1" {
					t.Errorf("MAIN %s, want instance_1", main)
				}
				return
			}
			if main != "instance_0" {
				t.Errorf("MAIN %s, want instance_0 (no proof, no handover)", main)
			}
			msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonSwitchoverPending)
			if !strings.Contains(msg, "SHOW REPLICAS on MAIN instance_0 could not be read") || !strings.Contains(msg, "certificate") {
				t.Errorf("SwitchoverPending %q does not say the MAIN's certificate is not trusted", msg)
			}
		})
	}
}

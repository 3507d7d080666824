package hooks_test

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// agentSecretOf returns the backup-agent Secret among a sync response's children.
func agentSecretOf(t *testing.T, body string) map[string]any {
	t.Helper()
	var resp struct{ Children []map[string]any }
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	for _, c := range resp.Children {
		if meta, _ := c["metadata"].(map[string]any); c["kind"] == "Secret" && meta["name"] == "memgraph-backup-agent" {
			return c
		}
	}
	t.Fatalf("no memgraph-backup-agent Secret among the children: %s", body)
	return nil
}

func decodePEM(t *testing.T, data map[string]any, key string) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(data[key].(string))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return raw
}

// A cluster without the Secret gets one generated — a token and an ECDSA certificate for every
// data pod, signed by the CA it carries — and once the Secret is observed it is returned exactly
// as observed.
func TestBackupAgentSecretIsGeneratedOnceThenReturnedAsObserved(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	code, body := serve(t, handler, http.MethodPost, "/sync", mustJSON(t, map[string]any{"parent": validParent()}))
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	secret := agentSecretOf(t, body)
	data := secret["data"].(map[string]any)
	if len(decodePEM(t, data, "token")) < 16 {
		t.Fatalf("token too short: %q", data["token"])
	}
	block, _ := pem.Decode(decodePEM(t, data, "tls.crt"))
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok {
		t.Errorf("serving key is %T, want ECDSA", cert.PublicKey)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(decodePEM(t, data, "ca.crt"))
	for _, host := range []string{"memgraph-data-0.memgraph-data.default.svc.cluster.local", "memgraph-data-7.memgraph-data.default.svc.cluster.local"} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("certificate does not serve %s: %v", host, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "memgraph-coordinator-1.memgraph-coordinator.default.svc.cluster.local"}); err == nil {
		t.Error("certificate also serves a coordinator")
	}

	observed := map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": "memgraph-backup-agent", "namespace": "default", "resourceVersion": "7"},
		"data":     map[string]any{"token": b64("observed-token"), "tls.crt": b64("c"), "tls.key": b64("k"), "ca.crt": b64("a")}}
	req := map[string]any{"parent": validParent(), "children": map[string]any{"Secret.v1": map[string]any{"default/memgraph-backup-agent": observed}}}
	code, body = serve(t, handler, http.MethodPost, "/sync", mustJSON(t, req))
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if diff := cmp.Diff(observed["data"], agentSecretOf(t, body)["data"]); diff != "" {
		t.Errorf("observed Secret not returned as observed (-observed +returned):\n%s", diff)
	}

	// An incomplete Secret (a key removed by hand) is generated anew.
	delete(observed["data"].(map[string]any), "ca.crt")
	_, body = serve(t, handler, http.MethodPost, "/sync", mustJSON(t, req))
	if got := agentSecretOf(t, body)["data"].(map[string]any); got["token"] == b64("observed-token") || len(got) != len(topology.BackupAgentSecretKeys) {
		t.Errorf("incomplete Secret returned as %v, want new data with every key", got)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

package hooks_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// spec.auth: the hook reads SHOW REPLICAS on the MAIN data instance, which requires credentials
// once a Memgraph user exists; they come from a Secret the customize hook asks for, live for one
// sync, and never reach a log, the status or any child but the cluster's <cluster>-user-access
// Secret, the copy its MemgraphUsers reach the MAIN with.

const (
	authSecret   = "memgraph-hooks-auth"
	authUser     = "hooks-reader"
	authPassword = "pa55-for-show-replicas"
)

func authSecretObject(user, password string) map[string]any {
	data := map[string]any{}
	if user != "" {
		data["username"] = base64.StdEncoding.EncodeToString([]byte(user))
	}
	if password != "" {
		data["password"] = base64.StdEncoding.EncodeToString([]byte(password))
	}
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": authSecret, "namespace": "default"}, "data": data}
}

// newAuthHarness is a converged 3+3 cluster whose data instances have one Memgraph user, with
// spec.auth naming its Secret when secret is set.
func newAuthHarness(t *testing.T, secret map[string]any, opts ...harnessOption) *harness {
	h := newHarness(t, 3, 3, opts...)
	h.dataAuth = &sim.Auth{Username: authUser, Password: authPassword}
	h.spec["auth"] = map[string]any{"secretName": authSecret}
	h.secrets = map[string]any{}
	if secret != nil {
		h.secrets["default/"+authSecret] = secret
	}
	h.bootstrap()
	h.assertConverged()
	return h
}

func TestSpecAuthCredentialsProveASwitchover(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := newAuthHarness(t, authSecretObject(authUser, authPassword), func(c *harnessConfig) { c.hook.Logger = logger })
	h.spec["preferredMain"] = "instance_1"
	h.sync()
	h.assertMains("instance_1")
	h.sync()
	h.assertConverged()
	h.assertNoMisuse()
	resp := h.lastResp
	resp.Children = nil
	var copies []map[string]any
	for _, child := range h.lastResp.Children {
		if child["kind"] == "Secret" && child["metadata"].(map[string]any)["name"] == topology.UserAccessSecretName(h.name) {
			copies = append(copies, child)
			continue
		}
		resp.Children = append(resp.Children, child)
	}
	body, _ := json.Marshal(resp)
	for _, leak := range []string{authPassword, base64.StdEncoding.EncodeToString([]byte(authPassword))} {
		if strings.Contains(string(body), leak) || strings.Contains(logs.String(), leak) {
			t.Errorf("the password (%q) reached the status, a child other than the user-access Secret, or a log line", leak)
		}
	}
	if len(copies) != 1 || copies[0]["data"].(map[string]any)["password"] != base64.StdEncoding.EncodeToString([]byte(authPassword)) {
		t.Errorf("want one user-access Secret holding spec.auth's password, got %v", len(copies))
	}
}

// Whatever keeps SHOW REPLICAS from being read stops every handover, and the status names it.
func TestSpecAuthProblemsHoldHandoversAndSaySo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		secret map[string]any
		auth   bool // spec.auth set
		want   string
	}{
		{"no Secret", nil, true, "Secret default/" + authSecret + " (spec.auth.secretName: the hook's Memgraph credentials"},
		{"no password in it", authSecretObject(authUser, ""), true, "has no password"},
		{"a wrong password", authSecretObject(authUser, "wrong"), true, "Authentication failure"},
		{"no spec.auth while the data instances require a login", nil, false, "Authentication failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The cluster converges with the Secret; then it goes (or changes) and a switchover is asked for.
			h := newAuthHarness(t, authSecretObject(authUser, authPassword))
			h.secrets = map[string]any{}
			if tc.secret != nil {
				h.secrets["default/"+authSecret] = tc.secret
			}
			if !tc.auth {
				delete(h.spec, "auth")
			}
			h.spec["preferredMain"] = "instance_1"
			h.world.ResetLog()
			h.sync()
			if tc.auth && tc.secret == nil {
				// A Secret the spec names that does not exist is named first, before anything it holds up.
				if msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonSecretMissing); !strings.Contains(msg, tc.want) {
					t.Errorf("SecretMissing %q, want it to name %s", msg, tc.want)
				}
			} else {
				msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonSwitchoverPending)
				if !strings.Contains(msg, "SHOW REPLICAS on MAIN instance_0 could not be read") || !strings.Contains(msg, tc.want) {
					t.Errorf("SwitchoverPending %q, want it to say SHOW REPLICAS could not be read: %s", msg, tc.want)
				}
			}
			h.assertMains("instance_0")
			if w := h.boltWrites(); len(w) != 0 {
				t.Fatalf("writes without the proof: %q", w)
			}
			h.assertNoMisuse()
		})
	}
}

func TestCustomizeAsksForTheSecretsTheSpecNames(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	for _, tc := range []struct {
		name  string
		spec  map[string]any
		names []any
	}{
		{"the license alone", map[string]any{}, []any{"memgraph-secrets"}},
		{"spec.auth", map[string]any{"auth": map[string]any{"secretName": authSecret}}, []any{"memgraph-secrets", authSecret}},
		{"spec.tls and spec.auth", map[string]any{"auth": map[string]any{"secretName": authSecret},
			"tls": map[string]any{"secretName": boltSecret}}, []any{"memgraph-secrets", boltSecret, authSecret}},
		{"one Secret for both", map[string]any{"auth": map[string]any{"secretName": boltSecret},
			"tls": map[string]any{"secretName": boltSecret}}, []any{"memgraph-secrets", boltSecret}},
		{"the license in the TLS Secret", map[string]any{"secrets": map[string]any{"name": boltSecret},
			"tls": map[string]any{"secretName": boltSecret}}, []any{boltSecret}},
	} {
		parent := validParent()
		for k, v := range tc.spec {
			parent["spec"].(map[string]any)[k] = v
		}
		code, body := serve(t, handler, http.MethodPost, "/customize", mustJSON(t, map[string]any{"parent": parent}))
		if code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", tc.name, code, body)
		}
		var resp struct{ RelatedResources []map[string]any }
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"apiVersion": "v1", "resource": "secrets", "namespace": "default", "names": tc.names}
		if len(resp.RelatedResources) != 3 {
			t.Fatalf("%s: related rules %v, want the pods, the Secrets and the Nodes", tc.name, resp.RelatedResources)
		}
		if diff := cmp.Diff(want, resp.RelatedResources[1]); diff != "" {
			t.Errorf("%s: Secret rule (-want +got):\n%s", tc.name, diff)
		}
	}
}

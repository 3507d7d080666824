//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The token rotation docs/security.md gives, step by step: list the new token beside the old in
// accepted-tokens, let the hook re-read it, switch Metacontroller (key token, then a restart), drop
// the old token. The test Metacontroller keeps syncing a cluster throughout and no call is
// refused; before the switch it sends the old token, after it the new one, and in the end the
// old token is refused.
func TestTokenRotationWithoutARefusedCall(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]int{}
	s := startScenarioWith(t, "token-rotation", func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(probeHeader) == "" {
				mu.Lock()
				sent[r.Header.Get("Authorization")]++
				mu.Unlock()
			}
			next.ServeHTTP(w, r)
		})
	})
	restoreTokenSecret(t)
	const name = "rotated"
	s.create(name, "{}")
	s.waitConverged(name, convergeTimeout)
	oldToken := strings.TrimSpace(string(hookSecret(t, "memgraph-hooks-token", "token")))
	newToken := "rotated-" + strings.Repeat("0123456789", 4)

	patchTokenSecret(t, "accepted-tokens", oldToken+`\n`+newToken)
	s.project()
	s.creds.Reload()
	if code := s.callWithToken(newToken); code == http.StatusUnauthorized {
		t.Fatal("the new token listed beside the old is refused")
	}
	patchTokenSecret(t, "token", newToken)
	s.restartMetacontroller()
	s.patchSpec(name, `{"dataInstances": 3}`)
	s.waitConverged(name, convergeTimeout)
	patchTokenSecret(t, "accepted-tokens", newToken)
	s.project()
	s.creds.Reload()
	s.patchSpec(name, `{"dataInstances": 2}`)
	s.waitConverged(name, convergeTimeout)

	if strings.Contains(s.hookLog.String(), "refused an unauthenticated request") {
		t.Errorf("the hook refused a call of the test Metacontroller during the rotation:\n%s", s.hookLog.String())
	}
	if code := s.callWithToken(oldToken); code != http.StatusUnauthorized {
		t.Errorf("the old token, dropped from accepted-tokens, answered %d; want 401", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if sent["Bearer "+oldToken] == 0 || sent["Bearer "+newToken] == 0 || len(sent) != 2 {
		t.Errorf("calls by Authorization: old token %d, new token %d, %d kinds in all; want both tokens and nothing else",
			sent["Bearer "+oldToken], sent["Bearer "+newToken], len(sent))
	}
}

// probeHeader marks the test's own calls, which the Metacontroller's calls are counted without.
const probeHeader = "X-E2e-Probe"

// callWithToken posts an (empty) customize request to the scenario's hook with token and
// returns the status: 401 when the token is refused, 400 for the body once it is admitted.
func (s *scenario) callWithToken(token string) int {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, "https://"+hookHost+":443/customize", strings.NewReader(`{"parent":{}}`))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(probeHeader, "1")
	resp, err := s.hookClient().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// patchTokenSecret sets one key of memgraph-hooks-token as docs/security.md does, with kubectl
// patch and stringData (value may hold \n, which JSON reads as a newline).
func patchTokenSecret(t *testing.T, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	patch := fmt.Sprintf(`{"stringData":{"%s":"%s"}}`, key, value)
	if out, err := testEnv.Kubectl(ctx, "-n", hookNamespace, "patch", "secret", "memgraph-hooks-token", "--type", "merge", "-p", patch); err != nil {
		t.Fatalf("kubectl patch secret memgraph-hooks-token %s: %v\n%s", patch, err, out)
	}
}

// restoreTokenSecret puts memgraph-hooks-token back as it was when the test ends, so that the
// scenarios after it find a token Metacontroller sends and the hook accepts.
func restoreTokenSecret(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before, err := testEnv.Client.CoreV1().Secrets(hookNamespace).Get(ctx, "memgraph-hooks-token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cur, err := testEnv.Client.CoreV1().Secrets(hookNamespace).Get(ctx, "memgraph-hooks-token", metav1.GetOptions{})
		if err != nil {
			t.Errorf("restore memgraph-hooks-token: %v", err)
			return
		}
		cur.Data = before.Data
		if _, err := testEnv.Client.CoreV1().Secrets(hookNamespace).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Errorf("restore memgraph-hooks-token: %v", err)
		}
	})
}

// examples/install-with-mtls, as a user applies it: the hook demands a client certificate from
// the CA of memgraph-hooks-client-tls, and the test Metacontroller, following the kustomized
// CompositeController's clientTLS, presents that Secret's certificate on every call. A caller
// with the token but without a certificate is refused.
func TestMetacontrollerPresentsItsClientCertificate(t *testing.T) {
	installHookSecrets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := applyHookSecrets(ctx, "--only", "client-tls"); err != nil {
		t.Fatalf("go run ./cmd/memgraph-hooks-secrets --only client-tls | kubectl apply -f -: %v\n%s", err, out)
	}
	var mu sync.Mutex
	var calls, withoutCertificate int
	s := startScenarioOpts(t, "mtls", scenarioOptions{install: []string{"examples", "install-with-mtls"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get(probeHeader) == "" {
					mu.Lock()
					calls++
					// The hook verifies the certificate itself (against the client CA it re-reads), so
					// the connection shows the peer's certificate, not a verified chain.
					if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "metacontroller" {
						withoutCertificate++
					}
					mu.Unlock()
				}
				next.ServeHTTP(w, r)
			})
		}})
	if !s.creds.ClientCertRequired() {
		t.Fatal("the hook of examples/install-with-mtls does not demand client certificates")
	}
	s.create("mutual", "{}")
	s.declaredMembers(s.waitConverged("mutual", convergeTimeout), 3, 2)
	mu.Lock()
	if calls == 0 || withoutCertificate > 0 {
		t.Errorf("%d calls of the test Metacontroller, %d without its client certificate", calls, withoutCertificate)
	}
	mu.Unlock()
	if strings.Contains(s.hookLog.String(), "refused an unauthenticated request") {
		t.Errorf("the hook refused a call of the test Metacontroller:\n%s", s.hookLog.String())
	}
	token := strings.TrimSpace(string(hookSecret(t, "memgraph-hooks-token", "token")))
	if code := s.callWithToken(token); code != http.StatusUnauthorized {
		t.Errorf("a call with the token and no client certificate answered %d; want 401", code)
	}
}

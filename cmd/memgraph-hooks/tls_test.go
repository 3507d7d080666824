package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
)

const testToken = "cmd-test-token-0123456789abcdef"

// hookFiles writes a CA-signed serving pair for 127.0.0.1 and a token, and returns the flags
// that point at them and the CA to trust.
func hookFiles(t *testing.T) ([]string, *x509.CertPool) {
	t.Helper()
	ca, err := pki.NewAuthority("cmd test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Issue(pki.Leaf{CommonName: "hook", IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM, "token": []byte(testToken + "\n")}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	return []string{
		"--tls-cert-file", filepath.Join(dir, "tls.crt"), "--tls-key-file", filepath.Join(dir, "tls.key"),
		"--auth-token-file", filepath.Join(dir, "token"),
	}, roots
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// The binary's own path: with the TLS and token flags it serves HTTPS only, refuses a hook call
// without the token, answers one with it, keeps the probes open, and stops cleanly on SIGTERM.
func TestRunServesHTTPSAndDemandsTheToken(t *testing.T) {
	flags, roots := hookFiles(t)
	addr := freePort(t)
	done := make(chan error, 1)
	o, err := parseFlags(append([]string{"--listen", addr, "--metrics-listen", "", "--log-level", "error"}, flags...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- run(o) }()

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Get("https://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hook never answered over HTTPS: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	customize := `{"parent":{"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphCluster","metadata":{"name":"m","namespace":"d"}}}`
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"wrong-token-0123456789abcdef", http.StatusUnauthorized}, {testToken, http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/customize", strings.NewReader(customize))
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("token %q: %d, want %d", tc.token, resp.StatusCode, tc.want)
		}
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil && resp.StatusCode == http.StatusOK {
		t.Error("the hook also answered plain HTTP")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after SIGTERM")
	}
}

// A token without TLS works (for local debugging) but says loudly that it is readable on the
// wire; no credentials at all outside --simulate says the hook is open to anyone.
func TestInsecureConfigurationsWarnLoudly(t *testing.T) {
	flags, _ := hookFiles(t)
	tokenOnly := []string{flags[4], flags[5]}
	for _, tc := range []struct {
		name     string
		args     []string
		simulate bool
		want     string // "" means no warning
	}{
		{"token over plain HTTP", tokenOnly, false, "the bearer token crosses the network in plain text"},
		{"token over plain HTTP, simulated", tokenOnly, true, "the bearer token crosses the network in plain text"},
		{"nothing at all", nil, false, "the hook answers whoever reaches it"},
		{"nothing at all, simulated", nil, true, ""},
		{"HTTPS and a token", flags, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, nil))
			if _, err := o.security.load(logger, prometheus.NewRegistry(), tc.simulate); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && strings.Contains(logs.String(), "INSECURE"):
				t.Errorf("unexpected warning: %s", logs.String())
			case tc.want != "" && (!strings.Contains(logs.String(), tc.want) || !strings.Contains(logs.String(), `"level":"WARN"`)):
				t.Errorf("no warning %q: %s", tc.want, logs.String())
			}
			if strings.Contains(logs.String(), testToken) {
				t.Errorf("the token is in the log: %s", logs.String())
			}
		})
	}
}

func TestSecurityFlags(t *testing.T) {
	flags, _ := hookFiles(t)
	o, err := parseFlags(append([]string{"--metrics-auth", "--client-ca-file", flags[1], "--credentials-reload-interval", "2s"}, flags...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.security.protectMetrics || o.security.tokenFile == "" || o.security.clientCAFile == "" || o.security.reloadInterval != 2*time.Second {
		t.Errorf("flags parsed into %+v", o.security)
	}
	for _, bad := range [][]string{
		{"--metrics-auth"},
		{"--credentials-reload-interval", "0s"},
		{"--tls-cert-file", flags[1]},
		{"--client-ca-file", flags[1]},
	} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
	for _, bad := range [][]string{
		{"--auth-token-file", filepath.Join(t.TempDir(), "missing")},
	} {
		o, err := parseFlags(bad, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.security.load(slog.New(slog.DiscardHandler), prometheus.NewRegistry(), false); err == nil {
			t.Errorf("%q: loaded", bad)
		}
	}
}

package hooks_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// blockingConnector holds every SHOW INSTANCES until released: a sync in flight.
type blockingConnector struct {
	entered chan struct{}
	release chan struct{}
}

func newBlockingConnector() *blockingConnector {
	return &blockingConnector{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (b *blockingConnector) Client(address string) memgraph.Client {
	return blockingClient{deadClient: deadClient{address}, b: b}
}

type blockingClient struct {
	deadClient
	b *blockingConnector
}

func (c blockingClient) ShowInstances(ctx context.Context) ([]memgraph.Instance, error) {
	c.b.entered <- struct{}{}
	select {
	case <-c.b.release:
	case <-ctx.Done():
	}
	return nil, c.err()
}

// hookPKI is a CA and what it signs for a hook served on 127.0.0.1.
type hookPKI struct {
	ca    *pki.Authority
	roots *x509.CertPool
}

func newHookPKI(t *testing.T) hookPKI {
	t.Helper()
	ca, err := pki.NewAuthority("hook CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	return hookPKI{ca: ca, roots: roots}
}

func (p hookPKI) serving(t *testing.T) pki.Pair {
	t.Helper()
	pair, err := p.ca.Issue(pki.Leaf{CommonName: "hook", IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

func (p hookPKI) client(t *testing.T, server bool) tls.Certificate {
	t.Helper()
	pair, err := p.ca.Issue(pki.Leaf{CommonName: "metacontroller", Client: !server, Server: server, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// writeAtomically replaces a file the way the kubelet updates a mounted Secret: the new content
// appears at once, never half-written.
func writeAtomically(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

type credentialDir struct {
	dir                            string
	cert, key, clientCA, tokenFile string
}

func newCredentialDir(t *testing.T) credentialDir {
	d := t.TempDir()
	return credentialDir{dir: d, cert: filepath.Join(d, "tls.crt"), key: filepath.Join(d, "tls.key"),
		clientCA: filepath.Join(d, "client-ca.crt"), tokenFile: filepath.Join(d, "token")}
}

func (d credentialDir) writePair(t *testing.T, p pki.Pair) {
	writeAtomically(t, d.cert, p.CertPEM)
	writeAtomically(t, d.key, p.KeyPEM)
}

// newServingDir is a CA and a credential directory holding a serving pair it signed.
func newServingDir(t *testing.T) (hookPKI, credentialDir, pki.Pair) {
	t.Helper()
	p, d := newHookPKI(t), newCredentialDir(t)
	pair := p.serving(t)
	d.writePair(t, pair)
	return p, d, pair
}

// served runs handler over HTTPS with creds' TLS configuration, as the hook's main does.
func served(t *testing.T, creds *serving.Credentials, handler http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, TLSConfig: creds.TLSConfig(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go creds.Run(ctx)
	return "https://" + ln.Addr().String()
}

// httpsClient trusts roots, presents certs and opens a new connection per request.
func httpsClient(roots *x509.CertPool, certs ...tls.Certificate) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12},
	}}
}

func post(c *http.Client, url, token, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp, out, err
}

func servedSerial(t *testing.T, c *http.Client, url string) *big.Int {
	t.Helper()
	resp, err := c.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.TLS.PeerCertificates[0].SerialNumber
}

// A renewed serving certificate takes effect on new connections without a restart, while a sync
// in flight on a connection made with the old one finishes normally, and requests running all
// along never fail.
func TestCertificateRotationKeepsSyncsInFlight(t *testing.T) {
	p := newHookPKI(t)
	d := newCredentialDir(t)
	first, second := p.serving(t), p.serving(t)
	d.writePair(t, first)
	writeAtomically(t, d.tokenFile, []byte(goodToken+"\n"))
	creds, err := serving.LoadCredentials(serving.CredentialFiles{CertFile: d.cert, KeyFile: d.key, TokenFile: d.tokenFile, Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	blocker := newBlockingConnector()
	url := served(t, creds, hooks.NewHandler(hooks.Config{Connector: blocker, Token: creds.Tokens(), SyncBudget: 30 * time.Second}))
	client := httpsClient(p.roots)
	if got := servedSerial(t, client, url); got.Cmp(first.Cert.SerialNumber) != 0 {
		t.Fatalf("serving serial %v, want the first certificate's %v", got, first.Cert.SerialNumber)
	}

	inFlight := make(chan error, 1)
	go func() {
		resp, body, err := post(client, url+"/sync", goodToken, readySyncBody(t))
		switch {
		case err != nil:
			inFlight <- err
		case resp.StatusCode != http.StatusOK:
			inFlight <- fmt.Errorf("status %d: %s", resp.StatusCode, body)
		case resp.TLS.PeerCertificates[0].SerialNumber.Cmp(first.Cert.SerialNumber) != 0:
			inFlight <- errors.New("the in-flight sync's connection changed certificate")
		default:
			inFlight <- nil
		}
	}()
	<-blocker.entered // the sync is inside the hook, dialling

	load := runLoad(t, func() error {
		resp, body, err := post(client, url+"/customize", goodToken, mustJSON(t, map[string]any{"parent": validParent()}))
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		return nil
	})
	d.writePair(t, second)
	eventuallyTrue(t, "the renewed certificate is served", func() bool {
		return servedSerial(t, client, url).Cmp(second.Cert.SerialNumber) == 0
	})
	close(blocker.release)
	if err := <-inFlight; err != nil {
		t.Errorf("the sync in flight during the rotation: %v", err)
	}
	if n, errs := load(); len(errs) > 0 || n == 0 {
		t.Errorf("%d requests during the rotation, failures: %v", n, errs)
	}
}

// runLoad repeats do on two goroutines until the returned stop is called, which reports how many
// ran and what failed.
func runLoad(t *testing.T, do func() error) (stop func() (int64, []error)) {
	t.Helper()
	var n atomic.Int64
	var mu sync.Mutex
	var errs []error
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := do(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
				n.Add(1)
			}
		}()
	}
	return func() (int64, []error) {
		close(done)
		wg.Wait()
		return n.Load(), errs
	}
}

func eventuallyTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A new token in the file takes over without a restart: from the switch on, the old token is
// refused and the new one admitted, never the other way round; a sync admitted with the old
// token finishes; a file that turns unusable leaves the current token in force.
func TestTokenRotationWhileRequestsRun(t *testing.T) {
	p, d, _ := newServingDir(t)
	oldToken, newToken := goodToken, "rotated-token-"+strings.Repeat("9", 30)
	writeAtomically(t, d.tokenFile, []byte(oldToken))
	reg := prometheus.NewRegistry()
	var logs syncedBuffer
	creds, err := serving.LoadCredentials(serving.CredentialFiles{CertFile: d.cert, KeyFile: d.key, TokenFile: d.tokenFile,
		Interval: 10 * time.Millisecond, Registerer: reg, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	blocker := newBlockingConnector()
	url := served(t, creds, hooks.NewHandler(hooks.Config{Connector: blocker, Token: creds.Tokens(), SyncBudget: 30 * time.Second}))
	client := httpsClient(p.roots)

	inFlight := make(chan int, 1)
	go func() {
		resp, _, err := post(client, url+"/sync", oldToken, readySyncBody(t))
		if err != nil {
			inFlight <- 0
			return
		}
		inFlight <- resp.StatusCode
	}()
	<-blocker.entered

	customize := mustJSON(t, map[string]any{"parent": validParent()})
	// Each token's answers must switch at most once, in the right direction: no request sent
	// after an answer showed the switch gets the old answer again. (Requests run concurrently,
	// so one sent before the switch may still answer after another showed it.)
	watch := func(token string, before, after int) func() error {
		var clock, switchedAt atomic.Int64 // switchedAt: the tick the first new answer arrived
		return func() error {
			sent := clock.Add(1)
			resp, body, err := post(client, url+"/customize", token, customize)
			if err != nil {
				return err
			}
			switch at := switchedAt.Load(); {
			case resp.StatusCode == after:
				switchedAt.CompareAndSwap(0, clock.Add(1))
			case resp.StatusCode == before && at != 0 && sent > at:
				return fmt.Errorf("got %d again after switching to %d", before, after)
			case resp.StatusCode != before:
				return fmt.Errorf("status %d: %s", resp.StatusCode, body)
			}
			return nil
		}
	}
	stopOld := runLoad(t, watch(oldToken, http.StatusOK, http.StatusUnauthorized))
	stopNew := runLoad(t, watch(newToken, http.StatusUnauthorized, http.StatusOK))
	writeAtomically(t, d.tokenFile, []byte(newToken+"\n"))
	eventuallyTrue(t, "the new token is admitted", func() bool {
		resp, _, err := post(client, url+"/customize", newToken, customize)
		return err == nil && resp.StatusCode == http.StatusOK
	})
	close(blocker.release)
	if code := <-inFlight; code != http.StatusOK {
		t.Errorf("the sync admitted with the old token answered %d", code)
	}
	for name, stop := range map[string]func() (int64, []error){"old token": stopOld, "new token": stopNew} {
		if n, errs := stop(); len(errs) > 0 || n == 0 {
			t.Errorf("%s: %d requests, failures: %v", name, n, errs)
		}
	}
	if resp, _, _ := post(client, url+"/customize", oldToken, customize); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old token after rotation: %d, want 401", resp.StatusCode)
	}

	writeAtomically(t, d.tokenFile, []byte("  \n"))
	eventuallyTrue(t, "the unusable token file is reported", func() bool {
		return strings.Contains(logs.String(), "keeping the previous credential")
	})
	if resp, _, _ := post(client, url+"/customize", newToken, customize); resp.StatusCode != http.StatusOK {
		t.Errorf("after the token file was emptied, the token in force answered %d, want 200", resp.StatusCode)
	}
	if strings.Contains(logs.String(), oldToken) || strings.Contains(logs.String(), newToken) {
		t.Errorf("a token appears in the log:\n%s", logs.String())
	}
	for result, want := range map[string]float64{"ok": 1, "error": 1} {
		if got := credentialReloads(t, reg, "auth_token", result); got != want {
			t.Errorf("auth_token reloads %s = %v, want %v", result, got, want)
		}
	}
}

// The rotation docs/security.md gives: the file lists the old and the new token, Metacontroller
// switches to the new one, the old one is removed. A client that switches tokens in the middle,
// as Metacontroller does, is never refused; afterwards the old token is.
func TestTwoTokensRotateWithoutARefusal(t *testing.T) {
	p, d, _ := newServingDir(t)
	oldToken, newToken := goodToken, "rotated-token-"+strings.Repeat("7", 30)
	writeAtomically(t, d.tokenFile, []byte(oldToken+"\n"))
	creds, err := serving.LoadCredentials(serving.CredentialFiles{CertFile: d.cert, KeyFile: d.key, TokenFile: d.tokenFile,
		Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url := served(t, creds, hooks.NewHandler(hooks.Config{Connector: newBlockingConnector(), Token: creds.Tokens()}))
	client := httpsClient(p.roots)
	customize := mustJSON(t, map[string]any{"parent": validParent()})
	status := func(token string) int {
		resp, _, err := post(client, url+"/customize", token, customize)
		if err != nil {
			return 0
		}
		return resp.StatusCode
	}
	var current atomic.Pointer[string]
	var oldDropped atomic.Bool // set before the file stops listing the old token
	current.Store(&oldToken)
	stop := runLoad(t, func() error {
		token := *current.Load()
		code := status(token)
		// A call sent with the old token just before the switch may arrive after the file
		// dropped it, as Metacontroller's last calls before its restart could: not a gap.
		// A transport error (code 0) on this loaded machine is no refusal either.
		if code != http.StatusOK && code != 0 && (token != oldToken || !oldDropped.Load()) {
			return fmt.Errorf("the token the client holds answered %d", code)
		}
		return nil
	})

	writeAtomically(t, d.tokenFile, []byte(oldToken+"\n"+newToken+"\n"))
	eventuallyTrue(t, "the new token is admitted beside the old", func() bool { return status(newToken) == http.StatusOK })
	current.Store(&newToken)
	oldDropped.Store(true)
	writeAtomically(t, d.tokenFile, []byte(newToken+"\n"))
	eventuallyTrue(t, "the old token is refused", func() bool { return status(oldToken) == http.StatusUnauthorized })
	if n, errs := stop(); len(errs) > 0 || n == 0 {
		t.Errorf("%d requests during the rotation, refusals: %v", n, errs)
	}
}

type syncedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func credentialReloads(t *testing.T, reg *prometheus.Registry, credential, result string) float64 {
	return metricValue(t, reg, "memgraph_hooks_credential_reloads_total", map[string]string{"credential": credential, "result": result})
}

// With a client CA, a client certificate from that CA is admitted; none gets 401 on the hooks
// (probes stay open); one from another CA, or not made for client use, fails the handshake.
func TestMutualTLS(t *testing.T) {
	p, clients, strangers := newHookPKI(t), newHookPKI(t), newHookPKI(t)
	d := newCredentialDir(t)
	d.writePair(t, p.serving(t))
	writeAtomically(t, d.clientCA, clients.ca.CertPEM)
	creds, err := serving.LoadCredentials(serving.CredentialFiles{CertFile: d.cert, KeyFile: d.key, ClientCAFile: d.clientCA})
	if err != nil {
		t.Fatal(err)
	}
	url := served(t, creds, hooks.NewHandler(hooks.Config{Connector: unreachable{}, ClientCertRequired: creds.ClientCertRequired()}))
	customize := mustJSON(t, map[string]any{"parent": validParent()})

	resp, body, err := post(httpsClient(p.roots, clients.client(t, false)), url+"/customize", "", customize)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("a client certificate from the client CA: %v %v %s", err, resp, body)
	}
	anonymous := httpsClient(p.roots)
	if resp, _, err := post(anonymous, url+"/customize", "", customize); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no client certificate on /customize: %v %v, want 401", err, resp)
	}
	if resp, err := anonymous.Get(url + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("no client certificate on /healthz: %v %v, want 200", err, resp)
	} else {
		resp.Body.Close()
	}
	for name, cert := range map[string]tls.Certificate{
		"from another CA":             strangers.client(t, false),
		"not for client use (server)": clients.client(t, true),
	} {
		if _, _, err := post(httpsClient(p.roots, cert), url+"/customize", "", customize); err == nil {
			t.Errorf("a client certificate %s was accepted", name)
		}
	}
}

// Misconfigured files stop the hook at start with a message naming the file and the problem,
// never the content.
func TestLoadCredentialsNamesTheProblem(t *testing.T) {
	p, d, pair := newServingDir(t)
	other := p.serving(t)
	mismatched := filepath.Join(d.dir, "other.key")
	writeAtomically(t, mismatched, other.KeyPEM)
	bad := func(name, content string) string {
		path := filepath.Join(d.dir, name)
		writeAtomically(t, path, []byte(content))
		return path
	}
	for _, tc := range []struct {
		name  string
		files serving.CredentialFiles
		want  string
	}{
		{"certificate without key", serving.CredentialFiles{CertFile: d.cert}, "both a certificate file and a key file"},
		{"client CA without HTTPS", serving.CredentialFiles{ClientCAFile: d.cert}, "need HTTPS"},
		{"missing key file", serving.CredentialFiles{CertFile: d.cert, KeyFile: filepath.Join(d.dir, "nope")}, "nope"},
		{"key of another certificate", serving.CredentialFiles{CertFile: d.cert, KeyFile: mismatched}, "private key does not match public key"},
		{"client CA without a certificate", serving.CredentialFiles{CertFile: d.cert, KeyFile: d.key, ClientCAFile: bad("ca", "nothing")}, "holds no PEM-encoded certificate"},
		{"empty token", serving.CredentialFiles{TokenFile: bad("t1", "\n")}, "t1: is empty"},
		{"token with a space", serving.CredentialFiles{TokenFile: bad("t2", "two words-0123456789abcdef")}, "cannot carry"},
		{"short token", serving.CredentialFiles{TokenFile: bad("t3", "abc123")}, "shorter than 16"},
		{"short second token", serving.CredentialFiles{TokenFile: bad("t4", goodToken+"\n\nabc123\n")}, "t4: line 3 holds a token shorter than 16"},
		{"nine tokens", serving.CredentialFiles{TokenFile: bad("t5", strings.Repeat(goodToken+"\n", 9))}, "lists 9 tokens, more than 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := serving.LoadCredentials(tc.files)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.want)
			}
			for _, secret := range [][]byte{pair.KeyPEM[40:80], other.KeyPEM[40:80], []byte("two words")} {
				if bytes.Contains([]byte(err.Error()), secret) {
					t.Errorf("the error quotes the file's content: %v", err)
				}
			}
		})
	}
}

func TestServingCertificateExpiryIsExported(t *testing.T) {
	_, d, pair := newServingDir(t)
	reg := prometheus.NewRegistry()
	if _, err := serving.LoadCredentials(serving.CredentialFiles{CertFile: d.cert, KeyFile: d.key, Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	name := "memgraph_hooks_serving_certificate_expiry_timestamp_seconds"
	if got := int64(metricValue(t, reg, name, nil)); got != pair.Cert.NotAfter.Unix() {
		t.Errorf("%s = %d, want %d", name, got, pair.Cert.NotAfter.Unix())
	}
}

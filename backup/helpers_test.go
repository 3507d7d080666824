package backup_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
)

const (
	agentHost = "memgraph-data-0.memgraph-data.db.svc.cluster.local"
	bucket    = "backups"
)

// store is an in-process S3 server holding one bucket; puts counts the object PUTs it served.
type store struct {
	endpoint string
	puts     atomic.Int64
}

func newStore(t *testing.T) *store {
	t.Helper()
	mem := s3mem.New()
	if err := mem.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	s := &store{}
	fake := gofakes3.New(mem).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			s.puts.Add(1)
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.endpoint = strings.TrimPrefix(srv.URL, "http://")
	return s
}

func (s *store) object(key string) backup.S3Object {
	return backup.S3Object{Endpoint: s.endpoint, Bucket: bucket, Key: key, Region: "us-east-1", Insecure: true}
}

var creds = backup.S3Credentials{AccessKeyID: "test", SecretAccessKey: "test-secret"}

// tokens is a rotatable TokenSource.
type tokens struct {
	mu sync.Mutex
	t  []string
}

func (s *tokens) set(t ...string) { s.mu.Lock(); s.t = t; s.mu.Unlock() }

func (s *tokens) Tokens() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.t))
	for i, t := range s.t {
		out[i] = []byte(t)
	}
	return out
}

// agentFixture is an agent serving HTTPS on loopback under agentHost's certificate, its
// snapshot directory, and a client that reaches agentHost there.
type agentFixture struct {
	dir    string
	addr   string // the advertised address, agentHost:port
	tokens *tokens
	tls    backup.AgentTLS
	client *backup.AgentClient
}

func newAgent(t *testing.T) *agentFixture {
	t.Helper()
	f := &agentFixture{dir: filepath.Join(t.TempDir(), "snapshots"), tokens: &tokens{t: []string{"s3cret"}}}
	if err := os.Mkdir(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.tls, err = backup.NewAgentTLS([]string{agentHost}); err != nil {
		t.Fatal(err)
	}
	agent, err := backup.NewAgent(backup.AgentConfig{SnapshotDir: f.dir, Tokens: f.tokens})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(agent.Handler())
	cert, err := tlsKeyPair(f.tls)
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = cert
	srv.StartTLS()
	t.Cleanup(func() { srv.Close(); agent.Close() })
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	f.addr = net.JoinHostPort(agentHost, port)
	f.client = f.newClient(t, "s3cret")
	return f
}

func (f *agentFixture) newClient(t *testing.T, token string) *backup.AgentClient {
	t.Helper()
	loopback := f.addr
	c, err := backup.NewAgentClient(backup.AgentClientConfig{Token: token, CAPEM: f.tls.CA, Resolve: func(a string) string {
		if a == loopback {
			_, port, _ := net.SplitHostPort(a)
			return net.JoinHostPort("127.0.0.1", port)
		}
		return a
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// snapshot writes a snapshot file of size bytes and returns its path.
func (f *agentFixture) snapshot(t *testing.T, name string, size int) (string, []byte) {
	t.Helper()
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// raw sends req to the agent with token over a client that trusts the agent's CA.
func (f *agentFixture) raw(t *testing.T, req *http.Request, token string) (int, string) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.tls.CA)
	_, port, _ := net.SplitHostPort(f.addr)
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: agentHost},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		},
	}}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct{ Error string }
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return resp.StatusCode, e.Error
	}
	return resp.StatusCode, string(b)
}

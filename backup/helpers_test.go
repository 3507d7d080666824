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
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/internal/s3test"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

const (
	agentHost = "memgraph-data-0.memgraph-data.db.svc.cluster.local"
	bucket    = "backups"
)

// store is an in-process S3 store holding one bucket (internal/s3test: it verifies the CRC32C
// every upload carries and reports it back), over HTTPS with a CA of its own or plain HTTP.
type store struct {
	*s3test.Server
	endpoint string
	ca       []byte
}

func newStore(t *testing.T) *store {
	t.Helper()
	return newStoreOn(t, true)
}

// newStoreOn is a store over HTTPS, or plain HTTP (Endpoint http://…) when https is false.
func newStoreOn(t *testing.T, https bool, opts ...s3test.Option) *store {
	t.Helper()
	if https {
		opts = append(opts, s3test.WithTLS())
	}
	srv := s3test.New(t, []string{bucket}, opts...)
	return &store{Server: srv, endpoint: srv.URL, ca: srv.CAPEM}
}

func (s *store) object(key string) backup.S3Object {
	return backup.S3Object{Endpoint: s.endpoint, Bucket: bucket, Key: key, Region: "us-east-1", CAPEM: s.ca}
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

// agentFixture is an agent serving HTTPS on loopback under agentHost's certificate beside a
// simulated data instance (agentHost, with its data directory), and a client that reaches
// agentHost there.
type agentFixture struct {
	world   *sim.World
	dataDir string
	addr    string // the advertised address, agentHost:port
	tokens  *tokens
	tls     backup.AgentTLS
	client  *backupcontroller.AgentClient
	agent   *backup.Agent
	pool    *bolt.Pool
}

// newAgent is an agent beside a fresh data instance (a standalone MAIN) whose snapshots cost
// what cost says.
func newAgent(t *testing.T, cost sim.SnapshotCost) *agentFixture {
	t.Helper()
	return newAgentWithUser(t, cost, nil)
}

// newAgentWithUser is newAgent beside an instance that has user (nil: no users).
func newAgentWithUser(t *testing.T, cost sim.SnapshotCost, user *sim.Auth) *agentFixture {
	t.Helper()
	world := sim.NewWorld(sim.WithSnapshotCost(cost))
	t.Cleanup(world.Close)
	f := &agentFixture{world: world, dataDir: filepath.Join(t.TempDir(), "data"), tokens: &tokens{t: []string{"s3cret"}}}
	if err := world.StartData(sim.DataSpec{Host: agentHost, BoltPort: 7687, ManagementPort: 10000, DataDir: f.dataDir, Auth: user}); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.tls, err = backup.NewAgentTLS([]string{agentHost}); err != nil {
		t.Fatal(err)
	}
	f.pool = bolt.NewPool(bolt.PoolOptions{Resolver: world})
	t.Cleanup(func() { _ = f.pool.Close() })
	f.start(t, f.pool)
	f.client = f.newClient(t, "s3cret")
	return f
}

// start serves a new agent (the previous one, if any, is gone: a restarted container).
func (f *agentFixture) start(t *testing.T, pool *bolt.Pool) {
	t.Helper()
	agent, err := backup.NewAgent(backup.AgentConfig{
		SnapshotDir: filepath.Join(f.dataDir, "snapshots"), Tokens: f.tokens, RetryInterval: 20 * time.Millisecond,
		Memgraph: backup.SnapshotsVia(pool.Snapshots),
	})
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
	if f.agent != nil {
		f.agent.Close()
	}
	f.agent = agent
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	f.addr = net.JoinHostPort(agentHost, port)
}

// mg is the job's target: the fixture's instance.
var mg = backup.MemgraphTarget{Address: agentHost + ":7687"}

func (f *agentFixture) newClient(t *testing.T, token string) *backupcontroller.AgentClient {
	t.Helper()
	c, err := backupcontroller.NewAgentClient(backupcontroller.AgentClientConfig{Token: token, CAPEM: f.tls.CA, Resolve: func(a string) string {
		if host, port, _ := net.SplitHostPort(a); host == agentHost {
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

// write commits n transactions on database db of the fixture's instance, over Bolt.
func (f *agentFixture) write(t *testing.T, db string, n int) {
	t.Helper()
	ctx := context.Background()
	drv, err := neo4j.NewDriverWithContext("bolt://"+f.world.Resolve(mg.Address), neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(ctx)
	for range n {
		if _, err := neo4j.ExecuteQuery(ctx, drv, "CREATE (n)", nil, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(db)); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotClient is a SnapshotClient of the fixture's instance.
func (f *agentFixture) snapshotClient(t *testing.T) memgraph.SnapshotClient {
	t.Helper()
	return f.pool.Snapshots(mg.Address, nil, memgraph.Credentials{})
}

// queries are the texts the instance received, failed ones with their message.
func (f *agentFixture) queries() []string {
	var out []string
	for _, q := range f.world.Queries() {
		if q.Failed {
			out = append(out, q.Text+" -> "+q.Message)
			continue
		}
		out = append(out, q.Text)
	}
	return out
}

// count is how many received queries start with prefix.
func (f *agentFixture) count(prefix string) int {
	n := 0
	for _, q := range f.queries() {
		if strings.HasPrefix(q, prefix) {
			n++
		}
	}
	return n
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

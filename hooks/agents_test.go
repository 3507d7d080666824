package hooks_test

import (
	"crypto/tls"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const agentToken = "agent-token-0123456789abcdef"

type staticTokens [][]byte

func (s staticTokens) Tokens() [][]byte { return s }

// agentFarm is the real backup agent of every data pod of one simulated cluster: one HTTPS
// listener with the cluster's agent certificate, routed by the advertised host, each agent
// beside its instance (its snapshot directory under root, its Bolt through pool).
type agentFarm struct {
	t        testing.TB
	root     string
	pool     *bolt.Pool
	material backup.AgentTLS
	addr     string

	mu     sync.Mutex
	agents map[string]*backup.Agent // by host
}

func newAgentFarm(t testing.TB, n topology.Network, root string, pool *bolt.Pool) *agentFarm {
	t.Helper()
	f := &agentFarm{t: t, root: root, pool: pool, agents: map[string]*backup.Agent{}}
	var err error
	if f.material, err = backup.NewAgentTLS(n.BackupAgentDNSNames()); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(f.material.Cert, f.material.Key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		host, _, _ := net.SplitHostPort(req.Host)
		f.agent(host).Handler().ServeHTTP(w, req)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	f.addr = srv.Listener.Addr().String()
	t.Cleanup(func() {
		srv.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, a := range f.agents {
			a.Close()
		}
	})
	return f
}

// agent is host's agent, started on first use.
func (f *agentFarm) agent(host string) *backup.Agent {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.agents[host]; ok {
		return a
	}
	a, err := backup.NewAgent(backup.AgentConfig{SnapshotDir: filepath.Join(f.root, host, "snapshots"), Tokens: staticTokens{[]byte(agentToken)},
		Memgraph: backup.SnapshotsVia(f.pool.Snapshots), RetryInterval: 10 * time.Millisecond})
	if err != nil {
		f.t.Fatal(err)
	}
	f.agents[host] = a
	return a
}

// restart replaces host's agent with a new one, which knows no job (its container restarted).
func (f *agentFarm) restart(host string) {
	f.mu.Lock()
	a := f.agents[host]
	delete(f.agents, host)
	f.mu.Unlock()
	if a != nil {
		a.Close()
	}
}

// resolver routes every agent address to the farm.
func (f *agentFarm) resolver() memgraph.Resolver {
	return memgraph.ResolverFunc(func(address string) string {
		if strings.HasSuffix(address, ":8443") {
			return f.addr
		}
		return address
	})
}

// secretData is the cluster's backup-agent Secret data: the farm's material and token.
func (f *agentFarm) secretData(*topology.Cluster) (map[string]string, error) {
	enc := base64.StdEncoding.EncodeToString
	return map[string]string{topology.BackupAgentTokenKey: enc([]byte(agentToken)), topology.BackupAgentCertKey: enc(f.material.Cert),
		topology.BackupAgentKeyKey: enc(f.material.Key), topology.BackupAgentCAKey: enc(f.material.CA)}, nil
}

// newHarnessWithAgents is a harness whose data instances have data directories and the real
// backup agents of an agentFarm, whose hook reaches them and hands out their Secret, on the wall
// clock (an agent's job deadline is wall-clock time).
func newHarnessWithAgents(t *testing.T, coordinators, data int, opts ...harnessOption) (*harness, *agentFarm) {
	t.Helper()
	var farm *agentFarm
	opts = append(opts, func(c *harnessConfig) {
		c.hook.AgentResolver = memgraph.ResolverFunc(func(address string) string { return farm.resolver().Resolve(address) })
		c.hook.AgentSecretData = func(cl *topology.Cluster) (map[string]string, error) { return farm.secretData(cl) }
		c.hook.Now = time.Now
	})
	h := newHarness(t, coordinators, data, opts...)
	h.dataRoot = t.TempDir()
	farm = newAgentFarm(t, h.network(), h.dataRoot, h.pool)
	return h, farm
}

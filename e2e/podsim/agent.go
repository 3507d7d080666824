package podsim

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A data Pod's volume: each data instance gets a directory of its own under the Pods' data root
// (its --data-directory, where the simulator writes snapshots), kept while its claims exist:
// a restart on the same claims finds it, a wipe (fresh claims) empties its snapshots
// (sim.World.Wipe), and removal deletes it.
// Pods without a data root (built by hand in tests) leave the directory to the World ("").
func (p *Pods) dataDir(host string) string {
	if p.dataRoot == "" {
		return ""
	}
	return filepath.Join(p.dataRoot, host)
}

// agentPool is the Bolt pool every agent reaches its pod's Memgraph through: the World, which
// resolves a pod's advertised address to its instance. Caller holds p.mu.
func (p *Pods) agentPool() *bolt.Pool {
	if p.pool == nil {
		p.pool = bolt.NewPool(bolt.PoolOptions{Resolver: p.World})
	}
	return p.pool
}

// podAgent is the real backup agent (package backup) serving for one data Pod, as its
// backup-agent container would, on a loopback port that the World resolves the Pod's
// <host>:<backup-agent port> to.
type podAgent struct {
	podUID     types.UID
	advertised string
	agent      *backup.Agent
	srv        *http.Server
}

// ensureAgent runs the agent of a data Pod whose template has the backup-agent container: with
// the token and serving pair read from the Secret behind the container's own files, and the
// instance's snapshot directory. A Pod without the Secret gets no agent (the kubelet could not
// start the container); the next reconcile tries again. Caller holds p.mu.
func (p *Pods) ensureAgent(pod *corev1.Pod, host string) {
	c, port, ok := agentContainer(pod)
	if !ok {
		return
	}
	if a := p.agents[host]; a != nil {
		if a.podUID == pod.UID {
			return
		}
		p.stopAgent(host)
	}
	a, err := p.startAgent(pod, c, host, port)
	if err != nil {
		p.record(host, "backup agent not started: "+err.Error())
		return
	}
	p.agents[host] = a
	p.record(host, "backup agent serving")
}

func agentContainer(pod *corev1.Pod) (corev1.Container, int32, bool) {
	for _, c := range pod.Spec.Containers {
		if c.Name != topology.BackupAgentContainer {
			continue
		}
		for _, port := range c.Ports {
			if port.Name == topology.PortNameBackupAgent {
				return c, port.ContainerPort, true
			}
		}
	}
	return corev1.Container{}, 0, false
}

func (p *Pods) startAgent(pod *corev1.Pod, c corev1.Container, host string, port int32) (*podAgent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	files := map[string][]byte{}
	for _, flag := range []string{"--tls-cert-file", "--tls-key-file", "--auth-token-file"} {
		path := flagValue(c.Args, flag)
		if path == "" {
			return nil, fmt.Errorf("container %s has no %s", c.Name, flag)
		}
		data, err := p.mountedSecretFile(ctx, pod, c, path)
		if err != nil {
			return nil, err
		}
		files[flag] = data
	}
	pair, err := tls.X509KeyPair(files["--tls-cert-file"], files["--tls-key-file"])
	if err != nil {
		return nil, fmt.Errorf("backup agent certificate and key: %w", err)
	}
	agent, err := backup.NewAgent(backup.AgentConfig{
		SnapshotDir: filepath.Join(p.dataDir(host), "snapshots"),
		Tokens:      staticTokens{bytes.TrimSpace(files["--auth-token-file"])},
		// The pod's own Memgraph, as the agent's loopback dial reaches it in a pod.
		Memgraph: backup.SnapshotsVia(p.agentPool().Snapshots),
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		agent.Close()
		return nil, err
	}
	srv := &http.Server{Handler: agent.Handler(), ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	a := &podAgent{podUID: pod.UID, advertised: net.JoinHostPort(host, strconv.Itoa(int(port))), agent: agent, srv: srv}
	p.World.AddAddress(a.advertised, ln.Addr().String())
	return a, nil
}

// stopAgent stops a Pod's agent (its Pod is gone or replaced). Caller holds p.mu.
func (p *Pods) stopAgent(host string) {
	a := p.agents[host]
	if a == nil {
		return
	}
	delete(p.agents, host)
	p.World.RemoveAddress(a.advertised)
	_ = a.srv.Close()
	a.agent.Close()
	p.record(host, "backup agent stopped")
}

// removeDataDir deletes a removed instance's directory. Caller holds p.mu.
func (p *Pods) removeDataDir(host string) {
	if p.dataRoot == "" {
		return
	}
	if err := os.RemoveAll(p.dataDir(host)); err != nil {
		p.record(host, "removing the data directory failed: "+err.Error())
	}
}

type staticTokens struct{ token []byte }

func (s staticTokens) Tokens() [][]byte { return [][]byte{s.token} }

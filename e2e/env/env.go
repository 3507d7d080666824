// Package env starts a real Kubernetes control plane on 127.0.0.1 for the e2e suite: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok (which fakes a Node and makes
// Pods Running/Ready and PVCs Bound without a kubelet). Binaries come from e2e/tools/build.sh;
// certificates are a throwaway CA made with crypto/x509. Everything is stopped by PID.
package env

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// firstServiceIP is the API server's own ClusterIP, the first address of serviceCIDR: a /16,
// room for the ClusterIP Services of thousands of MemgraphClusters (three each; make load).
const (
	serviceCIDR    = "10.0.0.0/16"
	firstServiceIP = "10.0.0.1"
	podCIDR        = "10.244.0.1/16"
	// NodeName is the single fake Node that kwok manages.
	NodeName = "kwok-node-0"
)

// Options configure Start.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok.
	BinDir string
	// StageDir is kwok's kustomize/stage directory (copied next to BinDir by build.sh).
	StageDir string
	// Dir is the working directory (certificates, data, logs); created when empty.
	Dir string
	// ObjectStoreBinary is versitygw, started by Env.ObjectStore on first use; empty: none.
	ObjectStoreBinary string
	// Logf receives progress lines.
	Logf func(format string, args ...any)
}

// Env is a running control plane.
type Env struct {
	Dir        string
	LogDir     string
	Kubeconfig string
	BinDir     string
	Config     *rest.Config
	Client     kubernetes.Interface
	Dynamic    dynamic.Interface

	// procsMu guards procs and stopping: a controller's supervisor replaces its process from a
	// goroutine of its own.
	procsMu   sync.Mutex
	procs     []*process
	stopping  bool
	apiserver *process
	// apiserverArgs are the API server's flags, for RestartAPIServer; restarts counts them.
	apiserverArgs []string
	restarts      int
	// controllers are kube-controller-manager, kube-scheduler and kwok, for RestartControllers;
	// ctrlMu serializes the replacement of their processes (RestartControllers, keepRunning).
	controllers []*controller
	ctrlMu      sync.Mutex
	logf        func(string, ...any)

	storeBinary string
	storeMu     sync.Mutex
	store       *ObjectStore
}

// Start brings the control plane up and returns once a Node is Ready, the kwok StorageClass
// exists and the default ServiceAccount has been created. On error everything started so far
// is stopped; the working directory (with logs) is kept and named in the error.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	e := &Env{BinDir: opts.BinDir, Dir: opts.Dir, logf: opts.Logf, storeBinary: opts.ObjectStoreBinary}
	if e.logf == nil {
		e.logf = func(string, ...any) {}
	}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "memgraph-hooks-e2e-"); err != nil {
			return nil, err
		}
	}
	e.LogDir = filepath.Join(e.Dir, "logs")
	if err := os.MkdirAll(e.LogDir, 0o755); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			e.Stop()
			err = fmt.Errorf("%w (logs kept in %s)", err, e.LogDir)
		}
	}()
	started := time.Now()
	p, err := newPKI()
	if err != nil {
		return nil, err
	}
	files, err := p.writeFiles(e.Dir)
	if err != nil {
		return nil, err
	}
	// etcd client, etcd peer, API server, controller manager, scheduler, kwok.
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	if err := e.startEtcd(ctx, etcdURL, ports[1]); err != nil {
		return nil, err
	}
	server := "https://127.0.0.1:" + strconv.Itoa(ports[2])
	if err := e.startAPIServer(ctx, files, etcdURL, ports[2]); err != nil {
		return nil, err
	}
	if err := e.connect(ctx, p, server); err != nil {
		return nil, err
	}
	if err := e.startControllers(p, files, server, ports[3], ports[4], ports[5], opts.StageDir); err != nil {
		return nil, err
	}
	if err := e.seed(ctx, opts.StageDir); err != nil {
		return nil, err
	}
	if err := e.guardKwokDeletes(ctx); err != nil {
		return nil, err
	}
	e.logf("control plane ready in %s (dir %s)", time.Since(started).Round(100*time.Millisecond), e.Dir)
	return e, nil
}

func (e *Env) binary(name string) string { return filepath.Join(e.BinDir, name) }

func (e *Env) start(name string, args ...string) (*process, error) {
	p, err := startProcess(name, e.binary(name), e.LogDir, name, args...)
	if err != nil {
		return nil, err
	}
	e.addProcess(p)
	return p, nil
}

func (e *Env) addProcess(p *process) {
	e.procsMu.Lock()
	defer e.procsMu.Unlock()
	e.procs = append(e.procs, p)
}

func (e *Env) startEtcd(ctx context.Context, clientURL string, peerPort int) error {
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	p, err := e.start("etcd",
		"--name=e2e",
		"--data-dir="+filepath.Join(e.Dir, "etcd"),
		"--listen-client-urls="+clientURL,
		"--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=e2e="+peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return poll(ctx, "etcd health", p, 100*time.Millisecond, func() error {
		return httpOK(&http.Client{Timeout: 2 * time.Second}, clientURL+"/health")
	})
}

func (e *Env) startAPIServer(ctx context.Context, files map[string]string, etcdURL string, port int) error {
	e.apiserverArgs = []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--etcd-servers=" + etcdURL,
		"--client-ca-file=" + files["ca.crt"],
		"--tls-cert-file=" + files["serving.crt"],
		"--tls-private-key-file=" + files["serving.key"],
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + files["sa.pub"],
		"--service-account-signing-key-file=" + files["sa.key"],
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=RBAC",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(e.Dir, "apiserver-certs"),
	}
	p, err := e.start("kube-apiserver", e.apiserverArgs...)
	if err != nil {
		return err
	}
	e.apiserver = p
	return nil
}

// RestartAPIServer stops the API server (SIGTERM, as a rolling control-plane upgrade does; it
// stops serving at once, and SIGKILL follows after 5 s because v1.37's process lingers for
// half a minute after that), keeps it down for downFor, starts it again on the same port with the
// same flags and storage, and returns once it is ready. Every client — informers, controllers,
// kwok, the tests — sees its connections and watches break and has to reconnect. The restarted
// server logs to kube-apiserver-restart-<n>.log.
func (e *Env) RestartAPIServer(ctx context.Context, downFor time.Duration) error {
	started := time.Now()
	e.apiserver.stop(5 * time.Second)
	e.logf("kube-apiserver stopped in %s", time.Since(started).Round(100*time.Millisecond))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(downFor):
	}
	e.restarts++
	p, err := e.restartProcess(e.apiserver, e.restarts, e.apiserverArgs)
	if err != nil {
		return err
	}
	e.apiserver = p
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	restarted := time.Now()
	err = poll(ctx, "restarted kube-apiserver /readyz", p, 200*time.Millisecond, func() error {
		body, err := e.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("%w: %s", err, bytes.TrimSpace(body))
		}
		return nil
	})
	e.logf("kube-apiserver ready again %s after its restart", time.Since(restarted).Round(100*time.Millisecond))
	return err
}

// restartProcess starts the stopped process old again as its n-th restart (logging to
// <name>-restart-<n>.log) and puts the new one in its place among the processes Stop ends.
func (e *Env) restartProcess(old *process, n int, args []string) (*process, error) {
	p, err := startProcess(old.name, e.binary(old.name), e.LogDir, fmt.Sprintf("%s-restart-%d", old.name, n), args...)
	if err != nil {
		return nil, err
	}
	e.procsMu.Lock()
	defer e.procsMu.Unlock()
	for i, running := range e.procs {
		if running == old {
			e.procs[i] = p
		}
	}
	return p, nil
}

// Stop ends every process in reverse start order; the controllers' supervisors restart none.
func (e *Env) Stop() {
	e.ctrlMu.Lock()
	e.procsMu.Lock()
	e.stopping = true
	procs := e.procs
	e.procs = nil
	e.procsMu.Unlock()
	e.ctrlMu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].stop(10 * time.Second)
	}
}

// Cleanup removes the working directory; call it only when the run succeeded.
func (e *Env) Cleanup() error { return os.RemoveAll(e.Dir) }

// CheckAlive reports an error naming any control-plane process that has exited.
func (e *Env) CheckAlive() error {
	e.procsMu.Lock()
	procs := append([]*process(nil), e.procs...)
	e.procsMu.Unlock()
	var errs []error
	for _, p := range procs {
		if done, err := p.exited(); done {
			errs = append(errs, fmt.Errorf("%s exited (%v); log %s", p.name, err, p.logPath))
		}
	}
	return errors.Join(errs...)
}

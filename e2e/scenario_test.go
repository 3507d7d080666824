//go:build e2e

package e2e_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/e2e/metacontroller"
	"github.com/memgraph-hooks/memgraph-hooks/e2e/podsim"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// scenarioResync stands in for the CompositeController's resyncPeriodSeconds so that a test
// sees periodic resyncs in seconds rather than minutes; everything else is read from manifests/.
const scenarioResync = 3 * time.Second

// scenario is one namespace driven end to end: the hook, served over HTTPS with the credentials
// manifests/ gives it (in-process, or the binary as a child process), the Metacontroller driver
// calling it as the shipped CompositeController says, and a simulated Memgraph instance per Ready
// Pod.
type scenario struct {
	t        *testing.T
	ns       string
	world    *sim.World
	pods     *podsim.Pods
	mc       *metacontroller.Controller
	nodes    *metacontroller.Decorator // labels the cordoned Nodes, as the install's DecoratorController
	hook     *hookServer               // the in-process hook; nil when proc runs
	proc     *hookProcess              // the hook binary, when scenarioOptions.process
	hookAddr string                    // where the driver reaches the hook
	hookLog  *syncBuffer
	links    *links      // between the hook and the coordinators, when scenarioOptions.links
	replicas *replicaSet // the in-process hook's replicas, when scenarioOptions.replicas > 1
	// pool is the in-process hook's, and the test's own for acting as an operator.
	pool      *bolt.Pool
	cancelled bool
	// creds are the in-process hook's credentials; project writes its mounted Secrets' current
	// content again, as the kubelet does (creds.Reload then re-reads them).
	creds   *serving.Credentials
	project func()
	opts    scenarioOptions
	install installation
}

// scenarioOptions vary how a scenario runs; the zero value is the in-process hook, 2 driver
// workers, resyncs every scenarioResync and Pods polled every 150 ms.
type scenarioOptions struct {
	wrap        func(http.Handler) http.Handler // wraps the in-process hook's handler
	links       []string                        // advertised coordinator addresses reached through links
	process     bool                            // run the hook binary (needs links: it dials them by --resolve)
	replicas    int                             // in-process hook replicas behind the address (replicaSet)
	workers     int
	resync      time.Duration
	podInterval time.Duration
	// projectionGrace is the in-process hook's ProjectionGrace (hooks.Config); zero: the default.
	projectionGrace time.Duration
	// install is the kustomization, under the repository, whose Deployment and CompositeController
	// the scenario plays; manifests/ when empty.
	install []string
	// now is the in-process hook's clock (time.Now when nil).
	now func() time.Time
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startScenario wires everything for namespace ns (created unless it is "default").
func startScenario(t *testing.T, ns string) *scenario {
	t.Helper()
	return startScenarioWith(t, ns, nil)
}

// startScenarioWith is startScenario with the hook's handler wrapped (to inject failures).
func startScenarioWith(t *testing.T, ns string, wrap func(http.Handler) http.Handler) *scenario {
	t.Helper()
	return startScenarioOpts(t, ns, scenarioOptions{wrap: wrap})
}

func startScenarioOpts(t *testing.T, ns string, opts scenarioOptions) *scenario {
	t.Helper()
	installCRD(t)
	e := needEnv(t)
	if ns != "default" {
		newNamespace(t, ns)
	} else {
		createLicenseSecret(t, ns)
	}
	s := &scenario{t: t, ns: ns, world: sim.NewWorld(), hookLog: &syncBuffer{}, opts: opts, install: installationOf(t, opts.install)}
	var resolver memgraph.Resolver = s.world
	if len(opts.links) > 0 {
		s.links = newLinks(t, s.world, opts.links)
		resolver = s.links
	}
	s.pool = bolt.NewPool(bolt.PoolOptions{Resolver: resolver})
	if opts.process {
		s.proc = startHookProcess(t, s.links.resolveFlags()...)
		s.hookAddr = s.proc.addr
	} else {
		creds, security, project := projectedCredentials(t, s.install.deployment)
		s.creds, s.project = creds, project
		newHook := func(conn memgraph.Connector, log *syncBuffer) http.Handler {
			logger := slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
			return hooks.NewHandler(security(hooks.Config{Connector: conn, Logger: logger, AgentResolver: resolver, Now: opts.now, ProjectionGrace: opts.projectionGrace}))
		}
		handler := http.Handler(nil)
		if opts.replicas <= 1 {
			handler = newHook(s.pool, s.hookLog)
		} else {
			meet := newRendezvous(opts.replicas)
			s.replicas = &replicaSet{handlers: []http.Handler{newHook(meeting{s.pool, meet, 0}, s.hookLog)},
				logs: []*syncBuffer{s.hookLog}, meet: meet}
			for i := 1; i < opts.replicas; i++ {
				pool, log := bolt.NewPool(bolt.PoolOptions{Resolver: resolver}), &syncBuffer{}
				t.Cleanup(func() { _ = pool.Close() })
				s.replicas.handlers = append(s.replicas.handlers, newHook(meeting{pool, meet, i}, log))
				s.replicas.logs = append(s.replicas.logs, log)
			}
			handler = s.replicas
		}
		if opts.wrap != nil {
			handler = opts.wrap(handler)
		}
		s.hook = serveHTTPS(t, handler, creds)
		s.hookAddr = s.hook.addr
	}
	s.mc = s.newMetacontroller()
	s.pods = podsim.Start(e.Client, s.world, ns, cmp.Or(opts.podInterval, 150*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.mc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	s.startNodeDecorator(ctx)
	return s
}

// newMetacontroller is the scenario's test Metacontroller for the installation's
// CompositeController.
func (s *scenario) newMetacontroller() *metacontroller.Controller {
	s.t.Helper()
	return s.metacontrollerFor(s.install.controller, nil)
}

// metacontrollerFor is a test Metacontroller for cc, calling the scenario's hook.
func (s *scenario) metacontrollerFor(cc *metacontroller.CompositeController, informers *metacontroller.Informers) *metacontroller.Controller {
	s.t.Helper()
	e := needEnv(s.t)
	mc, err := metacontroller.New(metacontroller.Options{
		CC: cc, Dynamic: e.Dynamic, Discovery: e.Client.Discovery(), HookAddress: s.hookAddr,
		Namespace: s.ns, ResyncPeriod: cmp.Or(s.opts.resync, scenarioResync), Workers: s.opts.workers, Logf: s.t.Logf,
		Informers: informers,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return mc
}

// restartMetacontroller stops the test Metacontroller and starts a new one, as a restart of
// Metacontroller's pod does: it reads the hooks' Secrets again, for the CompositeController and
// the Node decorator.
func (s *scenario) restartMetacontroller() {
	s.t.Helper()
	s.mc.Stop()
	s.nodes.Stop()
	s.mc = s.newMetacontroller()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.mc.Start(ctx); err != nil {
		s.t.Fatal(err)
	}
	s.startNodeDecorator(ctx)
}

// startNodeDecorator starts the test Metacontroller's DecoratorController of the Nodes,
// calling the scenario's hook.
func (s *scenario) startNodeDecorator(ctx context.Context) {
	s.t.Helper()
	e := needEnv(s.t)
	nodes, err := metacontroller.NewDecorator(s.install.nodes, metacontroller.Options{
		Dynamic: e.Dynamic, Discovery: e.Client.Discovery(), HookAddress: s.hookAddr, Logf: s.t.Logf})
	if err != nil {
		s.t.Fatal(err)
	}
	if err := nodes.Start(ctx); err != nil {
		s.t.Fatal(err)
	}
	s.nodes = nodes
}

func (s *scenario) stop() {
	if s.t.Failed() {
		s.report()
	}
	s.mc.Stop()
	if s.nodes != nil {
		s.nodes.Stop()
	}
	s.pods.Stop()
	if s.hook != nil {
		s.hook.Close()
	}
	if s.proc != nil {
		s.proc.kill()
	}
	s.pool.Close()
	s.world.Close()
}

// report prints what a failed scenario needs: every parent's status, the driver's writes and
// errors, the hook's log, the simulator's lifecycle, query log and misuses.
func (s *scenario) report() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	list, err := mgcClient(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(&b, "list MemgraphClusters: %v\n", err)
	} else {
		for _, item := range list.Items {
			status, _ := yaml.Marshal(item.Object["status"])
			fmt.Fprintf(&b, "=== MemgraphCluster %s/%s status (generation %d):\n%s", s.ns, item.GetName(), item.GetGeneration(), status)
		}
	}
	if out, err := testEnv.Kubectl(ctx, "get", "statefulsets,pods,pvc", "-n", s.ns, "-o", "wide"); err == nil {
		b.WriteString("=== kubectl get statefulsets,pods,pvc:\n" + out)
	}
	b.WriteString("=== " + s.mc.Stats().Snapshot().Report())
	b.WriteString("=== hook log:\n" + tail(s.hookLogs(), 200))
	b.WriteString("=== simulated pods:\n")
	for _, ev := range s.pods.Events() {
		fmt.Fprintf(&b, "  %s %s %s\n", ev.At.Format("15:04:05.000"), ev.Host, ev.What)
	}
	b.WriteString("=== simulator query log:\n")
	for _, q := range lastQueries(s.world.Queries(), 300) {
		line := fmt.Sprintf("  %s: %s", q.Host, q.Text)
		if q.Failed {
			line += fmt.Sprintf("  -> FAILED (%s) %s", q.Phase, q.Message)
		}
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "=== simulator misuses: %+v\n", s.world.Misuses())
	b.WriteString("=== kube-controller-manager log on this namespace:\n" + tail(s.controllerManagerLog(), 120))
	s.t.Log("\n" + b.String())
}

// controllerManagerLog is kube-controller-manager's log lines (every incarnation's) that name an
// object of the scenario's namespace (klog writes them as "<namespace>/<name>").
func (s *scenario) controllerManagerLog() string {
	restarts, err := filepath.Glob(filepath.Join(testEnv.LogDir, "kube-controller-manager-restart-*.log"))
	if err != nil {
		return err.Error()
	}
	files := append([]string{filepath.Join(testEnv.LogDir, "kube-controller-manager.log")}, restarts...)
	var lines []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err.Error()
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, `"`+s.ns+`/`) {
				lines = append(lines, line)
			}
		}
	}
	return strings.Join(lines, "\n")
}

// hookLogs is the hook's log: the in-process hook's, or every incarnation's of the binary.
func (s *scenario) hookLogs() string {
	switch {
	case s.proc != nil:
		return s.proc.logs()
	case s.replicas != nil:
		var b strings.Builder
		for i, l := range s.replicas.logs {
			fmt.Fprintf(&b, "--- replica %d\n%s", i, l.String())
		}
		return b.String()
	}
	return s.hookLog.String()
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d earlier lines)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n") + "\n"
}

func lastQueries(qs []sim.Query, n int) []sim.Query {
	if len(qs) > n {
		return qs[len(qs)-n:]
	}
	return qs
}

// get returns the MemgraphCluster.
func (s *scenario) get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	return mgcClient(s.ns).Get(ctx, name, metav1.GetOptions{})
}

// conditionStatus returns status.conditions[type].status ("" when absent) and its message.
func conditionStatus(u *unstructured.Unstructured, typ string) (string, string, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ {
			status, _ := m["status"].(string)
			reason, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return status, reason, msg
		}
	}
	return "", "", ""
}

// waitConverged waits until the cluster reports Converged=True for its current generation.
func (s *scenario) waitConverged(name string, timeout time.Duration) *unstructured.Unstructured {
	s.t.Helper()
	return s.waitStatus(name, fmt.Sprintf("MemgraphCluster %s/%s did not converge within %s", s.ns, name, timeout), timeout,
		func(u *unstructured.Unstructured) error {
			observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			if observed != u.GetGeneration() {
				return fmt.Errorf("observedGeneration %d, generation %d", observed, u.GetGeneration())
			}
			if st, reason, msg := conditionStatus(u, "Converged"); st != "True" {
				return fmt.Errorf("Converged=%q %s: %s", st, reason, msg)
			}
			return nil
		})
}

// waitStatus waits until check accepts the cluster, failing the test with what otherwise.
func (s *scenario) waitStatus(name, what string, timeout time.Duration, check func(*unstructured.Unstructured) error) *unstructured.Unstructured {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last *unstructured.Unstructured
	err := eventually(ctx, 200*time.Millisecond, func() error {
		u, err := s.get(ctx, name)
		if err != nil {
			return err
		}
		last = u
		return check(u)
	})
	if err != nil {
		s.t.Fatalf("%s: %v", what, err)
	}
	return last
}

// raft returns the single Raft group of the scenario's coordinators with a leader, failing
// the test when there is not exactly one.
func (s *scenario) raft() sim.ClusterSnapshot {
	s.t.Helper()
	var led []sim.ClusterSnapshot
	for _, c := range s.world.Raft().Clusters {
		if c.Leader != 0 && len(c.Members) > 1 {
			led = append(led, c)
		}
	}
	if len(led) != 1 {
		s.t.Fatalf("want exactly one multi-member Raft group with a leader, got %d: %+v", len(led), s.world.Raft())
	}
	return led[0]
}

// assertNoMisuse fails when the simulator recorded any query Memgraph would refuse.
func (s *scenario) assertNoMisuse() {
	s.t.Helper()
	if m := s.world.Misuses(); len(m) > 0 {
		s.t.Errorf("the hook sent queries Memgraph refuses: %+v", m)
	}
}

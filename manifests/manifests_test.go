package manifests_test

import (
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

func load(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// containerPort returns the named port of the hook container and the port its flag listens on.
func containerPort(t *testing.T, c corev1.Container, name, flag string) (declared, listened int32) {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			declared = p.ContainerPort
		}
	}
	for _, a := range c.Args {
		if addr, ok := strings.CutPrefix(a, flag+"="); ok {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				t.Fatalf("%s: %v", a, err)
			}
			p, err := strconv.ParseInt(port, 10, 32)
			if err != nil {
				t.Fatalf("%s: %v", a, err)
			}
			listened = int32(p)
		}
	}
	return declared, listened
}

// The hook port and the metrics port are what the Deployment's flags listen on; the
// NetworkPolicy admits Metacontroller to the hook port only and the monitoring namespace to the
// metrics port only; the Service and the optional PodMonitor (components/monitoring) find the
// metrics port by name.
func TestPortsAndWhoMayReachThem(t *testing.T) {
	var dep appsv1.Deployment
	var svc corev1.Service
	var policy networkingv1.NetworkPolicy
	load(t, "deployment.yaml", &dep)
	load(t, "service.yaml", &svc)
	load(t, "networkpolicy.yaml", &policy)
	monitor := loadPodMonitor(t, "components/monitoring/podmonitor-hook.yaml")

	hook := dep.Spec.Template.Spec.Containers[0]
	httpPort, listen := containerPort(t, hook, "https", "--listen")
	metricsPort, metricsListen := containerPort(t, hook, "metrics", "--metrics-listen")
	if httpPort == 0 || httpPort != listen || metricsPort == 0 || metricsPort != metricsListen || httpPort == metricsPort {
		t.Fatalf("container ports https %d (--listen %d), metrics %d (--metrics-listen %d)", httpPort, listen, metricsPort, metricsListen)
	}

	admitted := map[string][]int32{} // namespace → ports
	for _, rule := range policy.Spec.Ingress {
		for _, from := range rule.From {
			ns := from.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]
			if ns == "" || from.PodSelector != nil || from.IPBlock != nil || len(from.NamespaceSelector.MatchExpressions) > 0 {
				t.Errorf("an ingress source other than one named namespace: %+v", from)
			}
			for _, p := range rule.Ports {
				admitted[ns] = append(admitted[ns], p.Port.IntVal)
			}
		}
		if len(rule.Ports) == 0 {
			t.Errorf("an ingress rule open on every port: %+v", rule)
		}
	}
	if want := map[string][]int32{"metacontroller": {httpPort}, "monitoring": {metricsPort}}; !equalPorts(admitted, want) {
		t.Errorf("the NetworkPolicy admits %v, want %v", admitted, want)
	}
	if !labels.SelectorFromSet(policy.Spec.PodSelector.MatchLabels).Matches(labels.Set(dep.Spec.Template.Labels)) {
		t.Error("the NetworkPolicy does not select the hook's pods")
	}

	for _, p := range svc.Spec.Ports {
		if p.Name == "metrics" && p.TargetPort.StrVal != "metrics" {
			t.Errorf("the Service's metrics port targets %v", p.TargetPort)
		}
	}
	if len(monitor.Spec.PodMetricsEndpoints) != 1 || monitor.Spec.PodMetricsEndpoints[0].Port != "metrics" ||
		monitor.Spec.PodMetricsEndpoints[0].Path != "/metrics" || !monitor.Spec.PodMetricsEndpoints[0].HonorLabels {
		t.Errorf("the hook's PodMonitor endpoints %+v: want port metrics, path /metrics, honorLabels (the per-cluster gauges' namespace label)",
			monitor.Spec.PodMetricsEndpoints)
	}
	if !labels.SelectorFromSet(monitor.Spec.Selector.MatchLabels).Matches(labels.Set(dep.Spec.Template.Labels)) ||
		!slices.Equal(monitor.Spec.NamespaceSelector.MatchNames, []string{dep.Namespace}) {
		t.Errorf("the hook's PodMonitor does not select the pods of Deployment %s/%s", dep.Namespace, dep.Name)
	}
}

// podMonitor is the part of a monitoring.coreos.com/v1 PodMonitor these tests read.
type podMonitor struct {
	Spec struct {
		NamespaceSelector struct {
			Any        bool
			MatchNames []string
		}
		Selector            struct{ MatchLabels map[string]string }
		PodMetricsEndpoints []struct {
			Port, Path  string
			HonorLabels bool
		}
	}
}

func loadPodMonitor(t *testing.T, path string) podMonitor {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m podMonitor
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// The Memgraph PodMonitor selects the pods of both roles of every cluster, in any namespace, on
// the container port the hook renders for Memgraph's metrics, and nothing else.
func TestMemgraphPodMonitorSelectsEveryMemgraphPod(t *testing.T) {
	monitor := loadPodMonitor(t, "components/monitoring/podmonitor-memgraph.yaml")
	sel := labels.SelectorFromSet(monitor.Spec.Selector.MatchLabels)
	for _, role := range []string{topology.RoleCoordinator, topology.RoleData} {
		pod := topology.RoleSelector("graph", role)
		pod[v1alpha1.LabelManagedBy] = topology.ManagedByValue
		if !sel.Matches(labels.Set(pod)) {
			t.Errorf("the Memgraph PodMonitor does not select a %s pod %v", role, pod)
		}
	}
	hookPod := map[string]string{"app.kubernetes.io/name": "memgraph-hooks", "app.kubernetes.io/component": "hook"}
	if sel.Matches(labels.Set(hookPod)) || len(monitor.Spec.Selector.MatchLabels) == 0 {
		t.Error("the Memgraph PodMonitor selects the hook's pods too")
	}
	if !monitor.Spec.NamespaceSelector.Any {
		t.Error("MemgraphClusters live in any namespace; the PodMonitor must look in all")
	}
	if len(monitor.Spec.PodMetricsEndpoints) != 1 || monitor.Spec.PodMetricsEndpoints[0].Port != topology.PortNameMetrics ||
		monitor.Spec.PodMetricsEndpoints[0].Path != "/metrics" {
		t.Errorf("endpoints %+v: want port %s, path /metrics", monitor.Spec.PodMetricsEndpoints, topology.PortNameMetrics)
	}
}

func equalPorts(a, b map[string][]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// The Go runtime's soft memory limit sits well inside the container's hard one, so that the
// collector works harder before the kernel kills the hook, and GOGC stays a number
// (docs/performance.md).
func TestGoMemoryLimitInsideContainerLimit(t *testing.T) {
	var dep appsv1.Deployment
	load(t, "deployment.yaml", &dep)
	hook := dep.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range hook.Env {
		env[e.Name] = e.Value
	}
	soft, err := resource.ParseQuantity(strings.TrimSuffix(env["GOMEMLIMIT"], "B"))
	if err != nil {
		t.Fatalf("GOMEMLIMIT %q: %v", env["GOMEMLIMIT"], err)
	}
	hard := hook.Resources.Limits.Memory()
	if hard.IsZero() || soft.Cmp(*hard) >= 0 || soft.Value() <= 0 {
		t.Errorf("GOMEMLIMIT %s is not below the container's memory limit %s", env["GOMEMLIMIT"], hard)
	}
	if gogc, err := strconv.Atoi(env["GOGC"]); err != nil || gogc < 100 {
		t.Errorf("GOGC %q: want a number of at least the default 100", env["GOGC"])
	}
}

// The backup-agent sidecar of every data pod runs the hook's own image: --agent-image expands
// MEMGRAPH_HOOKS_AGENT_IMAGE, which the container defines as its own image (an overlay's
// images: entry rewrites both, image-fields.yaml).
func TestTheAgentImageIsTheHooksOwn(t *testing.T) {
	var dep appsv1.Deployment
	load(t, "deployment.yaml", &dep)
	hook := dep.Spec.Template.Spec.Containers[0]
	const arg = "--agent-image=$(MEMGRAPH_HOOKS_AGENT_IMAGE)"
	if !slices.Contains(hook.Args, arg) {
		t.Errorf("args %v lack %s", hook.Args, arg)
	}
	i := slices.IndexFunc(hook.Env, func(e corev1.EnvVar) bool { return e.Name == "MEMGRAPH_HOOKS_AGENT_IMAGE" })
	if i < 0 || hook.Env[i].Value != hook.Image {
		t.Errorf("MEMGRAPH_HOOKS_AGENT_IMAGE %v, want the container's image %s", hook.Env, hook.Image)
	}
	if hook.Image != topology.DefaultAgentImage {
		t.Errorf("the Deployment runs %s, the flag's default is %s", hook.Image, topology.DefaultAgentImage)
	}
}

// The controllers whose syncs query Memgraph resync a steady cluster about once a period, later
// when Metacontroller's queue is long: the hook's Bolt pool keeps an idle address's connections
// for at least two periods, so a steady sync reuses them instead of dialling and handshaking
// again inside its first read's share of the sync budget.
func TestSteadySyncsFindTheirBoltConnectionsOpen(t *testing.T) {
	for _, path := range []string{"compositecontroller.yaml", "user-controllers.yaml"} {
		var cc struct {
			Kind string `json:"kind"`
			Spec struct {
				ResyncPeriodSeconds int `json:"resyncPeriodSeconds"`
			} `json:"spec"`
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(raw, &cc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		period := time.Duration(cc.Spec.ResyncPeriodSeconds) * time.Second
		if cc.Kind != "CompositeController" || period <= 0 {
			t.Fatalf("%s: kind %q with resyncPeriodSeconds %d", path, cc.Kind, cc.Spec.ResyncPeriodSeconds)
		}
		if bolt.DefaultIdleTimeout < 2*period {
			t.Errorf("%s resyncs every %s, and the hook's Bolt pool closes an address idle for %s: a steady sync dials again; want at least %s",
				path, period, bolt.DefaultIdleTimeout, 2*period)
		}
	}
}

package manifests_test

import (
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
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
// metrics port only; the Service and the optional ServiceMonitor find the metrics port by name.
func TestPortsAndWhoMayReachThem(t *testing.T) {
	var dep appsv1.Deployment
	var svc corev1.Service
	var policy networkingv1.NetworkPolicy
	var monitor struct {
		Metadata struct{ Namespace string }
		Spec     struct {
			NamespaceSelector struct{ MatchNames []string }
			Selector          struct{ MatchLabels map[string]string }
			Endpoints         []struct{ Port, Path string }
		}
	}
	load(t, "deployment.yaml", &dep)
	load(t, "service.yaml", &svc)
	load(t, "networkpolicy.yaml", &policy)
	raw, err := os.ReadFile("components/prometheus/servicemonitor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &monitor); err != nil {
		t.Fatal(err)
	}

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

	var servicePorts []string
	for _, p := range svc.Spec.Ports {
		servicePorts = append(servicePorts, p.Name)
		if p.Name == "metrics" && p.TargetPort.StrVal != "metrics" {
			t.Errorf("the Service's metrics port targets %v", p.TargetPort)
		}
	}
	if len(monitor.Spec.Endpoints) != 1 || !slices.Contains(servicePorts, monitor.Spec.Endpoints[0].Port) || monitor.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor endpoints %+v, Service ports %v", monitor.Spec.Endpoints, servicePorts)
	}
	if !labels.SelectorFromSet(monitor.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) ||
		!slices.Equal(monitor.Spec.NamespaceSelector.MatchNames, []string{svc.Namespace}) {
		t.Errorf("the ServiceMonitor does not select the Service %s/%s", svc.Namespace, svc.Name)
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

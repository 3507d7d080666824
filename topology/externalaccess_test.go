package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	corev1 "k8s.io/api/core/v1"
)

// externalLoadBalancer is a 3+2 cluster "graph" reached from outside through load balancers,
// with external-dns names and a source range.
func externalLoadBalancer() *v1alpha1.MemgraphCluster {
	mc := apitest.MinimalCluster()
	mc.Name = "graph"
	mc.Spec.ExternalAccess = &v1alpha1.ExternalAccess{
		Type:                     v1alpha1.ExternalLoadBalancer,
		Annotations:              map[string]string{"service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing"},
		LoadBalancerSourceRanges: []string{"203.0.113.0/24"},
		HostnameTemplate:         "{instance}.graph.example.com",
	}
	return mc
}

// externalNodePort is the minimal cluster reached through node ports.
func externalNodePort() *v1alpha1.MemgraphCluster {
	mc := apitest.MinimalCluster()
	mc.Spec.ExternalAccess = &v1alpha1.ExternalAccess{Type: v1alpha1.ExternalNodePort}
	return mc
}

func TestExternalServicesSelectOnePodEach(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster func() *v1alpha1.MemgraphCluster
		want    []string // name, type, selected pod, hostname annotation, source ranges
	}{
		{"none without externalAccess", apitest.MinimalCluster, nil},
		{"load balancers with a hostname template", externalLoadBalancer, []string{
			"graph-coordinator-1-external LoadBalancer graph-coordinator-1 graph-coordinator-1.graph.example.com [203.0.113.0/24]",
			"graph-coordinator-2-external LoadBalancer graph-coordinator-2 graph-coordinator-2.graph.example.com [203.0.113.0/24]",
			"graph-coordinator-3-external LoadBalancer graph-coordinator-3 graph-coordinator-3.graph.example.com [203.0.113.0/24]",
			"graph-data-0-external LoadBalancer graph-data-0 graph-data-0.graph.example.com [203.0.113.0/24]",
			"graph-data-1-external LoadBalancer graph-data-1 graph-data-1.graph.example.com [203.0.113.0/24]",
		}},
		{"node ports", externalNodePort, []string{
			"memgraph-coordinator-1-external NodePort memgraph-coordinator-1  []",
			"memgraph-coordinator-2-external NodePort memgraph-coordinator-2  []",
			"memgraph-coordinator-3-external NodePort memgraph-coordinator-3  []",
			"memgraph-data-0-external NodePort memgraph-data-0  []",
			"memgraph-data-1-external NodePort memgraph-data-1  []",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := tc.cluster()
			c := admit(t, mc)
			var got []string
			for _, svc := range externalServices(c.mc, c.network, c.replicas) {
				got = append(got, svc.Name+" "+string(svc.Spec.Type)+" "+svc.Spec.Selector[LabelPodName]+" "+
					svc.Annotations[AnnotationExternalDNSHostname]+" "+fmtList(svc.Spec.LoadBalancerSourceRanges))
				if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != v1alpha1.DefaultBoltPort || svc.Spec.Ports[0].NodePort != 0 {
					t.Errorf("%s ports %+v, want the Bolt port alone, its node port left to the API server", svc.Name, svc.Spec.Ports)
				}
				if role := RoleOfPod(svc.Spec.Selector); role == "" {
					t.Errorf("%s selector %v names no role", svc.Name, svc.Spec.Selector)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("external Services (-want +got):\n%s", diff)
			}
		})
	}
}

func fmtList(s []string) string { return "[" + joinComma(s) + "]" }

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

func lb(ingress ...corev1.LoadBalancerIngress) ExternalService {
	return ExternalService{Type: corev1.ServiceTypeLoadBalancer, Ingress: ingress, NodePort: 31000}
}

// Advertise gives each member the address Kubernetes assigned its Service, or says what it
// waits for; a member that waits is advertised at its in-cluster name.
func TestAdvertiseFollowsWhatKubernetesAssigns(t *testing.T) {
	ipv6 := corev1.LoadBalancerIngress{IP: "2001:db8::7"}
	for _, tc := range []struct {
		name     string
		edit     func(*v1alpha1.ExternalAccess)
		observed ExternalObservation
		want     []ExternalMember
	}{
		{
			name: "load balancers: an IPv4 address, a hostname, an IPv6 one skipped, none yet, none at all",
			observed: ExternalObservation{Services: map[string]ExternalService{
				"memgraph-coordinator-1-external": lb(corev1.LoadBalancerIngress{IP: "198.51.100.1"}),
				"memgraph-coordinator-2-external": lb(corev1.LoadBalancerIngress{Hostname: "a1b2.elb.example.com"}),
				"memgraph-coordinator-3-external": lb(ipv6, corev1.LoadBalancerIngress{IP: "198.51.100.3"}),
				"memgraph-data-0-external":        lb(),
				"memgraph-data-1-external":        lb(ipv6),
			}},
			want: []ExternalMember{
				{Name: "coordinator_1", Service: "memgraph-coordinator-1-external", Address: "198.51.100.1:7687"},
				{Name: "coordinator_2", Service: "memgraph-coordinator-2-external", Address: "a1b2.elb.example.com:7687"},
				{Name: "coordinator_3", Service: "memgraph-coordinator-3-external", Address: "198.51.100.3:7687"},
				{Name: "instance_0", Service: "memgraph-data-0-external",
					Waiting: "Service memgraph-data-0-external has no load balancer yet (status.loadBalancer.ingress is empty)"},
				{Name: "instance_1", Service: "memgraph-data-1-external", Unusable: true,
					Waiting: "Service memgraph-data-1-external's load balancer has IPv6 addresses only, and a bolt_server is host:port " +
						"with one colon; give it an IPv4 address or a hostname, or set externalAccess.hostnameTemplate"},
			},
		},
		{
			name: "a hostname template names every member once its load balancer exists, IPv6 or not",
			edit: func(e *v1alpha1.ExternalAccess) { e.HostnameTemplate = "{instance}.db.example.com" },
			observed: ExternalObservation{Services: map[string]ExternalService{
				"memgraph-coordinator-1-external": lb(corev1.LoadBalancerIngress{IP: "198.51.100.1"}),
				"memgraph-coordinator-2-external": lb(ipv6),
				"memgraph-coordinator-3-external": {Type: corev1.ServiceTypeNodePort, NodePort: 31003},
				"memgraph-data-0-external":        lb(),
			}},
			want: []ExternalMember{
				{Name: "coordinator_1", Service: "memgraph-coordinator-1-external", Address: "memgraph-coordinator-1.db.example.com:7687"},
				{Name: "coordinator_2", Service: "memgraph-coordinator-2-external", Address: "memgraph-coordinator-2.db.example.com:7687"},
				{Name: "coordinator_3", Service: "memgraph-coordinator-3-external", Waiting: "Service memgraph-coordinator-3-external is still of type NodePort"},
				{Name: "instance_0", Service: "memgraph-data-0-external",
					Waiting: "Service memgraph-data-0-external has no load balancer yet (status.loadBalancer.ingress is empty)"},
				{Name: "instance_1", Service: "memgraph-data-1-external", Waiting: "Service memgraph-data-1-external does not exist yet"},
			},
		},
		{
			name: "node ports: the address of the node that runs the pod, external first; waits named",
			edit: func(e *v1alpha1.ExternalAccess) { e.Type = v1alpha1.ExternalNodePort },
			observed: ExternalObservation{
				Services: map[string]ExternalService{
					"memgraph-coordinator-1-external": {Type: corev1.ServiceTypeNodePort, NodePort: 31001},
					"memgraph-coordinator-2-external": {Type: corev1.ServiceTypeNodePort, NodePort: 31002},
					"memgraph-coordinator-3-external": {Type: corev1.ServiceTypeNodePort, NodePort: 31003},
					"memgraph-data-0-external":        {Type: corev1.ServiceTypeNodePort, NodePort: 31004},
					"memgraph-data-1-external":        {Type: corev1.ServiceTypeNodePort},
				},
				PodNodes: map[string]string{"memgraph-coordinator-1": "n1", "memgraph-coordinator-2": "n2",
					"memgraph-data-0": "n3", "memgraph-data-1": "n1"},
				NodeAddresses: map[string][]corev1.NodeAddress{
					"n1": {{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.1"}},
					"n2": {{Type: corev1.NodeHostName, Address: "n2"}, {Type: corev1.NodeInternalIP, Address: "fd00::2"}},
				},
			},
			want: []ExternalMember{
				{Name: "coordinator_1", Service: "memgraph-coordinator-1-external", Address: "203.0.113.1:31001"},
				{Name: "coordinator_2", Service: "memgraph-coordinator-2-external", Address: "n2:31002"},
				{Name: "coordinator_3", Service: "memgraph-coordinator-3-external", Waiting: "pod memgraph-coordinator-3 is not scheduled on a node yet"},
				{Name: "instance_0", Service: "memgraph-data-0-external",
					Waiting: "node n3 (running memgraph-data-0) was not among the objects the sync carried"},
				{Name: "instance_1", Service: "memgraph-data-1-external", Waiting: "Service memgraph-data-1-external has no node port yet"},
			},
		},
		{
			name: "a node without any address Memgraph can advertise",
			edit: func(e *v1alpha1.ExternalAccess) { e.Type = v1alpha1.ExternalNodePort },
			observed: ExternalObservation{
				Services: map[string]ExternalService{"memgraph-coordinator-1-external": {Type: corev1.ServiceTypeNodePort, NodePort: 31001}},
				PodNodes: map[string]string{"memgraph-coordinator-1": "v6"},
				NodeAddresses: map[string][]corev1.NodeAddress{
					"v6": {{Type: corev1.NodeInternalIP, Address: "fd00::9"}},
				},
			},
			want: []ExternalMember{
				{Name: "coordinator_1", Service: "memgraph-coordinator-1-external", Unusable: true,
					Waiting: "node v6 (running memgraph-coordinator-1) reports no address Memgraph can advertise (an IPv4 address or a DNS " +
						"name in status.addresses); set externalAccess.hostnameTemplate, or use type LoadBalancer"},
				{Name: "coordinator_2", Service: "memgraph-coordinator-2-external", Waiting: "Service memgraph-coordinator-2-external does not exist yet"},
				{Name: "coordinator_3", Service: "memgraph-coordinator-3-external", Waiting: "Service memgraph-coordinator-3-external does not exist yet"},
				{Name: "instance_0", Service: "memgraph-data-0-external", Waiting: "Service memgraph-data-0-external does not exist yet"},
				{Name: "instance_1", Service: "memgraph-data-1-external", Waiting: "Service memgraph-data-1-external does not exist yet"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := apitest.MinimalCluster()
			mc.Spec.ExternalAccess = &v1alpha1.ExternalAccess{Type: v1alpha1.ExternalLoadBalancer}
			if tc.edit != nil {
				tc.edit(mc.Spec.ExternalAccess)
			}
			c := admit(t, mc)
			d := c.Advertise(c.Declare(c.Replicas()), tc.observed)
			if diff := cmp.Diff(tc.want, d.External.Members); diff != "" {
				t.Errorf("members (-want +got):\n%s", diff)
			}
			advertised := map[string]string{}
			for _, m := range tc.want {
				advertised[m.Name] = m.Address
			}
			for _, co := range d.Coordinators {
				checkAdvertised(t, co.Member, advertised[co.Name])
			}
			for _, di := range d.DataInstances {
				checkAdvertised(t, di.Member, advertised[di.Name])
			}
		})
	}
}

func checkAdvertised(t *testing.T, m Member, external string) {
	t.Helper()
	want := external
	if want == "" {
		want = m.BoltServer
	}
	if got := m.AdvertisedBoltServer(); got != want {
		t.Errorf("%s is advertised at %s, want %s", m.Name, got, want)
	}
}

func TestAdvertiseWithoutExternalAccessChangesNothing(t *testing.T) {
	c := admit(t, apitest.MinimalCluster())
	d := c.Declare(c.Replicas())
	got := c.Advertise(d, ExternalObservation{Services: map[string]ExternalService{
		"memgraph-data-0-external": lb(corev1.LoadBalancerIngress{IP: "198.51.100.1"}),
	}})
	if diff := cmp.Diff(d, got); diff != "" {
		t.Errorf("Advertise without spec.externalAccess (-before +after):\n%s", diff)
	}
}

// A template stored without the CRD's rules (an older CRD) is ignored, and the view says why;
// Admit refuses it as the API server now would.
func TestAdmitWithholdingIgnoresAHostnameTemplateWithoutInstance(t *testing.T) {
	raw := apitest.ParentJSON("default", `{"externalAccess":{"type":"LoadBalancer","hostnameTemplate":"graph.example.com"}}`)
	if _, err := Admit(raw); err == nil {
		t.Fatal("Admit took a hostnameTemplate without {instance}")
	}
	c, err := AdmitWithholding(raw)
	if err != nil {
		t.Fatalf("AdmitWithholding: %v", err)
	}
	d := c.Advertise(c.Declare(c.Replicas()), ExternalObservation{Services: map[string]ExternalService{
		"memgraph-data-0-external": lb(corev1.LoadBalancerIngress{IP: "198.51.100.1"}),
	}})
	if d.External.TemplateWithheld != v1alpha1.MsgHostnameInstance {
		t.Errorf("TemplateWithheld = %q, want the rule's message", d.External.TemplateWithheld)
	}
	if got := d.DataInstances[0].Advertised; got != "198.51.100.1:7687" {
		t.Errorf("instance_0 advertised at %q, want its load balancer's address", got)
	}
	children, err := Render(c, Rendering{Replicas: c.Replicas()})
	if err != nil {
		t.Fatal(err)
	}
	for _, child := range children {
		meta := child["metadata"].(map[string]any)
		if annotations, ok := meta["annotations"].(map[string]any); ok && annotations[AnnotationExternalDNSHostname] != nil {
			t.Errorf("%s carries the ignored template's hostname %v", meta["name"], annotations[AnnotationExternalDNSHostname])
		}
	}
}

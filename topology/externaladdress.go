package topology

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// ExternalObservation is what Kubernetes assigned the members' external Services, as a sync
// observed it: the Services, where the cluster's pods run and the addresses of those nodes alone
// (a NodePort address is the node that runs the member's pod), so that nothing here grows with
// the number of nodes in the Kubernetes cluster.
// +kubebuilder:object:generate=false
type ExternalObservation struct {
	// Services are the cluster's external Services by name (ExternalServiceName).
	Services map[string]ExternalService
	// PodNodes is each scheduled pod's spec.nodeName, by pod name.
	PodNodes map[string]string
	// NodeAddresses are the status.addresses of the nodes in PodNodes, by node name; a node whose
	// Node object the sync did not carry is absent.
	NodeAddresses map[string][]corev1.NodeAddress
}

// ExternalService is what a sync reads of an external Service.
// +kubebuilder:object:generate=false
type ExternalService struct {
	Type corev1.ServiceType
	// Ingress is status.loadBalancer.ingress.
	Ingress []corev1.LoadBalancerIngress
	// NodePort is the node port of the Bolt port, 0 while none is allocated.
	NodePort int32
}

// ExternalAccessView is where each declared member is reached from outside the Kubernetes
// cluster: the external address it is to be advertised at, or what that waits for.
type ExternalAccessView struct {
	Type    v1alpha1.ExternalAccessType
	Members []ExternalMember // coordinators first, in id order, then data instances
	// TemplateWithheld is why spec.externalAccess.hostnameTemplate is ignored (the CRD rule it
	// breaks), "" when it is used or unset.
	TemplateWithheld string
}

// ExternalMember is one member's external address.
type ExternalMember struct {
	Name    string // coordinator_<id> or instance_<n>
	Service string
	// Address is host:port, "" while the member waits.
	Address string
	// Waiting says what Address waits for; Unusable, that Kubernetes assigned something Memgraph
	// cannot advertise.
	Waiting  string
	Unusable bool
}

// Status is the view as status.externalAccess shows it.
func (v *ExternalAccessView) Status() *v1alpha1.ExternalAccessStatus {
	if v == nil {
		return nil
	}
	st := &v1alpha1.ExternalAccessStatus{Type: v.Type}
	for _, m := range v.Members {
		st.Members = append(st.Members, v1alpha1.ExternalMemberStatus{Name: m.Name, Service: m.Service, Address: m.Address, Waiting: m.Waiting})
	}
	return st
}

// Advertise is d with spec.externalAccess applied: each declared member that has an external
// address in o is to be advertised at it (Member.Advertised), and d.External says where each
// member stands. Without spec.externalAccess, d is returned as it is: every member is advertised
// at its in-cluster name.
func (c *Cluster) Advertise(d Declared, o ExternalObservation) Declared {
	e := c.mc.Spec.ExternalAccess
	if e == nil {
		return d
	}
	v := &ExternalAccessView{Type: e.Type}
	if len(c.withheld.HostnameTemplate) > 0 {
		v.TemplateWithheld = c.withheld.HostnameTemplate[0].Message
	}
	coordinators := append([]Coordinator(nil), d.Coordinators...)
	for i := range coordinators {
		m := externalMember(e, c.network.Ports.Bolt, coordinators[i].Member, o)
		coordinators[i].Advertised = m.Address
		v.Members = append(v.Members, m)
	}
	data := append([]DataInstance(nil), d.DataInstances...)
	for i := range data {
		m := externalMember(e, c.network.Ports.Bolt, data[i].Member, o)
		data[i].Advertised = m.Address
		v.Members = append(v.Members, m)
	}
	d.Coordinators, d.DataInstances, d.External = coordinators, data, v
	return d
}

// externalMember is where member m is reached from outside: for a LoadBalancer, its Service's
// first ingress Memgraph can advertise (an IPv4 address or a hostname) on the Bolt port; for a
// NodePort, the address of the node that runs m's pod (nodeAddress) on the Service's node port.
// With a hostname template the host is the template's hostname, once the Service has that load
// balancer or node port (external-dns publishes the name only then).
func externalMember(e *v1alpha1.ExternalAccess, bolt int32, m Member, o ExternalObservation) ExternalMember {
	out := ExternalMember{Name: m.Name, Service: ExternalServiceName(m.Pod)}
	svc, ok := o.Services[out.Service]
	name := e.Hostname(m.Pod)
	var host string
	var port int32
	switch {
	case !ok:
		out.Waiting = "Service " + out.Service + " does not exist yet"
	case svc.Type != corev1.ServiceType(e.Type):
		out.Waiting = fmt.Sprintf("Service %s is still of type %s", out.Service, svc.Type)
	case e.Type == v1alpha1.ExternalLoadBalancer && name != "" && len(svc.Ingress) > 0,
		e.Type == v1alpha1.ExternalNodePort && name != "" && svc.NodePort > 0:
		host, port = name, svc.NodePort
		if e.Type == v1alpha1.ExternalLoadBalancer {
			port = bolt
		}
	case e.Type == v1alpha1.ExternalLoadBalancer:
		host, port = loadBalancerHost(svc, &out), bolt
	default:
		host, port = nodePortHost(svc, m.Pod, o, &out), svc.NodePort
	}
	if out.Waiting != "" {
		return out
	}
	if why := unusableHost(host); why != "" {
		out.Waiting, out.Unusable = why, true
		return out
	}
	out.Address = host + ":" + strconv.Itoa(int(port))
	return out
}

// loadBalancerHost is the first of svc's ingress entries Memgraph can advertise, or "" with why
// in out.
func loadBalancerHost(svc ExternalService, out *ExternalMember) string {
	if len(svc.Ingress) == 0 {
		out.Waiting = "Service " + out.Service + " has no load balancer yet (status.loadBalancer.ingress is empty)"
		return ""
	}
	for _, in := range svc.Ingress {
		switch {
		case in.IP != "" && isIPv4(in.IP):
			return in.IP
		case in.Hostname != "":
			return in.Hostname
		}
	}
	out.Waiting, out.Unusable = "Service "+out.Service+"'s load balancer has IPv6 addresses only, and a bolt_server is "+
		"host:port with one colon; give it an IPv4 address or a hostname, or set externalAccess.hostnameTemplate", true
	return ""
}

// nodePortHost is the address of the node that runs pod, or "" with why in out.
func nodePortHost(svc ExternalService, pod string, o ExternalObservation, out *ExternalMember) string {
	node, scheduled := o.PodNodes[pod]
	addresses, seen := o.NodeAddresses[node]
	switch {
	case svc.NodePort == 0:
		out.Waiting = "Service " + out.Service + " has no node port yet"
	case !scheduled:
		out.Waiting = "pod " + pod + " is not scheduled on a node yet"
	case !seen:
		out.Waiting = "node " + node + " (running " + pod + ") was not among the objects the sync carried"
	default:
		if host, ok := nodeAddress(addresses); ok {
			return host
		}
		out.Waiting, out.Unusable = "node "+node+" (running "+pod+") reports no address Memgraph can advertise (an IPv4 "+
			"address or a DNS name in status.addresses); set externalAccess.hostnameTemplate, or use type LoadBalancer", true
	}
	return ""
}

// nodeAddressOrder is the order in which a node's addresses are preferred: one reachable from
// outside the Kubernetes cluster first, an IP before a name.
var nodeAddressOrder = []corev1.NodeAddressType{
	corev1.NodeExternalIP, corev1.NodeExternalDNS, corev1.NodeInternalIP, corev1.NodeInternalDNS, corev1.NodeHostName,
}

// nodeAddress is the node's first address by nodeAddressOrder that Memgraph can advertise (no
// IPv6 literal); ok is false when it has none.
func nodeAddress(addresses []corev1.NodeAddress) (string, bool) {
	for _, typ := range nodeAddressOrder {
		for _, a := range addresses {
			if a.Type == typ && a.Address != "" && !strings.Contains(a.Address, ":") {
				return a.Address, true
			}
		}
	}
	return "", false
}

func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// unusableHost says why host cannot be a bolt_server's host (ValidateAddress's rules, and DNS's
// lengths for a name), "" when it can.
func unusableHost(host string) string {
	if len(host) > 253 {
		return fmt.Sprintf("hostname %s is longer than the 253 characters DNS allows", v1alpha1.Clip(host))
	}
	for _, label := range strings.Split(host, ".") {
		if len(label) > 63 {
			return fmt.Sprintf("hostname %s has a label longer than the 63 characters DNS allows", v1alpha1.Clip(host))
		}
	}
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return fmt.Sprintf("address %s has characters a bolt_server cannot carry (letters, digits, '-', '.' and '_' only)", v1alpha1.Clip(host))
		}
	}
	return ""
}

package v1alpha1

import "strings"

// ExternalAccessType is the kind of Service that reaches each member from outside the
// Kubernetes cluster.
// +kubebuilder:validation:Enum=LoadBalancer;NodePort
type ExternalAccessType string

const (
	ExternalLoadBalancer ExternalAccessType = "LoadBalancer"
	ExternalNodePort     ExternalAccessType = "NodePort"
)

// ExternalAccess gives every coordinator and data instance a Service of its own, reachable from
// outside the Kubernetes cluster, and has the coordinators hand routing clients (neo4j://) the
// addresses Kubernetes assigns those Services instead of the members' in-cluster names: each
// member's bolt_server follows its Service's address (UPDATE CONFIG, in place). Management,
// replication and Raft stay on the in-cluster names, and so does the hook.
// +kubebuilder:validation:XValidation:rule="self.type == 'LoadBalancer' || !has(self.loadBalancerSourceRanges)",message="externalAccess.loadBalancerSourceRanges applies to type LoadBalancer only: Kubernetes refuses it on a NodePort Service; remove it, or use type LoadBalancer"
type ExternalAccess struct {
	// Type is LoadBalancer (each member's address is its Service's status.loadBalancer.ingress,
	// on the Bolt port) or NodePort (the address of the node that runs the member's pod, on the
	// Service's node port).
	Type ExternalAccessType `json:"type"`

	// Annotations go on every member's Service, for the cloud's load balancer controller (an
	// internal load balancer, its scheme, its subnets...).
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// LoadBalancerSourceRanges restrict which client addresses (CIDRs) the load balancers
	// accept. Type LoadBalancer only.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(r, isCIDR(r))",message="externalAccess.loadBalancerSourceRanges must be CIDRs such as 203.0.113.0/24 or 2001:db8::/32"
	// +listType=atomic
	// +optional
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`

	// HostnameTemplate names each member's DNS name, such as {instance}.graph.example.com, where
	// {instance} is the member's pod name (<name>-coordinator-<id>, <name>-data-<n>). The hook
	// puts it on the member's Service as external-dns's hostname annotation
	// (external-dns.alpha.kubernetes.io/hostname) and, once the Service has its load balancer
	// (or its node port), gives clients the hostname rather than the address.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.contains('{instance}')",message="externalAccess.hostnameTemplate must contain {instance}, which becomes each member's pod name: without it every member would get the same hostname, and a routing client could not tell them apart"
	// +kubebuilder:validation:XValidation:rule="self.replace('{instance}', 'x').matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="externalAccess.hostnameTemplate must be a DNS name once {instance} is replaced, such as {instance}.graph.example.com: lower-case letters, digits, '-' and '.', without a leading or trailing dot"
	// +optional
	HostnameTemplate string `json:"hostnameTemplate,omitempty"`
}

// ExternalAccessStatus is where clients outside the Kubernetes cluster reach each member.
type ExternalAccessStatus struct {
	Type ExternalAccessType `json:"type"`

	// Members are the declared members, coordinators first: each one's Service and, once
	// Kubernetes assigned one, its address; otherwise what the address waits for.
	// +kubebuilder:validation:MaxItems=137
	// +listType=map
	// +listMapKey=name
	// +optional
	Members []ExternalMemberStatus `json:"members,omitempty"`
}

// ExternalMemberStatus is one member's external address.
type ExternalMemberStatus struct {
	// Name is the member as SHOW INSTANCES names it (coordinator_<id>, instance_<n>).
	Name string `json:"name"`

	// Service is the member's Service (<pod>-external).
	Service string `json:"service"`

	// Address is host:port as the coordinators give it to routing clients once it is advertised
	// (the ExternalAccess condition says whether it is).
	// +optional
	Address string `json:"address,omitempty"`

	// Waiting says what the address waits for, or why the one Kubernetes assigned cannot be used;
	// empty once Address is set. Until then the member is advertised at its in-cluster name.
	// +optional
	Waiting string `json:"waiting,omitempty"`
}

// Hostname is the template's hostname for pod, "" without a template.
func (e *ExternalAccess) Hostname(pod string) string {
	if e == nil || e.HostnameTemplate == "" {
		return ""
	}
	return strings.ReplaceAll(e.HostnameTemplate, InstancePlaceholder, pod)
}

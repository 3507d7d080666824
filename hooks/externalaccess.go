package hooks

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// readExternalAccess reads what spec.externalAccess's addresses come from: the cluster's child
// Services (type, the Bolt port's node port, status.loadBalancer.ingress) and, for NodePort, the
// status.addresses of the Nodes that run the cluster's pods — no other Node's, so what this keeps
// does not grow with the Kubernetes cluster. Nothing is read without spec.externalAccess.
func (o *observation) readExternalAccess(req *syncRequest, c *topology.Cluster) error {
	e := c.ExternalAccess()
	if e == nil {
		return nil
	}
	o.external = topology.ExternalObservation{Services: map[string]topology.ExternalService{}, PodNodes: o.podNodes}
	services, err := wire.Entries(req.Children, "children", wire.ServiceKey)
	if err != nil {
		return err
	}
	for _, s := range services {
		if s.Obj.Metadata.In(c.Namespace()) {
			o.external.Services[s.Obj.Metadata.Name] = externalService(s.Obj)
		}
	}
	if e.Type != v1alpha1.ExternalNodePort {
		return nil
	}
	running := map[string]bool{}
	for _, node := range o.podNodes {
		running[node] = true
	}
	nodes, err := wire.Entries(req.Related, "related", wire.NodeKey)
	if err != nil {
		return err
	}
	o.external.NodeAddresses = map[string][]corev1.NodeAddress{}
	for _, n := range nodes {
		if !running[n.Obj.Metadata.Name] {
			continue
		}
		addresses := make([]corev1.NodeAddress, 0, len(n.Obj.Status.Addresses))
		for _, a := range n.Obj.Status.Addresses {
			addresses = append(addresses, corev1.NodeAddress{Type: corev1.NodeAddressType(a.Type), Address: a.Address})
		}
		o.external.NodeAddresses[n.Obj.Metadata.Name] = addresses
	}
	return nil
}

// externalService is what Advertise reads of a Service.
func externalService(s *wire.Object) topology.ExternalService {
	out := topology.ExternalService{Type: corev1.ServiceType(s.Spec.Type)}
	for _, p := range s.Spec.Ports {
		if p.Name == topology.PortNameBolt {
			out.NodePort = p.NodePort
		}
	}
	for _, in := range s.Status.LoadBalancer.Ingress {
		out.Ingress = append(out.Ingress, corev1.LoadBalancerIngress{IP: in.IP, Hostname: in.Hostname})
	}
	return out
}

package topology

import (
	"maps"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnnotationExternalDNSHostname is external-dns's annotation for the DNS name of a Service's
// address (its load balancer's, or for a NodePort Service the nodes').
const AnnotationExternalDNSHostname = "external-dns.alpha.kubernetes.io/hostname"

// ExternalServiceName is the Service that reaches the member of pod from outside the Kubernetes
// cluster (spec.externalAccess). At most 63 characters: a cluster name of 40, then
// "-coordinator-9" or "-data-127", then "-external".
func ExternalServiceName(pod string) string { return pod + "-external" }

// ExternalAccess is spec.externalAccess, nil when unset. A hostnameTemplate AdmitWithholding
// took out is not in it.
func (c *Cluster) ExternalAccess() *v1alpha1.ExternalAccess {
	if c.mc.Spec.ExternalAccess == nil {
		return nil
	}
	return c.mc.Spec.ExternalAccess.DeepCopy()
}

// externalServices are one Service of spec.externalAccess's type per declared member,
// coordinators first, each selecting its member's pod alone (LabelPodName) on the Bolt port;
// none without spec.externalAccess. Retiring members have none: their pods are on their way
// out.
func externalServices(mc *v1alpha1.MemgraphCluster, n Network, declared Replicas) []*corev1.Service {
	if mc.Spec.ExternalAccess == nil {
		return nil
	}
	d := Declare(n, declared, declared)
	var out []*corev1.Service
	for _, c := range d.Coordinators {
		out = append(out, externalService(mc, c.Member, RoleCoordinator, mc.Spec.CoordinatorTemplate.Labels))
	}
	for _, di := range d.DataInstances {
		out = append(out, externalService(mc, di.Member, RoleData, mc.Spec.DataTemplate.Labels))
	}
	return out
}

// externalService is member m's Service: spec.externalAccess's annotations, with the template's
// hostname as external-dns's annotation, and its loadBalancerSourceRanges on a LoadBalancer.
// Its node port and cluster IP are left to the API server, so the desired object names neither.
func externalService(mc *v1alpha1.MemgraphCluster, m Member, role string, userLabels map[string]string) *corev1.Service {
	e := mc.Spec.ExternalAccess
	selector := RoleSelector(mc.Name, role)
	selector[LabelPodName] = m.Pod
	annotations := maps.Clone(e.Annotations)
	if host := e.Hostname(m.Pod); host != "" {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[AnnotationExternalDNSHostname] = host
	}
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ExternalServiceName(m.Pod), Namespace: mc.Namespace,
			Labels: roleLabels(mc.Name, role, userLabels), Annotations: annotations,
		},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceType(e.Type),
			Selector: selector,
			Ports:    []corev1.ServicePort{servicePort(PortNameBolt, mc.Spec.Ports.Bolt)},
		},
	}
	if e.Type == v1alpha1.ExternalLoadBalancer {
		svc.Spec.LoadBalancerSourceRanges = e.LoadBalancerSourceRanges
	}
	return svc
}

package topology

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ClientServiceName is the Service neo4j:// routing clients connect to: it spreads the first
// connection over the coordinators, which answer with the routing table.
func ClientServiceName(cluster string) string { return cluster }

func servicePort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}
}

// headlessService governs a role's StatefulSet, giving each pod the DNS name it advertises.
// publishNotReadyAddresses lets members find each other before they are ready, which a
// coordinator needs to join Raft and a replica needs to be registered.
func headlessService(mc *MemgraphCluster, name, role string, userLabels map[string]string, ports []corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Namespace, Labels: roleLabels(mc.Name, role, userLabels)},
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 RoleSelector(mc.Name, role),
			Ports:                    ports,
		},
	}
}

func coordinatorService(mc *MemgraphCluster) *corev1.Service {
	p := mc.Spec.Ports
	return headlessService(mc, CoordinatorSetName(mc.Name), RoleCoordinator, mc.Spec.CoordinatorTemplate.Labels, []corev1.ServicePort{
		servicePort(PortNameBolt, p.Bolt),
		servicePort(PortNameManagement, p.Management),
		servicePort(PortNameCoordinator, p.Coordinator),
	})
}

func dataService(mc *MemgraphCluster) *corev1.Service {
	p := mc.Spec.Ports
	return headlessService(mc, DataSetName(mc.Name), RoleData, mc.Spec.DataTemplate.Labels, []corev1.ServicePort{
		servicePort(PortNameBolt, p.Bolt),
		servicePort(PortNameManagement, p.Management),
		servicePort(PortNameReplication, p.Replication),
	})
}

// clientService is a ClusterIP Service on the coordinators' Bolt port. Its clusterIP is left to
// the API server (and is immutable there), so the desired object never names one.
func clientService(mc *MemgraphCluster) *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ClientServiceName(mc.Name), Namespace: mc.Namespace,
			Labels: roleLabels(mc.Name, RoleCoordinator, mc.Spec.CoordinatorTemplate.Labels),
		},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: RoleSelector(mc.Name, RoleCoordinator),
			Ports:    []corev1.ServicePort{servicePort(PortNameBolt, mc.Spec.Ports.Bolt)},
		},
	}
}

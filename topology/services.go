package topology

import (
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
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
func headlessService(mc *v1alpha1.MemgraphCluster, name, role string, userLabels map[string]string, ports []corev1.ServicePort) *corev1.Service {
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

func coordinatorService(mc *v1alpha1.MemgraphCluster) *corev1.Service {
	p := mc.Spec.Ports
	return headlessService(mc, CoordinatorSetName(mc.Name), RoleCoordinator, mc.Spec.CoordinatorTemplate.Labels, []corev1.ServicePort{
		servicePort(PortNameBolt, p.Bolt),
		servicePort(PortNameManagement, p.Management),
		servicePort(PortNameCoordinator, p.Coordinator),
	})
}

func dataService(mc *v1alpha1.MemgraphCluster) *corev1.Service {
	p := mc.Spec.Ports
	return headlessService(mc, DataSetName(mc.Name), RoleData, mc.Spec.DataTemplate.Labels, []corev1.ServicePort{
		servicePort(PortNameBolt, p.Bolt),
		servicePort(PortNameManagement, p.Management),
		servicePort(PortNameReplication, p.Replication),
	})
}

// clientService is a ClusterIP Service on the coordinators' Bolt port. Its clusterIP is left to
// the API server (and is immutable there), so the desired object never names one.
func clientService(mc *v1alpha1.MemgraphCluster) *corev1.Service {
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

// WriteServiceName is the Service that fronts the MAIN alone: a plain bolt:// client (outside
// the cluster, or a driver without routing) always writes to the MAIN through it.
func WriteServiceName(cluster string) string { return cluster + "-rw" }

// ReadServiceName is the Service that spreads connections over every data instance, MAIN
// included: reads only (a replica refuses writes).
func ReadServiceName(cluster string) string { return cluster + "-ro" }

// writeService is <cluster>-rw on the data instances' Bolt port, selecting the data pod named
// mainPod by LabelPodName. Before the MAIN is known mainPod is "", a pod name no pod has, so the
// Service selects nothing rather than a replica that would refuse writes; the pass that learns or
// moves the MAIN points it there (Rendering.MainPod).
func writeService(mc *v1alpha1.MemgraphCluster, mainPod string) *corev1.Service {
	selector := RoleSelector(mc.Name, RoleData)
	selector[LabelPodName] = mainPod
	return dataClientService(mc, WriteServiceName(mc.Name), selector)
}

// readService is <cluster>-ro on the data instances' Bolt port, selecting every data pod.
func readService(mc *v1alpha1.MemgraphCluster) *corev1.Service {
	return dataClientService(mc, ReadServiceName(mc.Name), RoleSelector(mc.Name, RoleData))
}

// dataClientService is a ClusterIP Service on the data instances' Bolt port; like the client
// Service, it names no clusterIP.
func dataClientService(mc *v1alpha1.MemgraphCluster, name string, selector map[string]string) *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: mc.Namespace,
			Labels: roleLabels(mc.Name, RoleData, mc.Spec.DataTemplate.Labels),
		},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selector,
			Ports:    []corev1.ServicePort{servicePort(PortNameBolt, mc.Spec.Ports.Bolt)},
		},
	}
}

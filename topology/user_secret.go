package topology

import (
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RoleUser is the component label of a MemgraphUser's generated Secret.
const RoleUser = "user"

// UserURIs are the ready-to-use addresses of a user's generated Secret: uri, the cluster's -rw
// Service (a bolt:// client writes through it to the MAIN alone), and routingUri, neo4j://
// routing through the coordinators' client Service; bolt+s:// and neo4j+s:// with spec.tls. Of a
// cluster not admitted yet (nil), the defaults' (cluster.local, port 7687, plaintext).
func UserURIs(u *v1alpha1.MemgraphUser, c *Cluster) (uri, routingURI string) {
	domain, port, secure := v1alpha1.DefaultClusterDomain, v1alpha1.DefaultBoltPort, false
	if c != nil {
		n := c.Network()
		domain, port, secure = n.ClusterDomain, n.Ports.Bolt, c.TLSSecretName() != ""
	}
	host := func(svc string) string { return fmt.Sprintf("%s.%s.svc.%s:%d", svc, u.Namespace, domain, port) }
	bolt, neo4j := "bolt://", "neo4j://"
	if secure {
		bolt, neo4j = "bolt+s://", "neo4j+s://"
	}
	return bolt + host(WriteServiceName(u.Spec.Cluster)), neo4j + host(ClientServiceName(u.Spec.Cluster))
}

// UserSecret is the Secret the hook generates for a MemgraphUser without spec.passwordSecret, as
// the API server stores it: the username, the password, the URIs of its cluster (c, nil when not
// admitted yet), and the annotation naming the rotation request its password answers
// (rotatedFor, "" for none).
func UserSecret(u *v1alpha1.MemgraphUser, c *Cluster, password, rotatedFor string) (map[string]any, error) {
	typed := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: v1alpha1.UserSecretName(u.Name), Namespace: u.Namespace,
			Labels: map[string]string{v1alpha1.LabelName: NameValue, v1alpha1.LabelInstance: u.Spec.Cluster, v1alpha1.LabelComponent: RoleUser, v1alpha1.LabelManagedBy: ManagedByValue},
		},
		Type: corev1.SecretTypeOpaque,
	}
	if rotatedFor != "" {
		typed.Annotations = map[string]string{v1alpha1.AnnotationRotatedFor: rotatedFor}
	}
	uri, routing := UserURIs(u, c)
	typed.Data = map[string][]byte{v1alpha1.UserUsernameKey: []byte(u.Username()), v1alpha1.UserPasswordKey: []byte(password),
		v1alpha1.UserURIKey: []byte(uri), v1alpha1.UserRoutingURIKey: []byte(routing)}
	m, err := toStoredForm(typed)
	if err != nil {
		return nil, err
	}
	return m, nil
}

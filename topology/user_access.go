package topology

import (
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A cluster's user-access Secret, <cluster>-user-access, is a child of the MemgraphCluster that
// holds what reaching the cluster's MAIN over Bolt takes — spec.tls's CA and spec.auth's
// username and password — for the cluster's MemgraphUsers. A MemgraphUser's customize hook sees
// the MemgraphUser alone, and Metacontroller caches its answer per parent UID and generation, so
// it cannot ask for the Secrets only the cluster's spec names; it asks for this one, whose name
// its own spec.cluster gives. The cluster's hook writes it on every pass from the Secrets the
// cluster names, recording the cluster generation it follows and what is wrong with either
// Secret, in words that name it.
const (
	UserAccessCAKey       = "ca.crt"
	UserAccessUsernameKey = "username"
	UserAccessPasswordKey = "password"

	// AnnotationUserAccessGeneration is the cluster's metadata.generation the copy follows;
	// AnnotationUserAccessTLSProblem and AnnotationUserAccessAuthProblem say what is wrong with
	// the spec.tls and spec.auth Secrets (absent when nothing is).
	AnnotationUserAccessGeneration  = "memgraph.com/user-access-generation"
	AnnotationUserAccessTLSProblem  = "memgraph.com/user-access-tls-problem"
	AnnotationUserAccessAuthProblem = "memgraph.com/user-access-auth-problem"
)

// UserAccessSecretName is the cluster's user-access Secret.
func UserAccessSecretName(cluster string) string { return cluster + "-user-access" }

// UserAccessSecret is the cluster's user-access Secret child in stored form, holding data
// (base64 values) and annotations exactly.
func UserAccessSecret(c *Cluster, data, annotations map[string]string) (map[string]any, error) {
	mc := c.mc
	return opaqueSecret(metav1.ObjectMeta{Name: UserAccessSecretName(mc.Name), Namespace: mc.Namespace,
		Labels:      map[string]string{v1alpha1.LabelName: NameValue, v1alpha1.LabelInstance: mc.Name, v1alpha1.LabelComponent: RoleUser, v1alpha1.LabelManagedBy: ManagedByValue},
		Annotations: annotations}, data)
}

// Role is the declared role of the cluster named name, and whether there is one.
func (c *Cluster) Role(name string) (v1alpha1.ClusterRole, bool) {
	for _, r := range c.mc.Spec.Roles {
		if r.Name == name {
			return r, true
		}
	}
	return v1alpha1.ClusterRole{}, false
}

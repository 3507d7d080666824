package topology

import (
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is a MemgraphCluster that passed admission: every default applied and every rule of
// the CRD checked, once. It can only be obtained from Admit (a hook request's parent, judged as
// the API server judges it) or NewCluster (a typed object), and the functions that derive what a
// cluster runs — its members (Network, Declare) and its children (Render) — take only
// this type, so none of them defaults, validates or copies the spec again. A Cluster is never
// modified; its accessors return values or copies.
// +kubebuilder:object:generate=false
type Cluster struct {
	mc       *v1alpha1.MemgraphCluster // defaulted and valid
	network  Network
	replicas Replicas
	// agentImage is the backup agent's image (WithAgentImage); "" is DefaultAgentImage.
	agentImage string
	// withheld is what AdmitWithholding took out of the spec.
	withheld v1alpha1.Withheld
}

// admitted wraps a defaulted, valid object.
func admitted(mc *v1alpha1.MemgraphCluster) *Cluster {
	s := &mc.Spec
	return &Cluster{
		mc: mc,
		network: Network{
			Cluster:       mc.Name,
			Namespace:     mc.Namespace,
			ClusterDomain: s.ClusterDomain,
			Ports: Ports{
				Bolt:        s.Ports.Bolt,
				Management:  s.Ports.Management,
				Replication: s.Ports.Replication,
				Coordinator: s.Ports.Coordinator,
			},
		},
		replicas: Replicas{Coordinators: s.Coordinators, DataInstances: s.DataInstances},
	}
}

// Admit admits a hook request's parent (the API's Admit) as a Cluster.
func Admit(raw []byte) (*Cluster, error) {
	mc, err := v1alpha1.Admit(raw)
	if err != nil {
		return nil, err
	}
	return admitted(mc), nil
}

// AdmitWithholding admits a hook request's parent as the API's AdmitWithholding does: Declare
// leaves the withheld coordinator settings out of Declared.Settings and lists them, with the
// rule's message, in Declared.WithheldSettings; ExternalAccessView.TemplateWithheld says why a
// withheld spec.externalAccess.hostnameTemplate is ignored.
func AdmitWithholding(raw []byte) (*Cluster, error) {
	mc, withheld, err := v1alpha1.AdmitWithholding(raw)
	if err != nil {
		return nil, err
	}
	c := admitted(mc)
	c.withheld = withheld
	return c, nil
}

// NewCluster admits a typed object (the API's MemgraphCluster.Admit) as a Cluster.
func NewCluster(mc *v1alpha1.MemgraphCluster) (*Cluster, error) {
	d, err := mc.Admit()
	if err != nil {
		return nil, err
	}
	return admitted(d), nil
}

// Name and Namespace are the cluster's metadata.name and metadata.namespace.
func (c *Cluster) Name() string      { return c.mc.Name }
func (c *Cluster) Namespace() string { return c.mc.Namespace }

// Generation is the cluster's metadata.generation.
func (c *Cluster) Generation() int64 { return c.mc.Generation }

// Network names and addresses the cluster's members.
func (c *Cluster) Network() Network { return c.network }

// Replicas are the member counts the spec declares.
func (c *Cluster) Replicas() Replicas { return c.replicas }

// Declare lists the declared members and those a shrink from span retires (see Declare).
func (c *Cluster) Declare(span Replicas) Declared {
	d := Declare(c.network, c.replicas, span)
	d.PreferredMain = c.mc.Spec.PreferredMain
	d.Settings = c.mc.Spec.CoordinatorSettings
	d.WithheldSettings = c.withheld.Settings
	for _, members := range [][]DataInstance{d.DataInstances, d.RetiringDataInstances} {
		for i := range members {
			members[i].Mode = c.mc.Spec.ModeOf(members[i].Name)
		}
	}
	return d
}

// AuthSecretName is spec.auth.secretName, "" when the hook connects without credentials.
func (c *Cluster) AuthSecretName() string {
	if c.mc.Spec.Auth == nil {
		return ""
	}
	return c.mc.Spec.Auth.SecretName
}

// TLSSecretName is spec.tls.secretName, "" when Bolt is plaintext.
func (c *Cluster) TLSSecretName() string {
	if c.mc.Spec.TLS == nil {
		return ""
	}
	return c.mc.Spec.TLS.SecretName
}

// IntraClusterTLS reports whether the spec asks for intra-cluster TLS: spec.tls is set and
// spec.tls.intraCluster is not false.
func (c *Cluster) IntraClusterTLS() bool { return c.mc.Spec.TLS.IntraClusterOn() }

// ClusterTLSSecretName is the Secret behind intra-cluster TLS (spec.tls.clusterSecretName, else
// spec.tls.secretName), "" when intra-cluster TLS is off.
func (c *Cluster) ClusterTLSSecretName() string { return c.mc.Spec.TLS.ClusterSecret() }

// PriorConditions are the conditions of the status the request carried, the one part of a prior
// status the hook reads back (for lastTransitionTime). The slice is the cluster's: do not modify.
func (c *Cluster) PriorConditions() []metav1.Condition { return c.mc.Status.Conditions }

// Image is the image both roles' pods run, as their containers name it (repository:tag, or
// repository@digest).
func (c *Cluster) Image() string { return image(&c.mc.Spec) }

// StepTimeoutSeconds is spec.rollout.stepTimeout in seconds: how long a replaced pod may fail its
// gate before the rollout reports it stuck.
func (c *Cluster) StepTimeoutSeconds() int64 { return c.mc.Spec.Rollout.StepTimeoutSeconds() }

// Spec returns a copy of the admitted spec.
func (c *Cluster) Spec() v1alpha1.MemgraphClusterSpec { return *c.mc.Spec.DeepCopy() }

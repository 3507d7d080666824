package topology

import (
	"slices"
	"strings"
)

// NamedSecret is a Secret the spec names: its name in the cluster's namespace, the field that
// names it and what it holds.
// +kubebuilder:object:generate=false
type NamedSecret struct {
	Name  string
	Field string // e.g. spec.secrets.name
	Holds string // e.g. "the enterprise license (keys MEMGRAPH_ENTERPRISE_LICENSE and MEMGRAPH_ORGANIZATION_NAME)"
}

// NamedSecrets are the Secrets the cluster's spec names, in the order spec.secrets.name,
// spec.tls.secretName, spec.tls.clusterSecretName (when another Secret), spec.auth.secretName; a
// field left unset names none.
func (c *Cluster) NamedSecrets() []NamedSecret {
	s := c.mc.Spec.Secrets
	named := []NamedSecret{{Name: s.Name, Field: "spec.secrets.name",
		Holds: "the enterprise license (keys " + s.LicenseKey + " and " + s.OrganizationKey + ")"}}
	if name := c.TLSSecretName(); name != "" {
		named = append(named, NamedSecret{Name: name, Field: "spec.tls.secretName",
			Holds: "Bolt's TLS certificate (a kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt)"})
	}
	if name := c.ClusterTLSSecretName(); name != "" && name != c.TLSSecretName() {
		named = append(named, NamedSecret{Name: name, Field: "spec.tls.clusterSecretName",
			Holds: "the intra-cluster TLS certificate (a kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt)"})
	}
	if name := c.AuthSecretName(); name != "" {
		named = append(named, NamedSecret{Name: name, Field: "spec.auth.secretName",
			Holds: "the hook's Memgraph credentials (keys username and password)"})
	}
	return named
}

// MissingSecret is a Secret the spec names that does not exist.
// +kubebuilder:object:generate=false
type MissingSecret struct {
	Namespace string
	NamedSecret
}

// MissingSecrets are the Secrets the cluster's spec names (NamedSecrets) that are not among
// existing, the names of the Secrets observed in the cluster's namespace; in NamedSecrets' order.
func MissingSecrets(c *Cluster, existing []string) []MissingSecret {
	var missing []MissingSecret
	for _, s := range c.NamedSecrets() {
		if !slices.Contains(existing, s.Name) {
			missing = append(missing, MissingSecret{Namespace: c.Namespace(), NamedSecret: s})
		}
	}
	return missing
}

// String names the Secret with its namespace, the field that names it and what it should hold.
func (m MissingSecret) String() string {
	return "Secret " + m.Namespace + "/" + m.Name + " (" + m.Field + ": " + m.Holds + ") does not exist"
}

// MissingSecretsMessage is the condition message for missing Secrets: each one named, then the
// remedy; "" when none is missing.
func MissingSecretsMessage(missing []MissingSecret) string {
	if len(missing) == 0 {
		return ""
	}
	parts := make([]string, len(missing))
	for i, m := range missing {
		parts[i] = m.String()
	}
	return strings.Join(parts, "; ") + "; pods that need it cannot start: create it in namespace " +
		missing[0].Namespace + ", or set the field to a Secret that exists"
}

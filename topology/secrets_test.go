package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
)

// everySecret is apitest.EveryKnob with spec.auth set too: it names three Secrets.
func everySecret() *v1alpha1.MemgraphCluster {
	mc := apitest.EveryKnob()
	mc.Spec.Auth = &v1alpha1.Auth{SecretName: "graph-hook-auth"}
	return mc
}

var (
	defaultLicense = MissingSecret{Namespace: "default", NamedSecret: NamedSecret{Name: "memgraph-secrets", Field: "spec.secrets.name",
		Holds: "the enterprise license (keys MEMGRAPH_ENTERPRISE_LICENSE and MEMGRAPH_ORGANIZATION_NAME)"}}
	prodLicense = MissingSecret{Namespace: "prod", NamedSecret: NamedSecret{Name: "mg-license", Field: "spec.secrets.name",
		Holds: "the enterprise license (keys license and org)"}}
	prodTLS = MissingSecret{Namespace: "prod", NamedSecret: NamedSecret{Name: "graph-bolt-tls", Field: "spec.tls.secretName",
		Holds: "Bolt's TLS certificate (a kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt)"}}
	prodAuth = MissingSecret{Namespace: "prod", NamedSecret: NamedSecret{Name: "graph-hook-auth", Field: "spec.auth.secretName",
		Holds: "the hook's Memgraph credentials (keys username and password)"}}
)

func TestMissingSecrets(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cluster  *v1alpha1.MemgraphCluster
		existing []string
		want     []MissingSecret
	}{
		{name: "the default license Secret exists", cluster: apitest.MinimalCluster(), existing: []string{"memgraph-secrets"}},
		{name: "the default license Secret is missing", cluster: apitest.MinimalCluster(), existing: []string{"other"},
			want: []MissingSecret{defaultLicense}},
		{name: "every named Secret is missing, in field order", cluster: everySecret(), existing: []string{"memgraph-secrets"},
			want: []MissingSecret{prodLicense, prodTLS, prodAuth}},
		{name: "only the TLS Secret is missing", cluster: everySecret(), existing: []string{"graph-hook-auth", "mg-license"},
			want: []MissingSecret{prodTLS}},
		{name: "every named Secret exists", cluster: everySecret(), existing: []string{"graph-bolt-tls", "graph-hook-auth", "mg-license"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MissingSecrets(admit(t, tc.cluster), tc.existing)); diff != "" {
				t.Errorf("MissingSecrets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMissingSecretsMessage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		missing []MissingSecret
		want    string
	}{
		{name: "none missing"},
		{name: "the license", missing: []MissingSecret{defaultLicense},
			want: "Secret default/memgraph-secrets (spec.secrets.name: the enterprise license (keys MEMGRAPH_ENTERPRISE_LICENSE and " +
				"MEMGRAPH_ORGANIZATION_NAME)) does not exist; pods that need it cannot start: create it in namespace default, " +
				"or set the field to a Secret that exists"},
		{name: "two", missing: []MissingSecret{prodTLS, prodAuth},
			want: "Secret prod/graph-bolt-tls (spec.tls.secretName: Bolt's TLS certificate (a kubernetes.io/tls Secret with tls.crt, " +
				"tls.key and ca.crt)) does not exist; Secret prod/graph-hook-auth (spec.auth.secretName: the hook's Memgraph credentials " +
				"(keys username and password)) does not exist; pods that need it cannot start: create it in namespace prod, " +
				"or set the field to a Secret that exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MissingSecretsMessage(tc.missing)); diff != "" {
				t.Errorf("MissingSecretsMessage (-want +got):\n%s", diff)
			}
		})
	}
}

package manifests_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/examples"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// certificateRecipe is the cert-manager Certificate of memgraph-cluster-certificate.yaml that
// issues the cluster's TLS Secret.
type certificateRecipe struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		SecretName string   `json:"secretName"`
		IsCA       bool     `json:"isCA"`
		Usages     []string `json:"usages"`
		DNSNames   []string `json:"dnsNames"`
	} `json:"spec"`
}

// The recipe's certificate names exactly the FQDNs the hook registers for the example cluster
// (every coordinator's and data instance's, as topology names them), in the namespace the recipe
// is written for, with both usages mutual intra-cluster TLS needs — so the hook's own check
// (TLSCertificateMismatch) finds nothing to say about the Secret it produces.
func TestClusterCertificateRecipeCoversEveryRegisteredMember(t *testing.T) {
	raw, err := os.ReadFile("cert-manager/memgraph-cluster-certificate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var leaf *certificateRecipe
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var c certificateRecipe
		if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
			t.Fatalf("memgraph-cluster-certificate.yaml: %v", err)
		}
		if c.Kind == "Certificate" && !c.Spec.IsCA {
			leaf = &c
		}
	}
	if leaf == nil {
		t.Fatal("memgraph-cluster-certificate.yaml holds no leaf Certificate")
	}

	cluster := exampleClusterWithTLS(t, leaf.Metadata.Namespace, leaf.Spec.SecretName)
	n, r := cluster.Network(), cluster.Replicas()
	var want []string
	for i := range int(r.Coordinators) {
		want = append(want, n.Coordinator(topology.FirstCoordinatorID+i).Host)
	}
	for i := range int(r.DataInstances) {
		want = append(want, n.DataInstance(topology.FirstDataOrdinal+i).Host)
	}
	if diff := cmp.Diff(want, leaf.Spec.DNSNames); diff != "" {
		t.Errorf("the Certificate's dnsNames are not the FQDNs the hook registers (-want +got):\n%s", diff)
	}
	for _, usage := range []string{"server auth", "client auth"} {
		if !slices.Contains(leaf.Spec.Usages, usage) {
			t.Errorf("the Certificate lacks the usage %q (each instance is server and client to its peers)", usage)
		}
	}
	if cluster.TLSSecretName() != leaf.Spec.SecretName || cluster.ClusterTLSSecretName() != leaf.Spec.SecretName {
		t.Errorf("the Certificate's Secret %q is not the cluster's Bolt and intra-cluster Secret", leaf.Spec.SecretName)
	}
}

// exampleClusterWithTLS is examples/minimal-cluster.yaml in namespace with spec.tls.secretName.
func exampleClusterWithTLS(t *testing.T, namespace, secret string) *topology.Cluster {
	t.Helper()
	raw, err := examples.MinimalClusterIn(namespace)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	obj["spec"] = map[string]any{"tls": map[string]any{"secretName": secret}}
	if raw, err = json.Marshal(obj); err != nil {
		t.Fatal(err)
	}
	mc, err := v1alpha1.DecodeCluster(raw)
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := topology.NewCluster(mc)
	if err != nil {
		t.Fatal(err)
	}
	return cluster
}

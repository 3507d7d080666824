// Package clustersecrets reads what the Secrets a MemgraphCluster's spec names give the hook:
// spec.tls's trust (the CA its coordinators are verified with, the certificate every instance is
// to serve, the stamp of the TLS material), what is wrong with the intra-cluster TLS Secret, and
// spec.auth's credentials. Anything wrong with a Secret is a sentence for the status that names
// the Secret and never quotes its content; private keys are never decoded.
package clustersecrets

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Trust is what spec.tls asks of this pass: nothing (plaintext), the CA to verify the
// coordinators with, or a problem with the Secret that stops the pass from dialling at all.
// A problem is a sentence naming the Secret and what is wrong with it; it never quotes the
// Secret's content.
type Trust struct {
	Config  *memgraph.BoltTLS
	Problem string
	// Peers is what is wrong with the intra-cluster TLS Secret (ReadClusterTLS): a condition of
	// the status, never a reason to dial nothing.
	Peers string
	// Leaf is the digest of the Secret's tls.crt leaf (memgraph.Digest), the certificate every
	// instance is to serve; Stamp is topology.CertificateStamp of the Secrets (rotation).
	Leaf  [sha256.Size]byte
	Stamp string
	// CAPEM is the Secret's ca.crt, which a backup agent verifies its own pod's Memgraph with.
	CAPEM []byte
}

// Read finds the spec.tls (Bolt's and intra-cluster) and spec.auth Secrets among the related objects (the customize
// hook asks Metacontroller for them) and reads them: a malformed related object is a bad request;
// anything wrong with a Secret itself is a problem for the status.
func Read(related wire.Groups, c *topology.Cluster) (Trust, Auth, error) {
	if c.TLSSecretName() == "" && c.AuthSecretName() == "" {
		return Trust{}, Auth{}, nil // no spec.tls, so no intra-cluster TLS either
	}
	secrets, err := wire.Entries(related, "related", wire.SecretKey)
	if err != nil {
		return Trust{}, Auth{}, err
	}
	find := func(name string) *wire.Object {
		for i := range secrets {
			if m := secrets[i].Obj.Metadata; m.Name == name && m.In(c.Namespace()) {
				return secrets[i].Obj
			}
		}
		return nil
	}
	trust := ReadBoltTLS(find(c.TLSSecretName()), c)
	trust.Peers = ReadClusterTLS(find(c.ClusterTLSSecretName()), c)
	trust.Stamp = certificateStamp(find(c.TLSSecretName()), find(c.ClusterTLSSecretName()), c)
	return trust, ReadAuth(find(c.AuthSecretName()), c), nil
}

// ReadBoltTLS checks the spec.tls Secret s (nil when absent): a kubernetes.io/tls Secret whose
// tls.crt verifies against its ca.crt for every declared coordinator. Only ca.crt is kept;
// tls.key is never decoded.
func ReadBoltTLS(s *wire.Object, c *topology.Cluster) Trust {
	if c.TLSSecretName() == "" {
		return Trust{}
	}
	where := fmt.Sprintf("Secret %s/%s (spec.tls.secretName)", c.Namespace(), c.TLSSecretName())
	if s == nil {
		return Trust{Problem: where + " does not exist: create a kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt in the cluster's namespace"}
	}
	trust, leaf, problem := checkTLSSecret(s, c)
	if problem != "" {
		return Trust{Problem: where + " " + problem}
	}
	ca, _ := base64.StdEncoding.DecodeString(s.Data[topology.BoltCAKey]) // checkTLSSecret decoded it
	return Trust{Config: trust, Leaf: memgraph.Digest(leaf), CAPEM: ca}
}

// certificateStamp identifies the TLS material of the spec.tls Secret (bolt) and, when another
// one, the intra-cluster Secret (cluster): topology.CertificateStamp of their values as sent.
func certificateStamp(bolt, cluster *wire.Object, c *topology.Cluster) string {
	if bolt == nil {
		return ""
	}
	var clusterCert, clusterCA string
	if cluster != nil && c.ClusterTLSSecretName() != c.TLSSecretName() {
		clusterCert, clusterCA = cluster.Data[topology.BoltCertKey], cluster.Data[topology.BoltCAKey]
	}
	return topology.CertificateStamp(bolt.Data[topology.BoltCertKey], bolt.Data[topology.BoltCAKey], clusterCert, clusterCA)
}

func checkTLSSecret(s *wire.Object, c *topology.Cluster) (*memgraph.BoltTLS, *x509.Certificate, string) {
	if s.Type != string(corev1.SecretTypeTLS) {
		return nil, nil, fmt.Sprintf("is of type %q, want %s", s.Type, corev1.SecretTypeTLS)
	}
	values := map[string][]byte{}
	for _, key := range []string{topology.BoltCAKey, topology.BoltCertKey, topology.BoltKeyKey} {
		encoded := s.Data[key]
		if encoded == "" {
			return nil, nil, "has no " + key + ": it needs tls.crt and tls.key (the pods serve them) and ca.crt (the hook verifies the coordinators with it)"
		}
		if key == topology.BoltKeyKey {
			continue // the private key is the pods' business: the hook never decodes it
		}
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return nil, nil, "has a " + key + " that is not valid base64"
		}
		values[key] = raw
	}
	trust, err := memgraph.NewBoltTLS(values[topology.BoltCAKey])
	if err != nil {
		return nil, nil, "has an unusable ca.crt: " + err.Error()
	}
	chain := certificates(values[topology.BoltCertKey])
	if len(chain) == 0 {
		return nil, nil, "has a tls.crt that holds no PEM certificate"
	}
	n := c.Network()
	for i := range int(c.Replicas().Coordinators) {
		host := n.Coordinator(topology.FirstCoordinatorID + i).Host
		if err := trust.Verify(chain, host); err != nil {
			return nil, nil, fmt.Sprintf("has a tls.crt that does not verify against its ca.crt for coordinator %s: %v", host, err)
		}
	}
	return trust, chain[0], ""
}

// certificates parses the CERTIFICATE blocks of a PEM chain, leaf first; a block that does not
// parse ends the chain.
func certificates(pemBytes []byte) []*x509.Certificate {
	var chain []*x509.Certificate
	for {
		var block *pem.Block
		block, pemBytes = pem.Decode(pemBytes)
		if block == nil {
			return chain
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return chain
		}
		chain = append(chain, cert)
	}
}

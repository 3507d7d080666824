package clustersecrets

import (
	"crypto/x509"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// ReadClusterTLS checks the intra-cluster TLS Secret s (nil when absent) against what the
// members need of it, and returns what is wrong as a sentence for the status, "" when nothing is
// or intra-cluster TLS is off. Each instance presents tls.crt both as a server and as a client
// (Memgraph's intra-cluster TLS is mutual) and verifies its peers against ca.crt alone, never
// against a host name (cluster_tls.cpp 33–104 sets no name check, nor does NuRaft's context in
// raft_state.cpp 297–315), so tls.crt must verify against ca.crt for both uses, whatever names
// it lists. When the Secret is spec.tls.secretName's, tls.crt is also the Bolt certificate the
// hook verifies each member by name with, so it must then be valid for every member's FQDN. A
// problem is a condition (TLSCertificateMismatch), never a reason to stop: the pods that mount
// the Secret run whatever the hook thinks of it. The sentence never quotes the Secret's content;
// tls.key is never decoded.
func ReadClusterTLS(s *wire.Object, c *topology.Cluster) string {
	name := c.ClusterTLSSecretName()
	if name == "" {
		return ""
	}
	field := "spec.tls.secretName"
	if name != c.TLSSecretName() {
		field = "spec.tls.clusterSecretName"
	}
	if s == nil {
		return "" // a Secret the spec names that is absent is SecretMissing (topology.MissingSecrets)
	}
	where := fmt.Sprintf("Secret %s/%s (%s, intra-cluster TLS)", c.Namespace(), name, field)
	if problem := checkClusterTLSSecret(s, c); problem != "" {
		return where + " " + problem
	}
	return ""
}

func checkClusterTLSSecret(s *wire.Object, c *topology.Cluster) string {
	if s.Type != string(corev1.SecretTypeTLS) {
		return fmt.Sprintf("is of type %q, want %s", s.Type, corev1.SecretTypeTLS)
	}
	if s.Data[topology.BoltKeyKey] == "" {
		return "has no tls.key: every instance needs tls.crt, tls.key and ca.crt"
	}
	var decoded [2][]byte
	for i, key := range []string{topology.BoltCAKey, topology.BoltCertKey} {
		raw, err := base64.StdEncoding.DecodeString(s.Data[key])
		switch {
		case s.Data[key] == "":
			return "has no " + key + ": every instance needs tls.crt, tls.key and ca.crt"
		case err != nil:
			return "has a " + key + " that is not valid base64"
		}
		decoded[i] = raw
	}
	roots := certificates(decoded[0])
	if len(roots) == 0 {
		return "has a ca.crt that holds no PEM certificate"
	}
	chain := certificates(decoded[1])
	if len(chain) == 0 {
		return "has a tls.crt that holds no PEM certificate"
	}
	if problem := verifyBothWays(chain, roots); problem != "" {
		return problem
	}
	if c.ClusterTLSSecretName() != c.TLSSecretName() {
		return "" // intra-cluster TLS alone: Memgraph checks no name
	}
	if host := uncoveredMember(chain[0], c); host != "" {
		return fmt.Sprintf("has a tls.crt whose names do not cover %s, whose Bolt port the hook verifies by that name: "+
			"give the certificate the DNS names *.%s.%s.svc.%s and *.%s.%s.svc.%s (or each member's FQDN)", host,
			topology.CoordinatorSetName(c.Name()), c.Namespace(), c.Network().ClusterDomain,
			topology.DataSetName(c.Name()), c.Namespace(), c.Network().ClusterDomain)
	}
	return ""
}

// verifyBothWays checks that chain (leaf first) verifies against roots for a server and for a
// client: each instance is both to its peers.
func verifyBothWays(chain, roots []*x509.Certificate) string {
	pool, inter := x509.NewCertPool(), x509.NewCertPool()
	for _, r := range roots {
		pool.AddCert(r)
	}
	for _, i := range chain[1:] {
		inter.AddCert(i)
	}
	for _, use := range []struct {
		usage x509.ExtKeyUsage
		as    string
	}{{x509.ExtKeyUsageServerAuth, "server"}, {x509.ExtKeyUsageClientAuth, "client"}} {
		opts := x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{use.usage}}
		if _, err := chain[0].Verify(opts); err != nil {
			return fmt.Sprintf("has a tls.crt that does not verify against its ca.crt as a %s certificate (each instance is "+
				"server and client to its peers: give it the usages server auth and client auth): %v", use.as, err)
		}
	}
	return ""
}

// uncoveredMember is the first declared member's FQDN that leaf is not valid for, "" when it
// covers them all. Coordinators first, then data instances, by ordinal.
func uncoveredMember(leaf *x509.Certificate, c *topology.Cluster) string {
	n, r := c.Network(), c.Replicas()
	for i := range int(r.Coordinators) {
		if host := n.Coordinator(topology.FirstCoordinatorID + i).Host; leaf.VerifyHostname(host) != nil {
			return host
		}
	}
	for i := range int(r.DataInstances) {
		if host := n.DataInstance(i).Host; leaf.VerifyHostname(host) != nil {
			return host
		}
	}
	return ""
}

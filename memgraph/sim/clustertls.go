package sim

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
)

// peerIdentity is what an instance with intra-cluster TLS presents and trusts: its certificate
// chain (leaf first) as server and as client, and the CA bundle it verifies its peers with
// (src/communication/cluster_tls.cpp: mutual TLS, the CA file the sole trust anchor).
type peerIdentity struct {
	chain []*x509.Certificate
	roots *x509.CertPool
}

// loadPeerIdentity reads the three --cluster-* files as BuildClusterSslContext does
// (cluster_tls.cpp 33–104): the chain, then the key (which must match the certificate), then
// the CA; a failure is its message, prefixed with label.
func loadPeerIdentity(f TLSFiles, label string) (*peerIdentity, string) {
	certPEM, err := os.ReadFile(f.ClusterCert)
	chain := certificatesIn(certPEM)
	if err != nil || len(chain) == 0 {
		return nil, fmt.Sprintf("%s: couldn't load certificate from %s: %s", label, f.ClusterCert, fileError(err))
	}
	if _, msg := keyPair(certPEM, f.ClusterKey); msg != "" {
		return nil, fmt.Sprintf("%s: couldn't load private key from %s: %s", label, f.ClusterKey, msg)
	}
	caPEM, err := os.ReadFile(f.ClusterCA)
	cas := certificatesIn(caPEM)
	if err != nil || len(cas) == 0 {
		reason := "no certificate or crl found"
		if err != nil {
			reason = fileError(err)
		}
		return nil, fmt.Sprintf("%s: couldn't load CA from %s: %s", label, f.ClusterCA, reason)
	}
	roots := x509.NewCertPool()
	for _, c := range cas {
		roots.AddCert(c)
	}
	return &peerIdentity{chain: chain, roots: roots}, ""
}

// trusts reports whether id accepts peer's chain for usage: the chain verifies against id's CA
// bundle. Memgraph's cluster contexts verify the chain (SSL_VERIFY_PEER); names are not
// checked here.
func (id *peerIdentity) trusts(peer *peerIdentity, usage x509.ExtKeyUsage) error {
	inter := x509.NewCertPool()
	for _, c := range peer.chain[1:] {
		inter.AddCert(c)
	}
	_, err := peer.chain[0].Verify(x509.VerifyOptions{Roots: id.roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}

// peerRefusal is why client cannot reach server over Memgraph's intra-cluster channels
// (management, replication, Raft), "" when it can: both run without intra-cluster TLS, or both
// with it and each accepts the other's certificate (the server the client's, as a client
// certificate; the client the server's). A TLS server refuses a plaintext peer and the other
// way round. Caller holds w.mu.
func peerRefusal(client, server *instance) string {
	switch a, b := client.peer, server.peer; {
	case a == nil && b == nil:
		return ""
	case a == nil || b == nil:
		return fmt.Sprintf("%s and %s do not both run intra-cluster TLS", client.host, server.host)
	case b.trusts(a, x509.ExtKeyUsageClientAuth) != nil:
		return fmt.Sprintf("%s refuses the client certificate of %s: unknown CA", server.host, client.host)
	case a.trusts(b, x509.ExtKeyUsageServerAuth) != nil:
		return fmt.Sprintf("%s refuses the server certificate of %s: unknown CA", client.host, server.host)
	}
	return ""
}

// leaderInstance is the process of c's leader, nil when there is none. Caller holds w.mu.
func (w *World) leaderInstance(c *cluster) *instance {
	m := c.member(c.leader)
	if m == nil {
		return nil
	}
	in, ok := w.instances[m.host]
	if !ok || !in.alive {
		return nil
	}
	return in
}

// reachableFromLeader: the leader's intra-cluster channel to in works (none is needed without
// a leader, or to itself). Caller holds w.mu.
func (w *World) reachableFromLeader(c *cluster, in *instance) bool {
	leader := w.leaderInstance(c)
	return leader == nil || leader == in || peerRefusal(leader, in) == ""
}

// pemBlocks are the DER bytes of data's PEM blocks of type kind.
func pemBlocks(data []byte, kind string) [][]byte {
	var out [][]byte
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return out
		}
		if b.Type == kind {
			out = append(out, b.Bytes)
		}
	}
}

func hasPrivateKey(data []byte) bool {
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return false
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			return true
		}
	}
}

// PeerCertificate is the intra-cluster TLS certificate host's process presents to its peers
// (read at start or by the last RELOAD INTRA_CLUSTER TLS); nil without intra-cluster TLS or
// for an unknown host.
func (w *World) PeerCertificate(host string) *x509.Certificate {
	w.mu.Lock()
	defer w.mu.Unlock()
	in, ok := w.instances[host]
	if !ok || in.peer == nil {
		return nil
	}
	return in.peer.chain[0]
}

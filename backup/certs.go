package backup

import (
	"crypto/rand"
	"errors"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
)

// AgentTLSValidity is how long the agents' CA and serving certificate are valid: ten years. The
// Secret holding them is generated once per cluster and never rotated by the hook (the agent is
// reached only by the hook, which trusts exactly this CA); delete the Secret to have a new pair
// generated.
const AgentTLSValidity = 10 * 365 * 24 * time.Hour

// AgentTLS is the material of a cluster's backup-agent Secret, PEM-encoded.
type AgentTLS struct {
	CA, Cert, Key []byte
}

// NewAgentTLS generates a CA and an ECDSA P-256 serving certificate signed by it, valid for
// AgentTLSValidity, for every name in dnsNames (the data pods' FQDNs, or a wildcard for them).
func NewAgentTLS(dnsNames []string) (AgentTLS, error) {
	if len(dnsNames) == 0 {
		return AgentTLS{}, errors.New("the agent certificate needs at least one DNS name")
	}
	ca, err := pki.NewAuthority("memgraph-hooks backup-agent CA", AgentTLSValidity)
	if err != nil {
		return AgentTLS{}, err
	}
	pair, err := ca.Issue(pki.Leaf{CommonName: dnsNames[0], DNSNames: dnsNames, Server: true, Validity: AgentTLSValidity})
	if err != nil {
		return AgentTLS{}, err
	}
	return AgentTLS{CA: ca.CertPEM, Cert: pair.CertPEM, Key: pair.KeyPEM}, nil
}

// NewToken returns a random bearer token for the agents (128 bits, base32).
func NewToken() string {
	return rand.Text()
}

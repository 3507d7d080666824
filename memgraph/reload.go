package memgraph

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
)

// The reload queries (grammar reloadSSLQuery, MemgraphCypher.g4:948). Coordinators and data
// instances of either role run them, outside an explicit transaction; each re-reads the files
// its flags name and, only when they all load, serves them to new connections (open ones keep
// theirs): BOLT_SERVER the --bolt-cert-file/--bolt-key-file pair, INTRA_CLUSTER the three
// --cluster-*-file files for the replication and management servers and clients and NuRaft's
// (src/query/interpreter.cpp 5183–5255).
const (
	ReloadBoltTLSQuery    = "RELOAD BOLT_SERVER TLS"
	ReloadClusterTLSQuery = "RELOAD INTRA_CLUSTER TLS"
)

// TLSReloader is a Client that can make its instance re-read its TLS files: query is one of
// ReloadBoltTLSQuery and ReloadClusterTLSQuery. A refusal is an *Error carrying Memgraph's
// message.
type TLSReloader interface {
	ReloadTLS(ctx context.Context, query string) error
}

// CertificateProbe is a Connector that can see which certificate an instance serves: a new TLS
// handshake with the instance advertised at address (dialled through the Resolver, verified
// like a Bolt connection), no Bolt message. The leaf is what the handshake presented.
type CertificateProbe interface {
	ServedCertificate(ctx context.Context, address string) (*x509.Certificate, error)
}

// Digest identifies a certificate by the SHA-256 of its DER bytes.
func Digest(c *x509.Certificate) [sha256.Size]byte { return sha256.Sum256(c.Raw) }

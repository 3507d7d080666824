package sim

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// TLSFiles are an instance's TLS flags that name files: Memgraph reads them when the process
// starts and again on RELOAD … TLS, never in between. "" leaves a flag unset.
type TLSFiles struct {
	BoltCert, BoltKey string // --bolt-cert-file, --bolt-key-file
	// --cluster-cert-file, --cluster-key-file, --cluster-ca-file: all three or none.
	ClusterCert, ClusterKey, ClusterCA string
}

func (f TLSFiles) bolt() bool { return f.BoltCert != "" && f.BoltKey != "" }
func (f TLSFiles) cluster() bool {
	return f.ClusterCert != "" || f.ClusterKey != "" || f.ClusterCA != ""
}

func (i *instance) files() TLSFiles {
	if i.coord {
		return i.cspec.Files
	}
	return i.dspec.Files
}

// boltTLS is the instance's Bolt TLS configuration: from its files when it names them (the
// certificate served is whatever the last start or RELOAD BOLT_SERVER TLS read), else its
// spec's; nil serves plaintext.
func (i *instance) boltTLS() *tls.Config {
	if i.files().bolt() {
		return &tls.Config{MinVersion: tls.VersionTLS12,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return i.boltCert.Load(), nil }}
	}
	if i.coord {
		return i.cspec.TLS
	}
	return i.dspec.TLS
}

// loadTLS reads the instance's TLS files as its process starts; an error is Memgraph's fatal
// start-up message, and the process does not start. Caller holds w.mu.
func (i *instance) loadTLS() error {
	f := i.files()
	i.boltCert.Store(nil)
	i.peer = nil
	if f.bolt() {
		pair, msg := loadBoltPair(f)
		if msg != "" {
			return errors.New(msg)
		}
		i.boltCert.Store(pair)
	}
	if f.cluster() {
		if f.ClusterCert == "" || f.ClusterKey == "" || f.ClusterCA == "" {
			return errors.New("--cluster-cert-file, --cluster-key-file and --cluster-ca-file must all be set or none")
		}
		id, msg := loadPeerIdentity(f, "Cluster server TLS")
		if msg != "" {
			return fmt.Errorf("Failed to initialize cluster server TLS: %s", msg)
		}
		i.peer = id
	}
	return nil
}

// reloadBolt is RELOAD BOLT_SERVER TLS (src/communication/context.cpp 115–189): it re-reads
// the certificate chain and key, and only a pair that loads replaces the served one; sessions
// already open keep theirs. Caller holds w.mu.
func (i *instance) reloadBolt() string {
	f := i.files()
	if !f.bolt() {
		if i.boltTLS() != nil {
			return "" // TLS material not from files: nothing on disk to re-read
		}
		return msgReloadBoltUnset
	}
	pair, msg := loadBoltPair(f)
	if msg != "" {
		return msg
	}
	i.boltCert.Store(pair)
	return ""
}

// reloadCluster is RELOAD INTRA_CLUSTER TLS (src/query/interpreter.cpp 5205–5247): the server
// context, the client context and NuRaft's are all prepared from the files before any is
// committed, so a file that fails leaves the previous identity in force. Caller holds w.mu.
func (i *instance) reloadCluster() string {
	f := i.files()
	if !f.cluster() {
		if i.boltTLS() != nil && !f.bolt() {
			return "" // TLS given in memory (Spec.TLS): nothing on disk to re-read
		}
		return "cluster server TLS: Cluster server TLS: key or certificate file is empty."
	}
	id, msg := loadPeerIdentity(f, "Cluster server TLS")
	if msg != "" {
		return "cluster server TLS: " + msg
	}
	i.peer = id
	return ""
}

func loadBoltPair(f TLSFiles) (*tls.Certificate, string) {
	certPEM, err := os.ReadFile(f.BoltCert)
	if err != nil || len(certificatesIn(certPEM)) == 0 {
		return nil, fmt.Sprintf("Couldn't load server certificate from file %s. Error: %s", f.BoltCert, fileError(err))
	}
	pair, msg := keyPair(certPEM, f.BoltKey)
	if msg != "" {
		return nil, fmt.Sprintf("Couldn't load server private key from file %s. Error: %s", f.BoltKey, msg)
	}
	return pair, ""
}

// keyPair loads the private key at keyFile for certPEM; the message is OpenSSL's reason.
func keyPair(certPEM []byte, keyFile string) (*tls.Certificate, string) {
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fileError(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	switch {
	case err != nil && len(certificatesIn(keyPEM)) == 0 && !hasPrivateKey(keyPEM):
		return nil, "no start line"
	case err != nil:
		return nil, "key values mismatch"
	}
	return &pair, ""
}

func fileError(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "No such file or directory"
	}
	return "no start line"
}

// certificatesIn parses the CERTIFICATE blocks of a PEM file.
func certificatesIn(data []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for _, der := range pemBlocks(data, "CERTIFICATE") {
		if c, err := x509.ParseCertificate(der); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// listenBolt opens a Bolt listener, TLS-only when cfg is set (Memgraph then refuses plaintext).
func listenBolt(addr string, h bolt.Handler, cfg *tls.Config) (*bolt.Server, error) {
	if cfg != nil {
		return bolt.ListenTLS(addr, h, cfg)
	}
	return bolt.Listen(addr, h)
}

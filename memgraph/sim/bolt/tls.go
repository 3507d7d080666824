package bolt

import (
	"crypto/tls"
	"errors"
	"net"
)

// ListenTLS starts a Bolt server that accepts only TLS connections, as Memgraph does once it is
// started with --bolt-cert-file and --bolt-key-file: a plaintext client's handshake fails and the
// connection is closed. cfg must carry the server's certificate.
func ListenTLS(addr string, h Handler, cfg *tls.Config) (*Server, error) {
	if cfg == nil || (len(cfg.Certificates) == 0 && cfg.GetCertificate == nil) {
		return nil, errors.New("bolt: a TLS listener needs a certificate")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return serve(tls.NewListener(ln, cfg), h), nil
}

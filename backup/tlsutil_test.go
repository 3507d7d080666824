package backup_test

import (
	"crypto/tls"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
)

func tlsKeyPair(m backup.AgentTLS) (*tls.Config, error) {
	pair, err := tls.X509KeyPair(m.Cert, m.Key)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

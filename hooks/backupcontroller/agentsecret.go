package backupcontroller

import (
	"encoding/base64"
	"encoding/json"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// NewAgentSecretData is fresh backup-agent Secret data for c (base64 values): a random token,
// and a CA with an ECDSA serving certificate for every data pod (backup.NewAgentTLS), valid for
// backup.AgentTLSValidity.
func NewAgentSecretData(c *topology.Cluster) (map[string]string, error) {
	material, err := backup.NewAgentTLS(c.Network().BackupAgentDNSNames())
	if err != nil {
		return nil, err
	}
	enc := base64.StdEncoding.EncodeToString
	return map[string]string{
		topology.BackupAgentTokenKey: enc([]byte(backup.NewToken())),
		topology.BackupAgentCertKey:  enc(material.Cert),
		topology.BackupAgentKeyKey:   enc(material.Key),
		topology.BackupAgentCAKey:    enc(material.CA),
	}, nil
}

// ObservedAgentSecret is the data of the cluster's backup-agent Secret among the children,
// nil when it is absent or incomplete.
func ObservedAgentSecret(children wire.Groups, c *topology.Cluster) (map[string]string, error) {
	secrets, err := wire.Entries(children, "children", wire.SecretKey)
	if err != nil {
		return nil, err
	}
	for _, e := range secrets {
		if e.Obj.Metadata.In(c.Namespace()) && e.Obj.Metadata.Name == topology.BackupAgentSecretName(c.Name()) &&
			topology.BackupAgentSecretComplete(e.Obj.Data) {
			return e.Obj.Data, nil
		}
	}
	return nil, nil
}

// AgentSecretChild is the backup-agent Secret child, as JSON.
func AgentSecretChild(c *topology.Cluster, s AgentSecret) ([]byte, error) {
	secret, err := topology.BackupAgentSecret(c, s.Data, s.Annotations)
	if err != nil {
		return nil, err
	}
	return json.Marshal(secret)
}

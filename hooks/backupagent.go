package hooks

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// observedAgentSecret is the data of the cluster's backup-agent Secret among the children,
// nil when it is absent or incomplete.
func observedAgentSecret(req *syncRequest, c *topology.Cluster) (map[string]string, error) {
	secrets, err := entries(req.Children, "children", secretKey)
	if err != nil {
		return nil, err
	}
	for _, e := range secrets {
		if e.obj.Metadata.in(c.Namespace()) && e.obj.Metadata.Name == topology.BackupAgentSecretName(c.Name()) &&
			topology.BackupAgentSecretComplete(e.obj.Data) {
			return e.obj.Data, nil
		}
	}
	return nil, nil
}

// ensureAgentSecret sets the backup-agent Secret's data when none was observed, from generate
// (nil: NewAgentSecretData, remembered per cluster — namespace, name, uid — until the Secret is
// observed, so that syncs in between return the same Secret). Once Metacontroller has created
// it, every sync returns what it observes.
func ensureAgentSecret(obs *observation, c *topology.Cluster, generate func(*topology.Cluster) (map[string]string, error)) error {
	key := c.Namespace() + "/" + c.Name() + "/" + c.UID()
	if obs.agentSecret != nil {
		generatedAgentSecrets.forget(key)
		return nil
	}
	var err error
	if generate != nil {
		obs.agentSecret, err = generate(c)
		return err
	}
	obs.agentSecret, err = generatedAgentSecrets.get(key, func() (map[string]string, error) { return NewAgentSecretData(c) })
	return err
}

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

// agentSecretCache holds generated backup-agent Secret data not yet observed, bounded: past
// maxPending entries it starts over (a cluster whose Secret is never created gets new data).
type agentSecretCache struct {
	mu      sync.Mutex
	pending map[string]map[string]string
}

const maxPendingAgentSecrets = 1024

var generatedAgentSecrets = &agentSecretCache{pending: map[string]map[string]string{}}

func (a *agentSecretCache) get(key string, generate func() (map[string]string, error)) (map[string]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if data, ok := a.pending[key]; ok {
		return data, nil
	}
	data, err := generate()
	if err != nil {
		return nil, err
	}
	if len(a.pending) >= maxPendingAgentSecrets {
		clear(a.pending)
	}
	a.pending[key] = data
	return data, nil
}

func (a *agentSecretCache) forget(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.pending, key)
}

// withAgentSecret appends the backup-agent Secret child to a JSON array of children.
func withAgentSecret(children []byte, c *topology.Cluster, data map[string]string) ([]byte, error) {
	if data == nil {
		return children, nil
	}
	secret, err := topology.BackupAgentSecret(c, data)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(secret)
	if err != nil {
		return nil, err
	}
	// Appended to the rendered (cached) array as bytes: decoding and re-encoding every child on
	// every sync would cost more than the rendering the cache saves.
	list := bytes.TrimRight(children, " \n")
	if len(list) < 2 || list[0] != '[' || list[len(list)-1] != ']' {
		return nil, fmt.Errorf("rendered children are not a JSON array")
	}
	out := make([]byte, 0, len(list)+len(raw)+1)
	out = append(out, list[:len(list)-1]...)
	if len(list) > 2 {
		out = append(out, ',')
	}
	return append(append(out, raw...), ']'), nil
}

package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/backups"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// observedAgentSecret is the data of the cluster's backup-agent Secret among the children,
// nil when it is absent or incomplete.
func observedAgentSecret(req *syncRequest, c *topology.Cluster) (map[string]string, error) {
	secrets, err := wire.Entries(req.Children, "children", wire.SecretKey)
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

// ensureAgentSecret sets the backup-agent Secret's data when none was observed, from generate
// (nil: backups.NewAgentSecretData, remembered per cluster — namespace, name, uid — until the Secret is
// observed, so that syncs in between return the same Secret). Once Metacontroller has created
// it, every sync returns what it observes.
func ensureAgentSecret(obs *observation, c *topology.Cluster, generate func(*topology.Cluster) (map[string]string, error)) error {
	key := c.Namespace() + "/" + c.Name() + "/" + c.UID()
	if obs.agentSecret != nil {
		generatedAgentSecrets.Forget(key)
		return nil
	}
	var err error
	if generate != nil {
		obs.agentSecret, err = generate(c)
		return err
	}
	obs.agentSecret, err = generatedAgentSecrets.Get(key, func() (map[string]string, error) { return backups.NewAgentSecretData(c) })
	return err
}

// generatedAgentSecrets are the agent Secrets generated and not yet observed, of every cluster.
var generatedAgentSecrets = backups.NewAgentSecretCache()

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

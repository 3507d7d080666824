package hooks

import (
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/pending"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// ensureAgentSecret sets the backup-agent Secret's data when none was observed, from generate
// (nil: backupcontroller.NewAgentSecretData, remembered per cluster — namespace, name, uid — until the Secret is
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
	obs.agentSecret, err = generatedAgentSecrets.Get(key, func() (map[string]string, error) { return backupcontroller.NewAgentSecretData(c) })
	return err
}

// generatedAgentSecrets are the agent Secrets generated and not yet observed, of every cluster.
var generatedAgentSecrets = pending.New[map[string]string]()

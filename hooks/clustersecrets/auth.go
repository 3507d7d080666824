package clustersecrets

import (
	"encoding/base64"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The keys of the spec.auth Secret.
const (
	authUsernameKey = "username"
	authPasswordKey = "password"
)

// Auth is what spec.auth gives this pass: nothing (connect without credentials), the
// credentials for the data instances, or why the Secret cannot be used. A problem is a sentence
// naming the Secret and what is wrong with it; it never quotes the Secret's content, and the
// credentials live only as long as the pass.
type Auth struct {
	Creds   *memgraph.Credentials
	Problem string
}

// ReadAuth reads the username and password of the spec.auth Secret s (nil when
// absent). Anything wrong with the Secret only keeps SHOW REPLICAS from being read, so every
// handover waits and says why.
func ReadAuth(s *wire.Object, c *topology.Cluster) Auth {
	name := c.AuthSecretName()
	if name == "" {
		return Auth{}
	}
	where := fmt.Sprintf("Secret %s/%s (spec.auth.secretName)", c.Namespace(), name)
	if s == nil {
		return Auth{Problem: where + " does not exist: create it in the cluster's namespace with the keys username and " +
			"password of a Memgraph user with the REPLICATION, DURABILITY, MULTI_DATABASE_USE, MULTI_DATABASE_EDIT and RELOAD_TLS privileges"}
	}
	var values [2]string
	for i, key := range []string{authUsernameKey, authPasswordKey} {
		encoded := s.Data[key]
		raw, err := base64.StdEncoding.DecodeString(encoded)
		switch {
		case encoded == "":
			return Auth{Problem: where + " has no " + key + ": it needs the keys username and password"}
		case err != nil:
			return Auth{Problem: where + " has a " + key + " that is not valid base64"}
		}
		values[i] = string(raw)
	}
	return Auth{Creds: &memgraph.Credentials{Username: values[0], Password: values[1]}}
}

// Missing are the Secrets the spec names (license, TLS, auth) that are not among the
// related Secrets in the cluster's namespace: the customize hook asks for each one by name
// (the sync's customize hook), so one absent from the request does not exist.
func Missing(related wire.Groups, c *topology.Cluster) ([]topology.MissingSecret, error) {
	secrets, err := wire.Entries(related, "related", wire.SecretKey)
	if err != nil {
		return nil, err
	}
	existing := make([]string, 0, len(secrets))
	for _, e := range secrets {
		if e.Obj.Metadata.In(c.Namespace()) {
			existing = append(existing, e.Obj.Metadata.Name)
		}
	}
	return topology.MissingSecrets(c, existing), nil
}

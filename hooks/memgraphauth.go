package hooks

import (
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The keys of the spec.auth Secret.
const (
	authUsernameKey = "username"
	authPasswordKey = "password"
)

// memgraphAuth is what spec.auth gives this pass: nothing (connect without credentials), the
// credentials for the data instances, or why the Secret cannot be used. A problem is a sentence
// naming the Secret and what is wrong with it; it never quotes the Secret's content, and the
// credentials live only as long as the pass.
type memgraphAuth struct {
	creds   *memgraph.Credentials
	problem string
}

// readMemgraphAuth reads the username and password of the spec.auth Secret s (nil when
// absent). Anything wrong with the Secret only keeps SHOW REPLICAS from being read, so every
// handover waits and says why.
func readMemgraphAuth(s *object, c *topology.Cluster) memgraphAuth {
	name := c.AuthSecretName()
	if name == "" {
		return memgraphAuth{}
	}
	where := fmt.Sprintf("Secret %s/%s (spec.auth.secretName)", c.Namespace(), name)
	if s == nil {
		return memgraphAuth{problem: where + " does not exist: create it in the cluster's namespace with the keys username and " +
			"password of a Memgraph user allowed to run SHOW REPLICAS"}
	}
	var values [2]string
	for i, key := range []string{authUsernameKey, authPasswordKey} {
		encoded := s.Data[key]
		raw, err := base64.StdEncoding.DecodeString(encoded)
		switch {
		case encoded == "":
			return memgraphAuth{problem: where + " has no " + key + ": it needs the keys username and password"}
		case err != nil:
			return memgraphAuth{problem: where + " has a " + key + " that is not valid base64"}
		}
		values[i] = string(raw)
	}
	return memgraphAuth{creds: &memgraph.Credentials{Username: values[0], Password: values[1]}}
}

// secretRule asks Metacontroller for the Secrets the spec names, by name, in the cluster's
// namespace: spec.tls's (its ca.crt verifies the members), spec.tls.clusterSecretName's when
// another Secret (the hook checks the intra-cluster certificate covers the members) and spec.auth's (the credentials for
// SHOW REPLICAS). ok is false when it names none.
func secretRule(c *topology.Cluster) (relatedRule, bool) {
	var names []string
	for _, name := range []string{c.TLSSecretName(), c.ClusterTLSSecretName(), c.AuthSecretName()} {
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return relatedRule{APIVersion: "v1", Resource: "secrets", Namespace: c.Namespace(), Names: names}, len(names) > 0
}

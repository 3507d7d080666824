package hooks

import (
	"encoding/base64"
	"fmt"

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

// readMemgraphAuth finds the spec.auth Secret among the related objects (the customize hook
// asks Metacontroller for it) and reads its username and password. A malformed related object is
// a bad request; anything wrong with the Secret itself only keeps SHOW REPLICAS from being read,
// so every handover waits and says why.
func readMemgraphAuth(req *syncRequest, c *topology.Cluster) (memgraphAuth, error) {
	name := c.AuthSecretName()
	if name == "" {
		return memgraphAuth{}, nil
	}
	secrets, err := objectsOf(req.Related, secretKey, "related")
	if err != nil {
		return memgraphAuth{}, err
	}
	namespace := c.Namespace()
	where := fmt.Sprintf("Secret %s/%s (spec.auth.secretName)", namespace, name)
	for _, e := range secrets {
		if metaString(e.obj, "name") != name || (metaString(e.obj, "namespace") != "" && metaString(e.obj, "namespace") != namespace) {
			continue
		}
		creds, problem := credentialsOf(e.obj)
		if problem != "" {
			return memgraphAuth{problem: where + " " + problem}, nil
		}
		return memgraphAuth{creds: creds}, nil
	}
	return memgraphAuth{problem: where + " does not exist: create it in the cluster's namespace with the keys username and " +
		"password of a Memgraph user allowed to run SHOW REPLICAS"}, nil
}

func credentialsOf(s object) (*memgraph.Credentials, string) {
	data, _ := s["data"].(map[string]any)
	var values [2]string
	for i, key := range []string{authUsernameKey, authPasswordKey} {
		encoded, _ := data[key].(string)
		raw, err := base64.StdEncoding.DecodeString(encoded)
		switch {
		case encoded == "":
			return nil, "has no " + key + ": it needs the keys username and password"
		case err != nil:
			return nil, "has a " + key + " that is not valid base64"
		}
		values[i] = string(raw)
	}
	return &memgraph.Credentials{Username: values[0], Password: values[1]}, ""
}

// secretRule asks Metacontroller for the Secrets the spec names, by name, in the cluster's
// namespace: spec.tls's (its ca.crt verifies the members) and spec.auth's (the credentials for
// SHOW REPLICAS). ok is false when it names none.
func secretRule(c *topology.Cluster) (relatedRule, bool) {
	var names []string
	for _, name := range []string{c.TLSSecretName(), c.AuthSecretName()} {
		if name != "" && (len(names) == 0 || names[0] != name) {
			names = append(names, name)
		}
	}
	return relatedRule{APIVersion: "v1", Resource: "secrets", Namespace: c.Namespace(), Names: names}, len(names) > 0
}

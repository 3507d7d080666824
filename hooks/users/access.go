package users

import (
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/clustersecrets"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// What a MemgraphUser reads of the Secrets its cluster's spec names — spec.tls's CA and
// spec.auth's user, all that reaching the MAIN over Bolt takes — reaches it through the cluster's
// <cluster>-user-access Secret (topology.UserAccessSecret), which the cluster's hook writes on
// every pass. A MemgraphUser's customize hook cannot ask for the cluster's Secrets by name: only
// the cluster's spec names them, a customize hook sees its own parent alone, and Metacontroller
// caches its answer per parent UID and generation (v4.17.2
// pkg/controller/common/customize/manager.go 186–230, for 20 minutes: line 101), so names read
// from the cluster would go stale when the cluster is edited. The copy records the cluster
// generation it follows, and a user's pass waits on a copy of an older generation
// (planner.NextUser), so it never reaches a cluster with the TLS or login of a spec the cluster
// no longer has.

// Access is the cluster's user-access Secret as the cluster's hook returns it: data (base64
// values) and annotations.
type Access struct {
	Data, Annotations map[string]string
}

// AccessOf is the user-access Secret of cluster c from what its pass read of the spec.tls
// (trust) and spec.auth (auth) Secrets; zero (no Secret) for a cluster without spec.auth, whose
// users wait for one and read nothing.
func AccessOf(c *topology.Cluster, trust clustersecrets.Trust, auth clustersecrets.Auth) Access {
	if c.AuthSecretName() == "" {
		return Access{}
	}
	a := Access{Data: map[string]string{}, Annotations: map[string]string{
		topology.AnnotationUserAccessGeneration: strconv.FormatInt(c.Generation(), 10)}}
	switch {
	case trust.Problem != "":
		a.Annotations[topology.AnnotationUserAccessTLSProblem] = trust.Problem
	case len(trust.CAPEM) > 0:
		a.Data[topology.UserAccessCAKey] = encode(string(trust.CAPEM))
	}
	switch {
	case auth.Problem != "":
		a.Annotations[topology.AnnotationUserAccessAuthProblem] = auth.Problem
	case auth.Creds != nil:
		a.Data[topology.UserAccessUsernameKey] = encode(auth.Creds.Username)
		a.Data[topology.UserAccessPasswordKey] = encode(auth.Creds.Password)
	}
	return a
}

func encode(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }

// Reach is what a user's pass reads from its cluster's user-access Secret: the CA to verify the
// cluster's Bolt servers with (nil without spec.tls) and spec.auth's user; TLSProblem and
// Auth.Problem say what is wrong with the cluster's Secrets, never a value.
type Reach struct {
	CAPEM      []byte
	TLSProblem string
	Auth       clustersecrets.Auth
}

// readAccess reads the user-access Secret s of cluster c (nil when it is not among the related
// objects): what reaching c takes, and, for the planner, what the copy says of itself — whether
// it may be used (it follows c's current generation) is the planner's decision.
func readAccess(c *topology.Cluster, s *secret) (r Reach, a planner.UserAccess) {
	if s == nil {
		return r, a
	}
	a.Exists, a.Generation = true, s.Metadata.Annotations[topology.AnnotationUserAccessGeneration]
	where := fmt.Sprintf("Secret %s/%s", c.Namespace(), topology.UserAccessSecretName(c.Name()))
	value := func(key string) (string, string) {
		encoded := s.Data[key]
		if encoded == "" {
			return "", where + " has no " + key + ": the cluster's hook writes it"
		}
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return "", where + " has a " + key + " that is not valid base64"
		}
		return string(raw), ""
	}
	r.TLSProblem = s.Metadata.Annotations[topology.AnnotationUserAccessTLSProblem]
	if r.TLSProblem == "" && c.TLSSecretName() != "" {
		var ca string
		ca, r.TLSProblem = value(topology.UserAccessCAKey)
		r.CAPEM = []byte(ca)
	}
	if r.Auth.Problem = s.Metadata.Annotations[topology.AnnotationUserAccessAuthProblem]; r.Auth.Problem == "" {
		username, problem := value(topology.UserAccessUsernameKey)
		if problem == "" {
			var password string
			if password, problem = value(topology.UserAccessPasswordKey); problem == "" {
				r.Auth.Creds = &memgraph.Credentials{Username: username, Password: password}
			}
		}
		r.Auth.Problem = problem
	}
	a.TLSProblem, a.HookCredentials = r.TLSProblem, r.Auth.Problem
	if r.Auth.Creds != nil {
		a.HookUser = r.Auth.Creds.Username
	}
	return r, a
}

// connectors reach cluster c from base as r says: its coordinators over spec.tls's CA, its data
// instances with spec.auth's login too; problem says why c cannot be reached as its Secrets say.
func (r Reach) connectors(c *topology.Cluster, base memgraph.Connector) (coordinators, data memgraph.Connector, problem string) {
	if coordinators, problem = clustersecrets.TrustOf(c, r.CAPEM).Connector(base); problem != "" {
		return nil, nil, problem
	}
	if data, problem = r.Auth.Connector(coordinators); problem != "" {
		return nil, nil, problem
	}
	return coordinators, data, ""
}

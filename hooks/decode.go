package hooks

import (
	"bytes"
	"errors"
	"net/http"
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// decodeSync reads a sync request and decodes it once: a JSON object with a MemgraphCluster
// parent whose spec is one Memgraph can run (admitted, with every default applied, and
// remembered in parents), and well-typed children and related objects, observed.
func decodeSync(r *http.Request, parents *parentCache) (*admittedParent, observation, error) {
	body := bodyBuffers.Get().(*bytes.Buffer)
	defer recycleBody(body) // the observation keeps nothing of it but copies (buffers.go)
	raw, err := wire.ReadBody(body, r.Body, r.ContentLength)
	if err != nil {
		return nil, observation{}, err
	}
	parent, obs, err := decodeRequest(raw, parents)
	return parent, obs, wire.AboutParent(err, raw)
}

// decodeRequest decodes and observes the body of a sync request.
func decodeRequest(body []byte, parents *parentCache) (*admittedParent, observation, error) {
	var req syncRequest
	if err := req.decode(body); err != nil {
		if located := wire.Locate(body); located != nil {
			return nil, observation{}, located
		}
		return nil, observation{}, err
	}
	parent, err := parents.admit(req.Parent)
	if err != nil {
		return nil, observation{}, err
	}
	obs, err := observe(&req, parent.cluster)
	if err != nil {
		return nil, observation{}, err
	}
	return parent, obs, nil
}

// decodeParent admits the parent as the API server would (topology.Admit): defaults applied to
// absent fields, the CRD's schema and rules enforced, an explicit zero judged as written — but
// for a coordinator setting Memgraph takes and cannot run with, which a parent stored under an
// older CRD may declare: that one is withheld, never sent, and the CoordinatorSettings condition
// names it (topology.AdmitWithholding). This is the one place a request's cluster is defaulted
// and validated.
func decodeParent(raw []byte) (*topology.Cluster, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, wire.Badf("request has no parent: expected the MemgraphCluster under \"parent\"")
	}
	cluster, err := topology.AdmitWithholding(raw)
	var invalid *v1alpha1.ValidationError
	switch {
	case errors.As(err, &invalid) && invalid.Name != "":
		return nil, wire.Badf("parent %s has a spec Memgraph cannot run: %v", wire.ObjectKey(invalid.Namespace, invalid.Name), err)
	case err != nil:
		return nil, wire.Badf("parent: %v", err)
	}
	return cluster, nil
}

// clusterKey is namespace/name, bounded for messages and logs.
func clusterKey(c *topology.Cluster) string { return wire.ObjectKey(c.Namespace(), c.Name()) }

// handleCustomize asks Metacontroller for the cluster's Pods (both roles, same namespace), so
// the sync sees their readiness, problems and nodes, for the Secrets the spec names (secretRule):
// the license, which the sync names when it is missing, spec.tls's, whose ca.crt the sync
// verifies the members with, and spec.auth's, whose credentials read SHOW REPLICAS, and for the
// cordoned Nodes, which the drain stage reads.
func (h *handler) handleCustomize(w http.ResponseWriter, r *http.Request) {
	if _, err := wire.ParseQuery(r.URL.RawQuery); err != nil {
		h.fail(w, "customize", err)
		return
	}
	var req wire.CustomizeRequest
	body, err := wire.ReadBody(new(bytes.Buffer), r.Body, r.ContentLength)
	if err == nil {
		err = wire.DecodeBody(body, &req)
	}
	if err != nil {
		h.fail(w, "customize", err)
		return
	}
	cluster, err := decodeParent(req.Parent)
	if err != nil {
		h.fail(w, "customize", wire.AboutParent(err, body))
		return
	}
	rules := []wire.RelatedRule{{
		APIVersion:    "v1",
		Resource:      "pods",
		Namespace:     cluster.Namespace(),
		LabelSelector: &wire.LabelSelector{MatchLabels: topology.PodSelector(cluster.Name())},
	}}
	if rule, ok := secretRule(cluster); ok {
		rules = append(rules, rule)
	}
	// The cordoned Nodes (cluster-scoped; a customize hook of version v2 may select them), which
	// the hook's Node decorator labels (handleNodeSync): a label selector cannot select on
	// spec.unschedulable itself, and every Node would make each sync grow with the cluster.
	rules = append(rules, wire.RelatedRule{APIVersion: "v1", Resource: "nodes",
		LabelSelector: &wire.LabelSelector{MatchLabels: map[string]string{topology.LabelNodeCordoned: topology.NodeCordonedValue}}})
	rules = append(rules, backupcontroller.ClusterRules(cluster)...)
	h.writeJSON(w, "customize", http.StatusOK, wire.CustomizeResponse{RelatedResources: rules})
}

// secretRule asks Metacontroller for the Secrets the spec names (topology.NamedSecrets), by
// name, in the cluster's namespace: spec.secrets' license (the sync names it when it is absent,
// before any pod fails on it), spec.tls's (its ca.crt verifies the members) and spec.auth's (the
// credentials for SHOW REPLICAS). ok is false when it names none.
func secretRule(c *topology.Cluster) (wire.RelatedRule, bool) {
	var names []string
	for _, s := range c.NamedSecrets() {
		if s.Name != "" && !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	return wire.RelatedRule{APIVersion: "v1", Resource: "secrets", Namespace: c.Namespace(), Names: names}, len(names) > 0
}

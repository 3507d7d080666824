package hooks

import (
	"bytes"
	"errors"
	"net/http"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// decodeSync reads and validates a sync request: a JSON object with a MemgraphCluster parent
// whose spec is one Memgraph can run, and well-typed children and related objects. It returns
// the parent with every default applied (remembered in parents) and what the children and Pods
// say.
func decodeSync(r *http.Request, parents *parentCache) (*admittedParent, workloads, error) {
	body := bodyBuffers.Get().(*bytes.Buffer)
	defer recycleBody(body) // observeRequest keeps nothing of it (buffers.go)
	req, err := decodeSyncRequestInto(body, r.Body, r.ContentLength)
	if err != nil {
		return nil, workloads{}, err
	}
	return observeRequest(req, parents)
}

// observeRequest admits the parent of a decoded sync request and reads its children and
// related objects.
func observeRequest(req *syncRequest, parents *parentCache) (*admittedParent, workloads, error) {
	parent, err := parents.admit(req.Parent)
	if err != nil {
		return nil, workloads{}, err
	}
	cluster := parent.cluster
	work, err := observeWorkloads(req, cluster.Name(), cluster.Namespace())
	if err != nil {
		return nil, workloads{}, err
	}
	if work.ops, err = observeDayOps(req, cluster); err != nil {
		return nil, workloads{}, err
	}
	if work.rollout, err = observeRollout(req, cluster.Name(), cluster.Namespace()); err != nil {
		return nil, workloads{}, err
	}
	if work.tls, err = readBoltTLS(req, cluster); err != nil {
		return nil, workloads{}, err
	}
	if work.auth, err = readMemgraphAuth(req, cluster); err != nil {
		return nil, workloads{}, err
	}
	return parent, work, nil
}

// decodeParent admits the parent as the API server would (topology.Admit): defaults applied to
// absent fields, the CRD's schema and rules enforced, an explicit zero judged as written. This
// is the one place a request's cluster is defaulted and validated.
func decodeParent(raw []byte) (*topology.Cluster, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequestf("request has no parent: expected the MemgraphCluster under \"parent\"")
	}
	cluster, err := topology.Admit(raw)
	var invalid *topology.ValidationError
	switch {
	case errors.As(err, &invalid) && invalid.Name != "":
		return nil, badRequestf("parent %s has a spec Memgraph cannot run: %v", objectKey(invalid.Namespace, invalid.Name), err)
	case err != nil:
		return nil, badRequestf("parent: %v", err)
	}
	return cluster, nil
}

// clusterKey is namespace/name, bounded for messages and logs.
func clusterKey(c *topology.Cluster) string { return objectKey(c.Namespace(), c.Name()) }

func objectKey(namespace, name string) string {
	return topology.Clip(namespace) + "/" + topology.Clip(name)
}

// handleCustomize asks Metacontroller for the cluster's Pods (both roles, same namespace), so
// the sync sees their readiness, and for the Secrets the spec names: spec.tls's, whose ca.crt the
// sync verifies the members with, and spec.auth's, whose credentials read SHOW REPLICAS.
func (h *handler) handleCustomize(w http.ResponseWriter, r *http.Request) {
	if _, err := parseQuery(r.URL.RawQuery); err != nil {
		h.fail(w, "customize", err)
		return
	}
	var req customizeRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		h.fail(w, "customize", err)
		return
	}
	cluster, err := decodeParent(req.Parent)
	if err != nil {
		h.fail(w, "customize", err)
		return
	}
	rules := []relatedRule{{
		APIVersion:    "v1",
		Resource:      "pods",
		Namespace:     cluster.Namespace(),
		LabelSelector: &labelSelector{MatchLabels: topology.PodSelector(cluster.Name())},
	}}
	if rule, ok := secretRule(cluster); ok {
		rules = append(rules, rule)
	}
	h.writeJSON(w, "customize", http.StatusOK, customizeResponse{RelatedResources: rules})
}

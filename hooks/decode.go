package hooks

import (
	"net/http"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// decodeSync reads and validates a sync request: a JSON object with a MemgraphCluster parent
// whose spec is one Memgraph can run, and well-typed children and related objects.
func decodeSync(r *http.Request) (*syncRequest, *topology.MemgraphCluster, error) {
	var req syncRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, nil, err
	}
	cluster, err := decodeParent(req.Parent)
	if err != nil {
		return nil, nil, err
	}
	if _, err := observeWorkloads(&req, cluster.Name, cluster.Namespace); err != nil {
		return nil, nil, err
	}
	return &req, cluster, nil
}

func decodeParent(raw []byte) (*topology.MemgraphCluster, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequestf("request has no parent: expected the MemgraphCluster under \"parent\"")
	}
	cluster, err := topology.DecodeCluster(raw)
	if err != nil {
		return nil, badRequestf("parent: %v", err)
	}
	if err := cluster.Defaulted().Validate(); err != nil {
		return nil, badRequestf("parent %s/%s has a spec Memgraph cannot run: %v", cluster.Namespace, cluster.Name, err)
	}
	return cluster, nil
}

// handleCustomize asks Metacontroller for the cluster's Pods (both roles, same namespace), so
// the sync sees their readiness.
func (h *handler) handleCustomize(w http.ResponseWriter, r *http.Request) {
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
	h.writeJSON(w, "customize", http.StatusOK, customizeResponse{RelatedResources: []relatedRule{{
		APIVersion:    "v1",
		Resource:      "pods",
		Namespace:     cluster.Namespace,
		LabelSelector: labelSelector{MatchLabels: topology.PodSelector(cluster.Name)},
	}}})
}

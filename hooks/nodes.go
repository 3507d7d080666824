package hooks

import (
	"bytes"
	"net/http"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// handleNodeSync is the sync hook of the DecoratorController memgraph-nodes
// (manifests/node-decorator.yaml), which Metacontroller calls with one Node at a time, on each
// change of it and on each resync: it answers the label topology.LabelNodeCordoned on a cordoned
// Node (planner.NodeCordoned) and its removal on any other. A MemgraphCluster's customize hook
// asks for the Nodes with that label alone, so that what a sync carries does not grow with the
// Kubernetes cluster, and a cordon reaches the clusters' syncs at once: Metacontroller's
// informer of the related Nodes enqueues every MemgraphCluster whose rule selects the Node as it
// was or as it is (docs/architecture.md, "The Nodes a sync carries").
func (h *handler) handleNodeSync(w http.ResponseWriter, r *http.Request) {
	if _, err := wire.ParseQuery(r.URL.RawQuery); err != nil {
		h.fail(w, "nodes", err)
		return
	}
	var req wire.DecoratorRequest
	body, err := wire.ReadBody(new(bytes.Buffer), r.Body, r.ContentLength)
	if err == nil {
		err = wire.DecodeBody(body, &req)
	}
	if err == nil && len(req.Object) == 0 {
		err = wire.Badf("request body has no object: a DecoratorController's sync request carries the Node as object")
	}
	var node wire.Object
	if err == nil {
		err = wire.DecodeAt(req.Object, "object", &node)
	}
	if err != nil {
		h.fail(w, "nodes", err)
		return
	}
	n := planner.Node{Name: node.Metadata.Name, Unschedulable: node.Spec.Unschedulable}
	for _, t := range node.Spec.Taints {
		n.TaintKeys = append(n.TaintKeys, t.Key)
	}
	var value *string // null takes the label off
	if planner.NodeCordoned(n) {
		cordoned := topology.NodeCordonedValue
		value = &cordoned
	}
	h.writeJSON(w, "nodes", http.StatusOK, wire.DecoratorResponse{
		Labels:      map[string]*string{topology.LabelNodeCordoned: value},
		Attachments: []any{},
	})
}

package topology

import (
	"encoding/json"
	"errors"
	"fmt"

	kjson "sigs.k8s.io/json"
)

// DesiredChildren renders the cluster's children in a fixed order: StatefulSet <cluster>-coordinator,
// StatefulSet <cluster>-data, headless Service <cluster>-coordinator, headless Service
// <cluster>-data, client Service <cluster>. Replica counts are the caller's decision; they are
// rendered as given.
//
// Each child is a JSON-ready map in the form the API server stores it: no nulls, no top-level
// status, no creationTimestamp, integers as int64. The cluster is admitted (defaulted and
// valid), so the children are objects Kubernetes and Memgraph accept.
func DesiredChildren(c *Cluster, replicas Replicas) ([]map[string]any, error) {
	if c == nil || c.mc == nil {
		return nil, errors.New("no admitted MemgraphCluster to render")
	}
	if replicas.Coordinators < 0 || replicas.DataInstances < 0 {
		return nil, fmt.Errorf("replica counts must not be negative, got %d coordinators and %d data instances",
			replicas.Coordinators, replicas.DataInstances)
	}
	mc := c.mc
	typed := []any{
		coordinatorStatefulSet(mc, c.network, replicas.Coordinators),
		dataStatefulSet(mc, replicas.DataInstances),
		coordinatorService(mc),
		dataService(mc),
		clientService(mc),
	}
	children := make([]map[string]any, 0, len(typed))
	for _, obj := range typed {
		m, err := toStoredForm(obj)
		if err != nil {
			return nil, err
		}
		children = append(children, m)
	}
	return children, nil
}

// toStoredForm converts a typed object to a map and prunes what the typed structs marshal but the
// API server would not store or Metacontroller must not see: every JSON null (a desired null never
// matches an absent field, so Metacontroller would update forever), every creationTimestamp, and
// the top-level status.
func toStoredForm(obj any) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("marshal child: %w", err)
	}
	var m map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &m); err != nil {
		return nil, fmt.Errorf("unmarshal child: %w", err)
	}
	delete(m, "status")
	prune(m)
	return m, nil
}

func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if child == nil || k == "creationTimestamp" {
				delete(t, k)
				continue
			}
			prune(child)
		}
	case []any:
		for _, child := range t {
			prune(child)
		}
	}
}

package topology

import (
	"encoding/json"
	"fmt"

	kjson "sigs.k8s.io/json"
)

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

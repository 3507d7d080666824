package topology

import "fmt"

// RenderHibernation shapes the rendered StatefulSets (DesiredChildren's output, in stored form)
// for hibernation and waking:
//
//   - while spec.hibernate is set, or a window is rendered, both StatefulSets' claims are kept
//     on scale-down (persistentVolumeClaimRetentionPolicy.whenScaled Retain), whatever
//     storage.retentionPolicy says: hibernation must never delete a volume, and the window
//     condemns the pods below it as a scale-down does;
//   - window, when set, is the data StatefulSet's spec.ordinals.start: the one ordinal a
//     hibernating cluster keeps (its MAIN) while the others stop, and, once hibernated, the record
//     of which instance was MAIN. It is rendered explicitly even at 0, so that it reads back.
func RenderHibernation(c *Cluster, children []map[string]any, window *int32) error {
	if !c.Hibernate() && window == nil {
		return nil
	}
	for _, child := range children {
		if child["kind"] != "StatefulSet" {
			continue
		}
		meta, _ := child["metadata"].(map[string]any)
		spec, _ := child["spec"].(map[string]any)
		policy, _ := spec["persistentVolumeClaimRetentionPolicy"].(map[string]any)
		if spec == nil || policy == nil {
			return fmt.Errorf("StatefulSet %v is not in the form DesiredChildren renders", meta["name"])
		}
		policy["whenScaled"] = string(RetentionRetain)
		if window != nil && meta["name"] == DataSetName(c.Name()) {
			spec["ordinals"] = map[string]any{"start": int64(*window)}
		}
	}
	return nil
}

// DataWindow reads the data StatefulSet's spec.ordinals.start back from an observed object in
// stored form: the hibernation window when it has one (nil otherwise, and for a malformed value,
// which the caller's strict decoding rejects).
func DataWindow(sts map[string]any) *int32 {
	spec, _ := sts["spec"].(map[string]any)
	ordinals, _ := spec["ordinals"].(map[string]any)
	switch start := ordinals["start"].(type) {
	case int64:
		w := int32(start)
		return &w
	case float64:
		w := int32(start)
		return &w
	}
	return nil
}

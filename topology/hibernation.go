package topology

import appsv1 "k8s.io/api/apps/v1"

// hibernationShape shapes a StatefulSet for hibernation and waking:
//
//   - while spec.hibernate is set, or a window is rendered, both StatefulSets' claims are kept
//     on scale-down (persistentVolumeClaimRetentionPolicy.whenScaled Retain), whatever
//     storage.retentionPolicy says: hibernation must never delete a volume, and the window
//     condemns the pods below it as a scale-down does;
//   - window, when set, is the data StatefulSet's spec.ordinals.start: the one ordinal a
//     hibernating cluster keeps (its MAIN) while the others stop, and, once hibernated, the record
//     of which instance was MAIN. It is rendered explicitly even at 0, so that it reads back.
func hibernationShape(c *Cluster, sts *appsv1.StatefulSet, window *int32) {
	if !c.Hibernate() && window == nil {
		return
	}
	sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if window != nil && sts.Name == DataSetName(c.Name()) {
		sts.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: *window}
	}
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

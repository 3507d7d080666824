package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"k8s.io/utils/ptr"
)

// Hibernation keeps every claim whatever storage.retentionPolicy says, and the data window is
// rendered (even at 0) so that it reads back from the observed StatefulSet.
func TestRenderHibernation(t *testing.T) {
	type shape struct {
		CoordinatorScaled, DataScaled, DataDeleted string
		Window                                     *int32
	}
	for _, tc := range []struct {
		name      string
		hibernate bool
		window    *int32
		want      shape
	}{
		{"awake: the declared policy", false, nil, shape{"Delete", "Delete", "Delete", nil}},
		{"hibernating without a MAIN: claims kept, no window", true, nil, shape{"Retain", "Retain", "Delete", nil}},
		{"hibernating with MAIN instance_2", true, ptr.To[int32](2), shape{"Retain", "Retain", "Delete", ptr.To[int32](2)}},
		{"a window at instance_0 is rendered too", true, ptr.To[int32](0), shape{"Retain", "Retain", "Delete", ptr.To[int32](0)}},
		{"waking: the window keeps the claims", false, ptr.To[int32](1), shape{"Retain", "Retain", "Delete", ptr.To[int32](1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := admitCluster(t, func(mc *v1alpha1.MemgraphCluster) {
				mc.Spec.Storage.RetentionPolicy = v1alpha1.RetentionDelete
				mc.Spec.Hibernate = ptr.To(tc.hibernate)
			})
			children, err := Render(c, Rendering{Replicas: Replicas{Coordinators: 3, DataInstances: 1}, Window: tc.window})
			if err != nil {
				t.Fatal(err)
			}
			policy := func(i int, key string) string {
				return children[i]["spec"].(map[string]any)["persistentVolumeClaimRetentionPolicy"].(map[string]any)[key].(string)
			}
			got := shape{policy(0, "whenScaled"), policy(1, "whenScaled"), policy(1, "whenDeleted"), DataWindow(children[1])}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if start := DataWindow(children[0]); start == nil || *start != FirstCoordinatorID {
				t.Errorf("the coordinators' ordinals start %v, want %d", start, FirstCoordinatorID)
			}
		})
	}
}

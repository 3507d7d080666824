package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	"k8s.io/utils/ptr"
)

func TestDeclareCarriesModesAndSettings(t *testing.T) {
	mc := apitest.MinimalCluster()
	mc.Spec.DataInstances = 3
	mc.Spec.ReplicationMode = v1alpha1.ReplicationAsync
	mc.Spec.ReplicationModeOverrides = []v1alpha1.ReplicationModeOverride{{Instance: "instance_2", Mode: v1alpha1.ReplicationSync}}
	mc.Spec.CoordinatorSettings.SyncFailoverOnly = ptr.To(false)
	c, err := NewCluster(mc)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Declare(Replicas{Coordinators: 3, DataInstances: 4})
	var got []v1alpha1.ReplicationMode
	for _, di := range append(d.DataInstances, d.RetiringDataInstances...) {
		got = append(got, di.Mode)
	}
	want := []v1alpha1.ReplicationMode{v1alpha1.ReplicationAsync, v1alpha1.ReplicationAsync, v1alpha1.ReplicationSync, v1alpha1.ReplicationAsync}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes of instance_0..3 (-want +got):\n%s", diff)
	}
	if d.Settings.SyncFailoverOnlyEffective() {
		t.Error("the declared sync_failover_only false did not reach Declared")
	}
}

// The settings' bounds are Memgraph 3.12's own (uint32 timings, unsigned lags), as Admit checks
// them from the CRD's schema, but for the two timings' 0, which Memgraph takes and cannot run
// with: refused with the reason and the remedy.
func TestSettingBoundsAreAdmittedAsMemgraphTakesThem(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"uint32 max", `{"coordinatorSettings":{"instanceDownTimeoutSeconds":4294967295}}`, ""},
		{"zero batch and lags", `{"coordinatorSettings":{"deltasBatchProgressSize":0,"maxFailoverReplicaLag":0,"maxReplicaReadLag":0}}`, ""},
		{"timings of one second", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":1,"instanceDownTimeoutSeconds":1}}`, ""},
		{"health check frequency zero", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":0}}`, v1alpha1.MsgHealthCheckFrequency},
		{"down timeout zero", `{"coordinatorSettings":{"instanceDownTimeoutSeconds":0}}`, v1alpha1.MsgInstanceDownTimeout},
		{"beyond uint32", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":4294967296}}`,
			"coordinatorSettings.instanceHealthCheckFrequencySeconds must be at most 4294967295"},
		{"negative lag", `{"coordinatorSettings":{"maxReplicaReadLag":-1}}`, "coordinatorSettings.maxReplicaReadLag must be at least 0"},
		{"unknown mode", `{"replicationMode":"Eventual"}`, "replicationMode must be Sync, Async or StrictSync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Admit(apitest.ParentJSON("default", tc.spec))
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if diff := cmp.Diff(want, apitest.MessagesOf(t, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A parent stored without the timings' rules (an older CRD) still reaches the hook: Admit refuses
// it as the API server now would, while AdmitWithholding admits it with the unsafe settings
// taken out of Declared.Settings and named, with the rule's message, in
// Declared.WithheldSettings. Any other broken rule still refuses the parent, naming both.
func TestAdmitWithholdingKeepsUnsafeSettingsFromDeclared(t *testing.T) {
	raw := apitest.ParentJSON("default", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":0,"instanceDownTimeoutSeconds":0,"globalReadOnly":true}}`)
	if _, err := Admit(raw); err == nil {
		t.Fatal("Admit took instanceHealthCheckFrequencySeconds: 0")
	}
	c, err := AdmitWithholding(raw)
	if err != nil {
		t.Fatalf("AdmitWithholding: %v", err)
	}
	d := c.Declare(Replicas{Coordinators: 3, DataInstances: 2})
	if diff := cmp.Diff([]v1alpha1.Setting{{Name: v1alpha1.SettingGlobalReadOnly, Value: "true"}}, d.Settings.List()); diff != "" {
		t.Errorf("Declared.Settings (-want +got):\n%s", diff)
	}
	want := []v1alpha1.Violation{
		{Field: "spec.coordinatorSettings.instanceDownTimeoutSeconds", Message: v1alpha1.MsgInstanceDownTimeout},
		{Field: "spec.coordinatorSettings.instanceHealthCheckFrequencySeconds", Message: v1alpha1.MsgHealthCheckFrequency},
	}
	if diff := cmp.Diff(want, d.WithheldSettings); diff != "" {
		t.Errorf("Declared.WithheldSettings (-want +got):\n%s", diff)
	}

	valid, err := AdmitWithholding(apitest.ParentJSON("default", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := valid.Declare(Replicas{}).WithheldSettings; got != nil {
		t.Errorf("a valid spec withholds %v", got)
	}

	_, err = AdmitWithholding(apitest.ParentJSON("default", `{"dataInstances":0,"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":0}}`))
	if diff := cmp.Diff([]string{v1alpha1.MsgDataInstances, v1alpha1.MsgHealthCheckFrequency}, apitest.MessagesOf(t, err)); diff != "" {
		t.Errorf("another broken rule (-want +got):\n%s", diff)
	}
}

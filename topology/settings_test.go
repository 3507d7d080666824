package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestCoordinatorSettingsListAndBack(t *testing.T) {
	s := CoordinatorSettings{GlobalReadOnly: ptr.To(true), MaxFailoverReplicaLag: ptr.To(int64(9223372036854775807)),
		EnabledReadsOnMain: ptr.To(false), InstanceHealthCheckFrequencySeconds: ptr.To(int64(0))}
	want := []Setting{{SettingEnabledReadsOnMain, "false"}, {SettingMaxFailoverReplicaLag, "9223372036854775807"},
		{SettingHealthCheckFrequency, "0"}, {SettingGlobalReadOnly, "true"}}
	if diff := cmp.Diff(want, s.List()); diff != "" {
		t.Errorf("List, in SHOW COORDINATOR SETTINGS' order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&s, SettingsOf(s.List())); diff != "" {
		t.Errorf("SettingsOf(List) (-want +got):\n%s", diff)
	}
	if got := (CoordinatorSettings{}).List(); got != nil {
		t.Errorf("nothing declared lists %v", got)
	}
	if got := SettingsOf([]Setting{{"future_setting", "1"}, {SettingInstanceDownTimeout, "soon"}}); got != nil {
		t.Errorf("unknown names and unparsable values read as %+v", got)
	}
}

func TestDeclareCarriesModesAndSettings(t *testing.T) {
	mc := minimalCluster()
	mc.Spec.DataInstances = 3
	mc.Spec.ReplicationMode = ReplicationAsync
	mc.Spec.ReplicationModeOverrides = []ReplicationModeOverride{{Instance: "instance_2", Mode: ReplicationSync}}
	mc.Spec.CoordinatorSettings.SyncFailoverOnly = ptr.To(false)
	c, err := NewCluster(mc)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Declare(Replicas{Coordinators: 3, DataInstances: 4})
	var got []ReplicationMode
	for _, di := range append(d.DataInstances, d.RetiringDataInstances...) {
		got = append(got, di.Mode)
	}
	want := []ReplicationMode{ReplicationAsync, ReplicationAsync, ReplicationSync, ReplicationAsync}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes of instance_0..3 (-want +got):\n%s", diff)
	}
	if d.Settings.SyncFailoverOnlyEffective() {
		t.Error("the declared sync_failover_only false did not reach Declared")
	}
}

// The settings' bounds are Memgraph 3.12's own (uint32 timings, unsigned lags), as Admit checks
// them from the CRD's schema.
func TestSettingBoundsAreAdmittedAsMemgraphTakesThem(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"uint32 max", `{"coordinatorSettings":{"instanceDownTimeoutSeconds":4294967295}}`, ""},
		{"zero", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":0,"deltasBatchProgressSize":0}}`, ""},
		{"beyond uint32", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":4294967296}}`,
			"coordinatorSettings.instanceHealthCheckFrequencySeconds must be at most 4294967295"},
		{"negative lag", `{"coordinatorSettings":{"maxReplicaReadLag":-1}}`, "coordinatorSettings.maxReplicaReadLag must be at least 0"},
		{"unknown mode", `{"replicationMode":"Eventual"}`, "replicationMode must be Sync, Async or StrictSync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Admit(parentJSON("default", tc.spec))
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if diff := cmp.Diff(want, messagesOf(t, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

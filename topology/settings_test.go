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
// them from the CRD's schema, but for the two timings' 0, which Memgraph takes and cannot run
// with: refused with the reason and the remedy.
func TestSettingBoundsAreAdmittedAsMemgraphTakesThem(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"uint32 max", `{"coordinatorSettings":{"instanceDownTimeoutSeconds":4294967295}}`, ""},
		{"zero batch and lags", `{"coordinatorSettings":{"deltasBatchProgressSize":0,"maxFailoverReplicaLag":0,"maxReplicaReadLag":0}}`, ""},
		{"timings of one second", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":1,"instanceDownTimeoutSeconds":1}}`, ""},
		{"health check frequency zero", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":0}}`, MsgHealthCheckFrequency},
		{"down timeout zero", `{"coordinatorSettings":{"instanceDownTimeoutSeconds":0}}`, MsgInstanceDownTimeout},
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

// A parent stored without the timings' rules (an older CRD) still reaches the hook: Admit refuses
// it as the API server now would, while AdmitWithholding admits it with the unsafe settings
// taken out of Declared.Settings and named, with the rule's message, in
// Declared.WithheldSettings. Any other broken rule still refuses the parent, naming both.
func TestAdmitWithholdingKeepsUnsafeSettingsFromDeclared(t *testing.T) {
	raw := parentJSON("default", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":0,"instanceDownTimeoutSeconds":0,"globalReadOnly":true}}`)
	if _, err := Admit(raw); err == nil {
		t.Fatal("Admit took instanceHealthCheckFrequencySeconds: 0")
	}
	c, err := AdmitWithholding(raw)
	if err != nil {
		t.Fatalf("AdmitWithholding: %v", err)
	}
	d := c.Declare(Replicas{Coordinators: 3, DataInstances: 2})
	if diff := cmp.Diff([]Setting{{SettingGlobalReadOnly, "true"}}, d.Settings.List()); diff != "" {
		t.Errorf("Declared.Settings (-want +got):\n%s", diff)
	}
	want := []Violation{
		{Field: "spec.coordinatorSettings.instanceDownTimeoutSeconds", Message: MsgInstanceDownTimeout},
		{Field: "spec.coordinatorSettings.instanceHealthCheckFrequencySeconds", Message: MsgHealthCheckFrequency},
	}
	if diff := cmp.Diff(want, d.WithheldSettings); diff != "" {
		t.Errorf("Declared.WithheldSettings (-want +got):\n%s", diff)
	}

	valid, err := AdmitWithholding(parentJSON("default", `{"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := valid.Declare(Replicas{}).WithheldSettings; got != nil {
		t.Errorf("a valid spec withholds %v", got)
	}

	_, err = AdmitWithholding(parentJSON("default", `{"dataInstances":0,"coordinatorSettings":{"instanceHealthCheckFrequencySeconds":0}}`))
	if diff := cmp.Diff([]string{MsgDataInstances, MsgHealthCheckFrequency}, messagesOf(t, err)); diff != "" {
		t.Errorf("another broken rule (-want +got):\n%s", diff)
	}
}

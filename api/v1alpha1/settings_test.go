package v1alpha1

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

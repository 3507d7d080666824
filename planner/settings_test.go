package planner

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// memgraphDefaults is SHOW COORDINATOR SETTINGS of a fresh Memgraph 3.12 cluster
// (coordinator_cluster_state.hpp defaults, coordinator_instance.cpp ShowCoordinatorSettings).
var memgraphDefaults = []memgraph.Setting{
	{Name: "enabled_reads_on_main", Value: "false"},
	{Name: "sync_failover_only", Value: "true"},
	{Name: "max_failover_replica_lag", Value: "18446744073709551615"},
	{Name: "max_replica_read_lag", Value: "18446744073709551615"},
	{Name: "deltas_batch_progress_size", Value: "100000"},
	{Name: "instance_down_timeout_sec", Value: "5"},
	{Name: "instance_health_check_frequency_sec", Value: "1"},
	{Name: "global_read_only", Value: "false"},
}

func shownWith(name, value string) []memgraph.Setting {
	out := append([]memgraph.Setting(nil), memgraphDefaults...)
	for i := range out {
		if out[i].Name == name {
			out[i].Value = value
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// everySetting declares all eight, each away from Memgraph's default.
var everySetting = v1alpha1.CoordinatorSettings{
	EnabledReadsOnMain: ptr(true), SyncFailoverOnly: ptr(false), MaxFailoverReplicaLag: ptr(int64(1000)),
	MaxReplicaReadLag: ptr(int64(50)), DeltasBatchProgressSize: ptr(int64(5000)), InstanceDownTimeoutSeconds: ptr(int64(10)),
	InstanceHealthCheckFrequencySeconds: ptr(int64(2)), GlobalReadOnly: ptr(true),
}

func TestPlanSettings(t *testing.T) {
	set := func(name, value string) Command { return SetCoordinatorSetting{Name: name, Value: value} }
	tests := []struct {
		name     string
		declared v1alpha1.CoordinatorSettings
		shown    []memgraph.Setting
		want     []Command
		agreed   []v1alpha1.Setting
	}{
		{name: "nothing declared, nothing set", shown: shownWith("global_read_only", "true")},
		{name: "every setting in drift from the defaults", declared: everySetting, shown: memgraphDefaults, want: []Command{
			set("enabled_reads_on_main", "true"), set("sync_failover_only", "false"), set("max_failover_replica_lag", "1000"),
			set("max_replica_read_lag", "50"), set("deltas_batch_progress_size", "5000"), set("instance_down_timeout_sec", "10"),
			set("instance_health_check_frequency_sec", "2"), set("global_read_only", "true"),
		}},
		{name: "every setting as declared", declared: everySetting, shown: []memgraph.Setting{
			{Name: "enabled_reads_on_main", Value: "true"}, {Name: "sync_failover_only", Value: "false"},
			{Name: "max_failover_replica_lag", Value: "1000"}, {Name: "max_replica_read_lag", Value: "50"},
			{Name: "deltas_batch_progress_size", Value: "5000"}, {Name: "instance_down_timeout_sec", Value: "10"},
			{Name: "instance_health_check_frequency_sec", Value: "2"}, {Name: "global_read_only", Value: "true"},
		}, agreed: everySetting.List()},
		{name: "a declared default is not set again", declared: v1alpha1.CoordinatorSettings{InstanceDownTimeoutSeconds: ptr(int64(5))},
			shown: memgraphDefaults, agreed: []v1alpha1.Setting{{Name: "instance_down_timeout_sec", Value: "5"}}},
		{name: "a human's SET is put back", declared: v1alpha1.CoordinatorSettings{GlobalReadOnly: ptr(false)},
			shown: shownWith("global_read_only", "true"), want: []Command{set("global_read_only", "false")}},
		{name: "booleans compare case-insensitively", declared: v1alpha1.CoordinatorSettings{EnabledReadsOnMain: ptr(true)},
			shown: shownWith("enabled_reads_on_main", "TRUE"), agreed: []v1alpha1.Setting{{Name: "enabled_reads_on_main", Value: "true"}}},
		{name: "a setting this Memgraph does not show is set, for Memgraph to refuse",
			declared: v1alpha1.CoordinatorSettings{MaxReplicaReadLag: ptr(int64(7))},
			shown:    []memgraph.Setting{{Name: "enabled_reads_on_main", Value: "false"}},
			want:     []Command{set("max_replica_read_lag", "7")}},
		{name: "an unparsable value shown is drift", declared: v1alpha1.CoordinatorSettings{InstanceDownTimeoutSeconds: ptr(int64(5))},
			shown: shownWith("instance_down_timeout_sec", "five"), want: []Command{set("instance_down_timeout_sec", "5")}},
		{name: "settings Memgraph shows that nobody knows are left alone",
			declared: v1alpha1.CoordinatorSettings{GlobalReadOnly: ptr(false)},
			shown:    append(shownWith("global_read_only", "false"), memgraph.Setting{Name: "future_setting", Value: "x"}),
			agreed:   []v1alpha1.Setting{{Name: "global_read_only", Value: "false"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanSettings(tc.declared, tc.shown)
			if diff := cmp.Diff(tc.want, got.Commands); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.agreed, got.Agreed); diff != "" {
				t.Errorf("agreed (-want +got):\n%s", diff)
			}
			if len(got.Drift) != len(got.Commands) {
				t.Errorf("drift %q does not list each of the %d SETs", got.Drift, len(got.Commands))
			}
		})
	}
}

func TestSetCoordinatorSettingRendersTheQuery(t *testing.T) {
	got := SetCoordinatorSetting{Name: "global_read_only", Value: "true"}.String()
	if want := "SET COORDINATOR SETTING 'global_read_only' TO 'true'"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The settings topology.AdmitWithholding takes out of a spec that skipped the CRD's rules.
var (
	frequencyWithheld = v1alpha1.Violation{Field: "spec.coordinatorSettings.instanceHealthCheckFrequencySeconds", Message: v1alpha1.MsgHealthCheckFrequency}
	timeoutWithheld   = v1alpha1.Violation{Field: "spec.coordinatorSettings.instanceDownTimeoutSeconds", Message: v1alpha1.MsgInstanceDownTimeout}
)

func TestSettingsConditionAndApplied(t *testing.T) {
	declared := topology.Declared{Settings: v1alpha1.CoordinatorSettings{GlobalReadOnly: ptr(true), InstanceDownTimeoutSeconds: ptr(int64(10))}}
	step := PlanSettings(declared.Settings, shownWith("instance_down_timeout_sec", "10"))
	refused := &memgraph.Error{Kind: memgraph.KindUnknown, Message: "Invalid argument detected while trying to update setting global_read_only"}
	tests := []struct {
		name    string
		d       topology.Declared
		s       SettingsOutcome
		present bool
		want    Condition
		applied *v1alpha1.CoordinatorSettings
	}{
		{name: "no setting declared: no condition", d: topology.Declared{}, s: SettingsOutcome{}},
		{name: "stage did not run", d: declared, present: true,
			want: Condition{Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonSettingsPending,
				Message: "the coordinator settings are read and set once the cluster is converged"}},
		{name: "read failed", d: declared, s: SettingsOutcome{Ran: true, ReadErr: errors.New("connection reset")}, present: true,
			want: Condition{Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonSettingsPending,
				Message: "SHOW COORDINATOR SETTINGS on the leader failed: connection reset"}},
		{name: "set", d: declared, present: true,
			s: SettingsOutcome{Ran: true, Step: step, Execution: Execution{Ran: []string{step.Commands[0].String()}}},
			want: Condition{Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonSettingsApplied,
				Message: "the leader holds every declared coordinator setting"},
			applied: &v1alpha1.CoordinatorSettings{GlobalReadOnly: ptr(true), InstanceDownTimeoutSeconds: ptr(int64(10))}},
		{name: "refused, with Memgraph's message", d: declared, present: true,
			s: SettingsOutcome{Ran: true, Step: step, Execution: Execution{
				Stopped: &Stop{Query: step.Commands[0].String(), Verdict: StepFailed, Err: refused}}},
			want: Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonSettingRefused,
				Message: "SET COORDINATOR SETTING 'global_read_only' TO 'true': Invalid argument detected while trying to update setting global_read_only"},
			applied: &v1alpha1.CoordinatorSettings{InstanceDownTimeoutSeconds: ptr(int64(10))}},
		{name: "dry run plans without setting", d: declared, present: true, s: SettingsOutcome{Ran: true, Step: step},
			want: Condition{Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonSettingsPending,
				Message: `setting global_read_only: "false" → "true"`},
			applied: &v1alpha1.CoordinatorSettings{InstanceDownTimeoutSeconds: ptr(int64(10))}},
		{name: "a withheld setting, the only one declared", d: topology.Declared{WithheldSettings: []v1alpha1.Violation{frequencyWithheld}},
			present: true, want: Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonSettingWithheld,
				Message: "spec.coordinatorSettings.instanceHealthCheckFrequencySeconds is not sent to the coordinators: " + v1alpha1.MsgHealthCheckFrequency}},
		{name: "a withheld setting beside ones the leader holds", present: true,
			d: topology.Declared{Settings: declared.Settings, WithheldSettings: []v1alpha1.Violation{timeoutWithheld, frequencyWithheld}},
			s: SettingsOutcome{Ran: true, Step: step, Execution: Execution{Ran: []string{step.Commands[0].String()}}},
			want: Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonSettingWithheld,
				Message: bound("spec.coordinatorSettings.instanceDownTimeoutSeconds and spec.coordinatorSettings.instanceHealthCheckFrequencySeconds " +
					"are not sent to the coordinators: " + v1alpha1.MsgInstanceDownTimeout + "; " + v1alpha1.MsgHealthCheckFrequency)},
			applied: &v1alpha1.CoordinatorSettings{GlobalReadOnly: ptr(true), InstanceDownTimeoutSeconds: ptr(int64(10))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, present := SettingsCondition(tc.d, tc.s)
			if present != tc.present {
				t.Fatalf("present = %v, want %v", present, tc.present)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.applied, tc.s.Applied()); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFailoverGapCondition(t *testing.T) {
	instances := func(modes ...v1alpha1.ReplicationMode) topology.Declared {
		var d topology.Declared
		for i, m := range modes {
			d.DataInstances = append(d.DataInstances, topology.DataInstance{Member: topology.Member{Name: topology.DataInstanceName(i)}, Mode: m})
		}
		return d
	}
	async, sync := v1alpha1.ReplicationAsync, v1alpha1.ReplicationSync
	withSettings := func(d topology.Declared, s v1alpha1.CoordinatorSettings) topology.Declared { d.Settings = s; return d }
	tests := []struct {
		name string
		d    topology.Declared
		gap  bool
	}{
		{"all Sync", instances(sync, sync, sync), false},
		{"undeclared modes read as Sync", instances("", ""), false},
		{"all Async, sync_failover_only by default", instances(async, async, async), true},
		{"one Sync among Async: no candidate while it is MAIN", instances(sync, async, async), true},
		{"two Sync among Async", instances(sync, sync, async), false},
		{"all Async, sync_failover_only false", withSettings(instances(async, async), v1alpha1.CoordinatorSettings{SyncFailoverOnly: ptr(false)}), false},
		{"all Async, sync_failover_only declared true", withSettings(instances(async, async), v1alpha1.CoordinatorSettings{SyncFailoverOnly: ptr(true)}), true},
		{"a single data instance never fails over anyway", instances(async), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, gap := FailoverGapCondition(tc.d)
			if gap != tc.gap {
				t.Fatalf("gap = %v, want %v (%+v)", gap, tc.gap, c)
			}
			if gap && (c.Reason != v1alpha1.ReasonAutomaticFailoverGap || c.Status != metav1.ConditionFalse) {
				t.Errorf("condition %+v, want False with AutomaticFailoverGap", c)
			}
		})
	}
}

func TestRegistrationUsesTheDeclaredMode(t *testing.T) {
	for mode, want := range map[v1alpha1.ReplicationMode]string{
		"": "REGISTER INSTANCE instance_1 WITH", v1alpha1.ReplicationSync: "REGISTER INSTANCE instance_1 WITH",
		v1alpha1.ReplicationAsync: "REGISTER INSTANCE instance_1 AS ASYNC WITH", v1alpha1.ReplicationStrictSync: "REGISTER INSTANCE instance_1 AS STRICT_SYNC WITH",
	} {
		di := topology.DataInstance{Member: topology.Member{Name: "instance_1", BoltServer: "a:1", ManagementServer: "b:2"}, ReplicationServer: "c:3", Mode: mode}
		got := RegisterInstance{Name: di.Name, Config: instanceConfig(di)}.String()
		if len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("mode %q: got %q, want it to start with %q", mode, got, want)
		}
	}
}

func TestRolloutWithStrictSyncInstancesSaysWritesPause(t *testing.T) {
	strict := topology.Declared{DataInstances: []topology.DataInstance{
		{Member: topology.Member{Name: "instance_0"}, Mode: v1alpha1.ReplicationStrictSync},
		{Member: topology.Member{Name: "instance_1"}, Mode: v1alpha1.ReplicationAsync},
	}}
	sync := topology.Declared{DataInstances: []topology.DataInstance{{Member: topology.Member{Name: "instance_0"}}}}
	rolling := RolloutStep{Reason: v1alpha1.ReasonRolloutInProgress, Message: "replacing memgraph-data-1"}
	done := RolloutStep{Reason: v1alpha1.ReasonUpToDate, Message: "every pod is up to date"}
	tests := []struct {
		name string
		o    Outcome
		want string
	}{
		{"strict, rolling", Outcome{Declared: strict, Rollout: rolling}, "replacing memgraph-data-1; " + StrictSyncNote(strict)},
		{"strict, up to date", Outcome{Declared: strict, Rollout: done}, "every pod is up to date"},
		{"sync, rolling", Outcome{Declared: sync, Rollout: rolling}, "replacing memgraph-data-1"},
	}
	for _, tc := range tests {
		if got := tc.o.updated().Message; got != tc.want {
			t.Errorf("%s: Updated says %q, want %q", tc.name, got, tc.want)
		}
	}
	if StrictSyncNote(strict) == "" || StrictSyncNote(sync) != "" {
		t.Errorf("StrictSyncNote: %q for StrictSync, %q for Sync", StrictSyncNote(strict), StrictSyncNote(sync))
	}
}

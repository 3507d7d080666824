package v1alpha1

import "strconv"

// CoordinatorSettings are Memgraph 3.12's coordinator settings (SET COORDINATOR SETTING), one
// optional field each; nil is never touched. Bounds are what Memgraph 3.12 accepts
// (coordinator_instance.cpp SetCoordinatorSetting: the lags and batch size parse as uint64, the
// two timings as uint32, from_chars of the whole string); the uint64 ones are bounded by the
// API's int64 here, the only values above it being Memgraph's default (uint64 max), which is
// what leaving the field unset keeps. The two timings start at 1, not 0: Memgraph takes 0 for
// both and cannot run with it (settingFloors).
type CoordinatorSettings struct {
	// EnabledReadsOnMain (enabled_reads_on_main, default false) lets the routing table send reads
	// to the MAIN as well as to the replicas.
	// +optional
	EnabledReadsOnMain *bool `json:"enabledReadsOnMain,omitempty"`

	// SyncFailoverOnly (sync_failover_only, default true) makes only SYNC and STRICT_SYNC
	// replicas failover candidates. With every replica Async it leaves none: the cluster never
	// fails over by itself (the AutomaticFailoverGap condition says so).
	// +optional
	SyncFailoverOnly *bool `json:"syncFailoverOnly,omitempty"`

	// MaxFailoverReplicaLag (max_failover_replica_lag, default unbounded) excludes from failover
	// a replica more than this many transactions behind the MAIN.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxFailoverReplicaLag *int64 `json:"maxFailoverReplicaLag,omitempty"`

	// MaxReplicaReadLag (max_replica_read_lag, default unbounded) drops from the routing table's
	// readers a replica more than this many transactions behind the MAIN.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxReplicaReadLag *int64 `json:"maxReplicaReadLag,omitempty"`

	// DeltasBatchProgressSize (deltas_batch_progress_size, default 100000) is how many deltas a
	// replica applies between progress reports to the MAIN.
	// +kubebuilder:validation:Minimum=0
	// +optional
	DeltasBatchProgressSize *int64 `json:"deltasBatchProgressSize,omitempty"`

	// InstanceDownTimeoutSeconds (instance_down_timeout_sec, default 5) is how long an instance
	// may not answer the leader's health checks before it counts as down (a down MAIN is failed
	// over). Memgraph 3.12 has no start-up flag for it any more. At least 1: Memgraph takes 0,
	// which marks an instance down on its first missed health check.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4294967295
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="coordinatorSettings.instanceDownTimeoutSeconds must be at least 1: Memgraph 3.12 accepts 0, which marks an instance down on the first health check it misses, so a single lost ping fails the MAIN over; use 1 or more (Memgraph's default is 5)"
	// +optional
	InstanceDownTimeoutSeconds *int64 `json:"instanceDownTimeoutSeconds,omitempty"`

	// InstanceHealthCheckFrequencySeconds (instance_health_check_frequency_sec, default 1) is how
	// often the leader health-checks each data instance. Memgraph 3.12 has no start-up flag for it
	// any more. At least 1: Memgraph takes 0 and keeps it in the Raft log, and every coordinator
	// that becomes leader afterwards aborts on it.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4294967295
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="coordinatorSettings.instanceHealthCheckFrequencySeconds must be at least 1: Memgraph 3.12 accepts 0 and keeps it in the coordinators' Raft log; the leader then stops health-checking (no failover), and every coordinator that later leads the registered instances, or registers one, aborts, so the coordinators crash-loop until their Raft data is wiped; use 1 or more (Memgraph's default is 1)"
	// +optional
	InstanceHealthCheckFrequencySeconds *int64 `json:"instanceHealthCheckFrequencySeconds,omitempty"`

	// GlobalReadOnly (global_read_only, default false) is the maintenance switch: true makes the
	// MAIN refuse every write, cluster-wide, until it is false again. kubectl get mgc shows it.
	// +optional
	GlobalReadOnly *bool `json:"globalReadOnly,omitempty"`
}

// ReplicationMode is how the MAIN replicates to a data instance.
// +kubebuilder:validation:Enum=Sync;Async;StrictSync
type ReplicationMode string

const (
	ReplicationSync       ReplicationMode = "Sync"
	ReplicationAsync      ReplicationMode = "Async"
	ReplicationStrictSync ReplicationMode = "StrictSync"
)

// ReplicationModeOverride gives one data instance its own replication mode.
type ReplicationModeOverride struct {
	// Instance is the data instance, instance_<n>.
	// +kubebuilder:validation:MaxLength=12
	// +kubebuilder:validation:XValidation:rule="self.matches('^instance_(0|[1-9][0-9]{0,2})$')",message="replicationModeOverrides[].instance must name a data instance as SHOW INSTANCES names it, instance_<n> such as instance_1"
	Instance string `json:"instance"`

	// Mode is the instance's replication mode.
	Mode ReplicationMode `json:"mode"`
}

// ModeOf is the declared replication mode of data instance name: its override, else
// spec.replicationMode, else Sync.
func (s MemgraphClusterSpec) ModeOf(name string) ReplicationMode {
	for _, o := range s.ReplicationModeOverrides {
		if o.Instance == name {
			return o.Mode
		}
	}
	if s.ReplicationMode == "" {
		return ReplicationSync
	}
	return s.ReplicationMode
}

// Setting is one coordinator setting as Memgraph names and shows it (SHOW COORDINATOR SETTINGS:
// booleans "true"/"false", numbers in decimal).
// +kubebuilder:object:generate=false
type Setting struct {
	Name  string
	Value string
}

// The settings' names (Memgraph v3.12.0 src/coordination/include/coordination/constants.hpp).
const (
	SettingEnabledReadsOnMain      = "enabled_reads_on_main"
	SettingSyncFailoverOnly        = "sync_failover_only"
	SettingMaxFailoverReplicaLag   = "max_failover_replica_lag"
	SettingMaxReplicaReadLag       = "max_replica_read_lag"
	SettingDeltasBatchProgressSize = "deltas_batch_progress_size"
	SettingInstanceDownTimeout     = "instance_down_timeout_sec"
	SettingHealthCheckFrequency    = "instance_health_check_frequency_sec"
	SettingGlobalReadOnly          = "global_read_only"
)

// settingFields pairs each setting's name with its field, in SHOW COORDINATOR SETTINGS' order.
func (s *CoordinatorSettings) settingFields() []struct {
	name    string
	boolean **bool
	number  **int64
} {
	type f = struct {
		name    string
		boolean **bool
		number  **int64
	}
	return []f{
		{SettingEnabledReadsOnMain, &s.EnabledReadsOnMain, nil},
		{SettingSyncFailoverOnly, &s.SyncFailoverOnly, nil},
		{SettingMaxFailoverReplicaLag, nil, &s.MaxFailoverReplicaLag},
		{SettingMaxReplicaReadLag, nil, &s.MaxReplicaReadLag},
		{SettingDeltasBatchProgressSize, nil, &s.DeltasBatchProgressSize},
		{SettingInstanceDownTimeout, nil, &s.InstanceDownTimeoutSeconds},
		{SettingHealthCheckFrequency, nil, &s.InstanceHealthCheckFrequencySeconds},
		{SettingGlobalReadOnly, &s.GlobalReadOnly, nil},
	}
}

// List is the declared settings, in SHOW COORDINATOR SETTINGS' order, each value written as
// Memgraph shows it; empty when none is declared.
func (s CoordinatorSettings) List() []Setting {
	var out []Setting
	for _, f := range s.settingFields() {
		switch {
		case f.boolean != nil && *f.boolean != nil:
			out = append(out, Setting{f.name, strconv.FormatBool(**f.boolean)})
		case f.number != nil && *f.number != nil:
			out = append(out, Setting{f.name, strconv.FormatInt(**f.number, 10)})
		}
	}
	return out
}

// SettingsOf is the CoordinatorSettings holding settings (unknown names are left out); nil when
// none is known.
func SettingsOf(settings []Setting) *CoordinatorSettings {
	var s CoordinatorSettings
	known := false
	for _, set := range settings {
		for _, f := range s.settingFields() {
			if f.name != set.Name {
				continue
			}
			if f.boolean != nil {
				if b, err := strconv.ParseBool(set.Value); err == nil {
					*f.boolean, known = &b, true
				}
			} else if n, err := strconv.ParseInt(set.Value, 10, 64); err == nil {
				*f.number, known = &n, true
			}
		}
	}
	if !known {
		return nil
	}
	return &s
}

// SyncFailoverOnlyEffective is sync_failover_only as the spec leaves it: declared, or Memgraph's
// default (true) when unset.
func (s CoordinatorSettings) SyncFailoverOnlyEffective() bool {
	return s.SyncFailoverOnly == nil || *s.SyncFailoverOnly
}

package topology

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemgraphBackup is one snapshot of a MemgraphCluster's MAIN, uploaded to S3-compatible object
// storage. It is taken once: the hook runs CREATE SNAPSHOT on the MAIN, the backup agent beside
// the MAIN uploads the snapshot file, and the status records the result. A Failed backup is never
// retried; create a new MemgraphBackup.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=mgb
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=".spec.cluster",description="The MemgraphCluster backed up"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase",description="Pending, Running, Completed or Failed"
// +kubebuilder:printcolumn:name="Instance",type=string,JSONPath=".status.instance",description="The data instance (the MAIN) the snapshot was taken on"
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=".status.key",description="The object's key in the bucket"
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=".status.size",description="The object's size in bytes"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=".status.reason",description="Why the backup waits or failed",priority=1
// +kubebuilder:printcolumn:name="Completed",type=date,JSONPath=".status.completedAt"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type MemgraphBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec cannot change once the backup exists: a backup is taken once.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a MemgraphBackup's spec is immutable: a backup is taken once, of one cluster, to one destination; create a new MemgraphBackup instead"
	Spec   MemgraphBackupSpec   `json:"spec"`
	Status MemgraphBackupStatus `json:"status,omitempty"`
}

// MemgraphBackupList is a list of MemgraphBackups.
//
// +kubebuilder:object:root=true
type MemgraphBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MemgraphBackup `json:"items"`
}

// MemgraphBackupSpec is what to back up and where to.
type MemgraphBackupSpec struct {
	// Cluster is the name of the MemgraphCluster to back up, in the backup's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="cluster must name a MemgraphCluster in the backup's namespace: lower-case letters, digits and '-', starting with a letter"
	Cluster string `json:"cluster"`

	// Destination is where the snapshot is uploaded.
	Destination BackupDestination `json:"destination"`

	// DeletionPolicy says what deleting the MemgraphBackup does to its object: Retain (the
	// default) leaves it in the bucket, Delete removes it before the MemgraphBackup goes.
	// +kubebuilder:default=Retain
	// +optional
	DeletionPolicy BackupDeletionPolicy `json:"deletionPolicy,omitempty"`
}

// BackupDeletionPolicy is spec.deletionPolicy.
// +kubebuilder:validation:Enum=Retain;Delete
type BackupDeletionPolicy string

const (
	BackupRetain BackupDeletionPolicy = "Retain"
	BackupDelete BackupDeletionPolicy = "Delete"
)

// BackupDestination is the object store a backup goes to.
type BackupDestination struct {
	S3 S3Destination `json:"s3"`
}

// S3Destination is a bucket of an S3-compatible object store and the Secrets to reach it with.
// The object's key is <prefix>/<namespace>/<cluster>/<backup name>/<snapshot file name> (without
// the leading <prefix>/ when prefix is empty).
type S3Destination struct {
	// Endpoint is the store's URL, https://host[:port] (or http:// for a store without TLS), such
	// as https://s3.eu-west-1.amazonaws.com or https://minio.storage.svc:9000.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?/?$')",message="destination.s3.endpoint must be the object store's URL without a path, https://host[:port] or http://host[:port], such as https://s3.eu-west-1.amazonaws.com"
	Endpoint string `json:"endpoint"`

	// Bucket is the bucket's name; it must exist.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9][a-z0-9.-]*[a-z0-9]$')",message="destination.s3.bucket must be a bucket name: 3 to 63 lower-case letters, digits, '.' and '-', starting and ending with a letter or digit"
	Bucket string `json:"bucket"`

	// Prefix is put in front of every key, such as backups/production.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.endsWith('/') && !self.contains('//')",message="destination.s3.prefix must be a key prefix such as backups/production, without a leading or trailing '/' and without '//'"
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// Region is the bucket's region; us-east-1 when unset.
	// +kubebuilder:default="us-east-1"
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Region string `json:"region,omitempty"`

	// CredentialsSecret names a Secret in the backup's namespace with the keys accessKeyId and
	// secretAccessKey. The hook reads it through Metacontroller for each call and hands the
	// credentials to the backup agent for the one upload; it never logs, stores or returns them.
	CredentialsSecret SecretReference `json:"credentialsSecret"`

	// CASecret names a Secret in the backup's namespace whose ca.crt is the CA the store's
	// certificate is verified with; unset, the system's trusted CAs are used.
	// +optional
	CASecret *SecretReference `json:"caSecret,omitempty"`
}

// SecretReference names a Secret in the object's namespace.
type SecretReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="name must name a Secret in the same namespace: lower-case letters, digits, '-' and '.'"
	Name string `json:"name"`
}

// The keys of a destination's Secrets.
const (
	S3AccessKeyIDKey     = "accessKeyId"
	S3SecretAccessKeyKey = "secretAccessKey"
	S3CAKey              = "ca.crt"
)

// MemgraphBackupStatus is what happened to the backup. Unlike a MemgraphCluster's status, it is
// a record: a backup is taken once, so what it recorded (where it was taken, that it failed) is
// what the next call continues from, together with what the backup agent and the object store
// answer.
type MemgraphBackupStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is Pending (waiting to start: Reason says for what), Running (the snapshot is taken
	// and being uploaded), Completed or Failed (Error says why, in Memgraph's or the object
	// store's own words).
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`

	// Reason is a CamelCase word for why the backup waits or failed, such as ClusterNotFound,
	// BackupRunning, MainChanged or UploadFailed.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Error is what failed or what the backup waits for, in Memgraph's or the object store's
	// own words where one of them refused.
	// +optional
	Error string `json:"error,omitempty"`

	// StartedAt is when the snapshot was taken and the upload started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// CompletedAt is when the backup completed or failed.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// Instance is the data instance (instance_<n>) that was MAIN and took the snapshot, Pod its
	// pod.
	// +optional
	Instance string `json:"instance,omitempty"`
	// +optional
	Pod string `json:"pod,omitempty"`

	// MemgraphVersion is the image tag the MAIN ran: the snapshot's format is that version's.
	// +optional
	MemgraphVersion string `json:"memgraphVersion,omitempty"`

	// Snapshot is the snapshot file's path on the MAIN, as SHOW SNAPSHOTS names it.
	// +optional
	Snapshot string `json:"snapshot,omitempty"`

	// SnapshotTimestamp is the snapshot's durable timestamp, as SHOW SNAPSHOTS reports it: the
	// commit timestamp of the last transaction the snapshot holds.
	// +optional
	SnapshotTimestamp int64 `json:"snapshotTimestamp,omitempty"`

	// Key is the object's key in the bucket, Size its size in bytes.
	// +optional
	Key string `json:"key,omitempty"`
	// +optional
	Size int64 `json:"size,omitempty"`
}

// BackupPhase is a MemgraphBackup's status.phase.
// +kubebuilder:validation:Enum=Pending;Running;Completed;Failed
type BackupPhase string

const (
	BackupPending   BackupPhase = "Pending"
	BackupRunning   BackupPhase = "Running"
	BackupCompleted BackupPhase = "Completed"
	BackupFailed    BackupPhase = "Failed"
)

// Done reports whether the phase is final: Completed or Failed.
func (p BackupPhase) Done() bool { return p == BackupCompleted || p == BackupFailed }

// MemgraphScheduledBackup takes MemgraphBackups of a cluster on a cron schedule and keeps the
// newest completed ones. Its MemgraphBackups are its children: Metacontroller creates them and
// deletes those the schedule drops (with deletionPolicy Delete, their objects too).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=mgsb
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=".spec.backupTemplate.cluster",description="The MemgraphCluster backed up"
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=".spec.schedule",description="Cron schedule, UTC"
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=".spec.suspend"
// +kubebuilder:printcolumn:name="Keep",type=integer,JSONPath=".spec.keep"
// +kubebuilder:printcolumn:name="Last",type=date,JSONPath=".status.lastScheduleTime",description="When the newest backup was scheduled"
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=".status.nextScheduleTime",description="When the next backup is due"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type MemgraphScheduledBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MemgraphScheduledBackupSpec   `json:"spec"`
	Status MemgraphScheduledBackupStatus `json:"status,omitempty"`
}

// MemgraphScheduledBackupList is a list of MemgraphScheduledBackups.
//
// +kubebuilder:object:root=true
type MemgraphScheduledBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MemgraphScheduledBackup `json:"items"`
}

// MemgraphScheduledBackupSpec is the schedule and what each backup is.
type MemgraphScheduledBackupSpec struct {
	// Schedule is a cron schedule in UTC with five fields (minute hour day-of-month month
	// day-of-week), such as "0 3 * * *" for 03:00 every day, or a descriptor such as @daily or
	// @every 6h. The hook checks it; a schedule that does not parse stops the schedule and says
	// why in the Scheduled condition.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.startsWith('@') || self.split(' ').filter(f, f != '').size() == 5",message="schedule must be a cron schedule of five fields in UTC (minute hour day-of-month month day-of-week), such as \"0 3 * * *\", or a descriptor such as @daily or @every 6h"
	Schedule string `json:"schedule"`

	// BackupTemplate is the spec of each MemgraphBackup the schedule creates.
	BackupTemplate MemgraphBackupSpec `json:"backupTemplate"`

	// Keep is how many completed backups to keep: when a newer one completes, the oldest
	// completed backup beyond Keep is deleted (and, with deletionPolicy Delete, its object). A
	// running backup is never deleted; a failed one counts for nothing and is deleted once a
	// newer backup completes.
	// +kubebuilder:default=7
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Keep int32 `json:"keep,omitempty"`

	// Suspend stops new backups from being scheduled; backups already running finish.
	// +kubebuilder:default=false
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// MemgraphScheduledBackupStatus is what the schedule observed of its backups.
type MemgraphScheduledBackupStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LastScheduleTime is the scheduled time of the newest backup that exists.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// NextScheduleTime is when the next backup is due; unset while suspended or when the schedule
	// does not parse.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// Backups are the MemgraphBackups the schedule keeps, newest first, with their phases.
	// +listType=atomic
	// +optional
	Backups []ScheduledBackupRef `json:"backups,omitempty"`

	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ScheduledBackupRef is one backup of a schedule.
type ScheduledBackupRef struct {
	Name  string      `json:"name"`
	Phase BackupPhase `json:"phase,omitempty"`
	// ScheduledAt is the schedule's time the backup stands for.
	ScheduledAt metav1.Time `json:"scheduledAt"`
}

// Bootstrap is how a new cluster gets its data.
type Bootstrap struct {
	// FromBackup restores a backup into the new cluster before it takes writes.
	// +optional
	FromBackup *FromBackup `json:"fromBackup,omitempty"`
}

// FromBackup names the backup a new cluster restores: a MemgraphBackup in the cluster's
// namespace (Name), or, when that object is gone, the object itself (Destination and Key).
// +kubebuilder:validation:XValidation:rule="has(self.name) != (has(self.destination) || has(self.key))",message="bootstrap.fromBackup must name either a MemgraphBackup (name) or an object (destination and key), not both"
// +kubebuilder:validation:XValidation:rule="has(self.destination) == has(self.key)",message="bootstrap.fromBackup.destination and bootstrap.fromBackup.key go together: the key of the object in that destination, as the MemgraphBackup's status.key named it"
type FromBackup struct {
	// Name is a Completed MemgraphBackup in the cluster's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`

	// Destination is the object store holding the backup.
	// +optional
	Destination *BackupDestination `json:"destination,omitempty"`

	// Key is the object's key in Destination's bucket.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Key string `json:"key,omitempty"`
}

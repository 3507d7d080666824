package topology

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemgraphBackup is one snapshot of every database of a MemgraphCluster, uploaded to
// S3-compatible object storage. It is taken once: the hook chooses the instance (a caught-up
// replica or the MAIN, spec.backup.target of the cluster) and starts a job on the backup agent
// beside it, which takes the snapshots and uploads them; the hook polls the job and the status
// records it. A Failed backup is never retried; create a new MemgraphBackup.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=mgb
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=".spec.cluster",description="The MemgraphCluster backed up"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase",description="Pending, Running, Completed or Failed"
// +kubebuilder:printcolumn:name="Instance",type=string,JSONPath=".status.instance",description="The data instance the snapshots were taken on"
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=".status.instanceRole",description="MAIN or REPLICA, when the instance was chosen",priority=1
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=".status.key",description="The default database's object's key in the bucket"
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=".status.size",description="The bytes of every object uploaded"
// +kubebuilder:printcolumn:name="Uploaded",type=integer,JSONPath=".status.uploadedBytes",description="Bytes uploaded so far",priority=1
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

	// Phase is Pending (waiting to start: Reason says for what), Running (the agent beside the
	// instance snapshots every database and uploads each: Reason is Snapshotting or Uploading),
	// Completed or Failed (Error says why, in Memgraph's or the object store's own words).
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`

	// Reason is a CamelCase word for why the backup waits or failed, such as ClusterNotFound,
	// BackupRunning, RoleChanged or UploadFailed, or what it does while Running.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Error is what failed or what the backup waits for, in Memgraph's or the object store's
	// own words where one of them refused.
	// +optional
	Error string `json:"error,omitempty"`

	// StartedAt is when the backup's job started on the agent.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// CompletedAt is when the backup completed or failed.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// Deadline is when a backup that has not completed gives up: its creation plus six hours.
	// Until then a snapshot already being written (the periodic one) is waited for.
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`

	// Instance is the data instance (instance_<n>) the snapshots were taken on, Pod its pod.
	// +optional
	Instance string `json:"instance,omitempty"`
	// +optional
	Pod string `json:"pod,omitempty"`

	// InstanceRole is the instance's role when it was chosen, MAIN or REPLICA, and
	// InstanceReason why it was chosen (spec.backup.target of the cluster, and the replicas'
	// catch-up as the MAIN and the leader report it).
	// +optional
	InstanceRole string `json:"instanceRole,omitempty"`
	// +optional
	InstanceReason string `json:"instanceReason,omitempty"`

	// MemgraphVersion is the image tag the instance ran: the snapshots' format is that version's.
	// +optional
	MemgraphVersion string `json:"memgraphVersion,omitempty"`

	// Snapshot, SnapshotTimestamp and Key are the default database's (memgraph): its snapshot
	// file's path on the instance, its durable timestamp (the commit timestamp of the last
	// transaction it holds) and its object's key in the bucket, which a restore by
	// destination and key names. Databases lists every database.
	// +optional
	Snapshot string `json:"snapshot,omitempty"`
	// +optional
	SnapshotTimestamp int64 `json:"snapshotTimestamp,omitempty"`
	// +optional
	Key string `json:"key,omitempty"`

	// Size is the bytes of every object uploaded, once Completed.
	// +optional
	Size int64 `json:"size,omitempty"`

	// UploadedBytes of TotalBytes are uploaded (TotalBytes is known once every snapshot is
	// written).
	// +optional
	UploadedBytes int64 `json:"uploadedBytes,omitempty"`
	// +optional
	TotalBytes int64 `json:"totalBytes,omitempty"`

	// SnapshotWaits counts the times CREATE SNAPSHOT found a snapshot of the same database
	// already being written (the periodic one) and waited for it.
	// +optional
	SnapshotWaits int32 `json:"snapshotWaits,omitempty"`

	// Databases are the instance's databases (Enterprise multi-tenancy: every one of them), the
	// default one first, each with its snapshot and object. Users and roles are not in a
	// snapshot.
	// +listType=atomic
	// +optional
	Databases []BackupDatabase `json:"databases,omitempty"`
}

// BackupDatabase is one database of a backup.
type BackupDatabase struct {
	Name string `json:"name"`
	// Snapshot is the snapshot file's path on the instance, SnapshotTimestamp its durable
	// timestamp.
	// +optional
	Snapshot string `json:"snapshot,omitempty"`
	// +optional
	SnapshotTimestamp int64 `json:"snapshotTimestamp,omitempty"`
	// Key is the object's key in the bucket, Size its size in bytes and SHA256 the hex SHA-256
	// of its bytes as uploaded, which a restore verifies before Memgraph loads the file.
	// +optional
	Key string `json:"key,omitempty"`
	// +optional
	Size int64 `json:"size,omitempty"`
	// +optional
	SHA256 string `json:"sha256,omitempty"`
	// Skipped says why the database was not backed up (COLD, or broken); unset when it was.
	// +optional
	Skipped string `json:"skipped,omitempty"`
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

// ClusterBackup is spec.backup: how the cluster's backups are taken.
type ClusterBackup struct {
	// Target is the data instance a backup's snapshot is taken on. PreferReplica (the default):
	// a Sync or StrictSync replica proven caught up with the MAIN as a handover target is (SHOW
	// REPLICATION LAG 0 behind and the MAIN's SHOW REPLICAS ready on every database), else the
	// MAIN; a backup then costs the MAIN nothing. Main: always the MAIN.
	// +kubebuilder:default=PreferReplica
	// +optional
	Target BackupTarget `json:"target,omitempty"`
}

// BackupTarget is spec.backup.target.
// +kubebuilder:validation:Enum=PreferReplica;Main
type BackupTarget string

const (
	BackupPreferReplica BackupTarget = "PreferReplica"
	BackupOnMain        BackupTarget = "Main"
)

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

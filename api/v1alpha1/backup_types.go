package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemgraphBackup is one snapshot of every database of a MemgraphCluster, uploaded to the
// cluster's own object store (its spec.backup.destination: a MemgraphBackup names no store). It
// is taken once: the hook chooses the instance (a caught-up replica or the MAIN,
// spec.backup.target of the cluster) and starts a job on the backup agent beside it, which takes
// the snapshots and uploads them; the hook polls the job and the status records it. A Failed
// backup is never retried; create a new MemgraphBackup.
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
// +kubebuilder:printcolumn:name="Deadline",type=date,JSONPath=".status.deadline",description="When a backup that has not completed fails: its creation plus spec.timeout",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type MemgraphBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec cannot change once the backup exists: a backup is taken once.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a MemgraphBackup's spec is immutable: a backup is taken once, of one cluster; create a new MemgraphBackup instead"
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

// MemgraphBackupSpec is what to back up. Where to is the cluster's: its
// spec.backup.destination, the one store its data may go to.
type MemgraphBackupSpec struct {
	// Cluster is the name of the MemgraphCluster to back up, in the backup's namespace. The
	// backup goes to that cluster's spec.backup.destination.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="cluster must name a MemgraphCluster in the backup's namespace: lower-case letters, digits and '-', starting with a letter"
	Cluster string `json:"cluster"`

	// DeletionPolicy says what deleting the MemgraphBackup does to its objects: Retain (the
	// default) leaves them in the bucket, Delete removes them before the MemgraphBackup goes. A
	// backup of a MemgraphScheduledBackup whose backupOwnerReference is none keeps its objects
	// when the schedule is deleted, whatever this says.
	// +kubebuilder:default=Retain
	// +optional
	DeletionPolicy BackupDeletionPolicy `json:"deletionPolicy,omitempty"`

	// Timeout is how long the whole backup may take from its creation, in hours, minutes and
	// seconds (6h, 90m, 1h30m), from 10s to 168h: the backup's deadline (status.deadline) is its
	// creation plus Timeout. A backup that has not started by then (its Secret is missing, no
	// MAIN is up, its agent does not answer) or not completed (the store did not answer) fails,
	// DeadlineExceeded, saying what held it, and never blocks a later backup past its deadline.
	// +kubebuilder:default="6h"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(h|m|s))+$') && duration(self) >= duration('10s') && duration(self) <= duration('168h')",message="timeout must be a duration from 10s to 168h written in hours, minutes and seconds, such as 6h, 90m or 1h30m: how long the backup may take from its creation"
	// +optional
	Timeout string `json:"timeout,omitempty"`
}

// BackupDeletionPolicy is spec.deletionPolicy.
// +kubebuilder:validation:Enum=Retain;Delete
type BackupDeletionPolicy string

const (
	BackupRetain BackupDeletionPolicy = "Retain"
	BackupDelete BackupDeletionPolicy = "Delete"
)

// BackupDestination is the object store a cluster's backups go to (spec.backup.destination), or
// a restore reads from (spec.bootstrap.fromBackup.destination).
type BackupDestination struct {
	S3 S3Destination `json:"s3"`
}

// S3Destination is a bucket of an S3-compatible object store and the Secrets to reach it with.
// The object's key is <prefix>/<namespace>/<cluster>/<backup name>/<snapshot file name> (without
// the leading <prefix>/ when prefix is empty).
// +kubebuilder:validation:XValidation:rule="!self.endpoint.startsWith('http://') || (has(self.insecure) && self.insecure)",message="destination.s3.endpoint is plain http://: the database's snapshots and the store's requests would cross the network unencrypted; use the store's https:// URL, or set destination.s3.insecure: true to accept plain HTTP"
type S3Destination struct {
	// Endpoint is the store's URL, https://host[:port] (or http://host[:port] for a store without
	// TLS, with Insecure), such as https://s3.eu-west-1.amazonaws.com or
	// https://minio.storage.svc:9000.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?/?$')",message="destination.s3.endpoint must be the object store's URL without a path, https://host[:port] or http://host[:port], such as https://s3.eu-west-1.amazonaws.com"
	Endpoint string `json:"endpoint"`

	// Insecure allows an http:// endpoint: snapshots and requests then cross the network in
	// plain text (the requests are signed; the payload is not, but carries a CRC32C the store
	// verifies). It does not turn off the verification of an https:// endpoint's certificate.
	// +optional
	Insecure bool `json:"insecure,omitempty"`

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

	// CredentialsSecret names a Secret in the cluster's namespace with the keys accessKeyId and
	// secretAccessKey. The cluster's hook copies them into the cluster's <cluster>-backup-agent
	// Secret, which its backups read, and hands them to a backup agent for one job; the hook
	// never logs or stores them.
	CredentialsSecret SecretReference `json:"credentialsSecret"`

	// CASecret names a Secret in the cluster's namespace whose ca.crt is the CA the store's
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

	// Deadline is when a backup that has not completed gives up: its creation plus
	// spec.timeout. Until then a snapshot already being written (the periodic one) is waited
	// for, and a store or agent that does not answer is tried again.
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`

	// Endpoint and Bucket are the store the backup's objects went to: its cluster's
	// spec.backup.destination when the backup started. Deleting the objects (deletionPolicy
	// Delete) and restoring the backup by name read the objects there.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// +optional
	Bucket string `json:"bucket,omitempty"`

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
	// CRC32C is the object's full-object CRC32C (base64, as S3 spells it): the upload carried
	// it, the store verified it on arrival, and the agent read it back from the store after the
	// upload and found it equal to its own. A restore verifies it too.
	// +optional
	CRC32C string `json:"crc32c,omitempty"`
	// Verified is how the agent found, after the upload, that the store holds what it sent:
	// checksum (the store reported the object's size and CRC32C, equal to what was sent) or
	// read back (a store that reports no checksum: the object was read back whole and its SHA-256
	// found equal).
	// +optional
	Verified string `json:"verified,omitempty"`
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
// deletes those the schedule drops (with deletionPolicy Delete, their objects too). Deleting the
// schedule deletes its MemgraphBackups too; their objects stay in the store unless
// backupOwnerReference is self.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=mgsb
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=".spec.backupTemplate.cluster",description="The MemgraphCluster backed up"
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=".spec.schedule",description="Cron schedule, UTC"
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=".spec.suspend"
// +kubebuilder:printcolumn:name="Keep",type=integer,JSONPath=".spec.keep"
// +kubebuilder:printcolumn:name="Max Age",type=string,JSONPath=".spec.maxAge",priority=1
// +kubebuilder:printcolumn:name="Last",type=date,JSONPath=".status.lastScheduleTime",description="When the newest backup was scheduled"
// +kubebuilder:printcolumn:name="Last Success",type=date,JSONPath=".status.lastSuccessfulBackup.time",description="When the newest backup that completed completed"
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
	// completed backup beyond Keep is deleted (and, with deletionPolicy Delete, its objects). A
	// running backup is never deleted; a failed one counts for nothing and is deleted once a
	// newer backup completes.
	// +kubebuilder:default=7
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Keep int32 `json:"keep,omitempty"`

	// MaxAge deletes, beside Keep, the completed backups scheduled longer ago than it (and, with
	// deletionPolicy Delete, their objects), oldest first: a number of hours, days or weeks such
	// as 36h, 30d or 8w. The newest completed backup is never deleted, however old. Unset, age
	// deletes nothing.
	// +kubebuilder:validation:XValidation:rule="self.matches('^[1-9][0-9]{0,4}[hdw]$')",message="maxAge must be a whole number of hours, days or weeks, such as 36h, 30d or 8w"
	// +optional
	MaxAge string `json:"maxAge,omitempty"`

	// BackupOwnerReference says what deleting the schedule does to the data of its backups. Its
	// MemgraphBackups are its children and go with it either way. none (the default): every
	// object they put in the store stays, whatever their deletionPolicy; a restore by
	// destination and key still reads it. self: they are deleted as their deletionPolicy says.
	// +kubebuilder:default=none
	// +optional
	BackupOwnerReference BackupOwnerReference `json:"backupOwnerReference,omitempty"`

	// Suspend stops new backups from being scheduled; backups already running finish.
	// +kubebuilder:default=false
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// BackupOwnerReference is spec.backupOwnerReference of a MemgraphScheduledBackup.
// +kubebuilder:validation:Enum=none;self
type BackupOwnerReference string

const (
	BackupOwnerNone BackupOwnerReference = "none"
	BackupOwnerSelf BackupOwnerReference = "self"
)

// MemgraphScheduledBackupStatus is what the schedule observed of its backups.
type MemgraphScheduledBackupStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LastScheduleTime is the scheduled time of the newest backup the schedule created.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// LastSuccessfulBackup is the newest of the schedule's backups that completed: its name and
	// when it completed. It is kept when that MemgraphBackup is deleted by hand.
	// +optional
	LastSuccessfulBackup *SuccessfulBackup `json:"lastSuccessfulBackup,omitempty"`

	// NextScheduleTime is when the next backup is due; unset while suspended or when the schedule
	// does not parse.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// Backups are the MemgraphBackups the schedule keeps, newest first, with their phases.
	// +listType=atomic
	// +optional
	Backups []ScheduledBackupRef `json:"backups,omitempty"`

	// Conditions are Scheduled (False while suspended, when the schedule does not parse, or
	// while the schedule is deleted) and LastBackupSucceeded (whether the newest of its backups
	// that ended completed; False names the one that failed and why).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SuccessfulBackup is a MemgraphBackup that completed, and when.
type SuccessfulBackup struct {
	Name string      `json:"name"`
	Time metav1.Time `json:"time"`
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

	// Destination is the one object store the cluster's data may go to: every MemgraphBackup of
	// the cluster uploads there, and a MemgraphBackup names no store of its own. Choosing it is
	// editing the cluster; creating a MemgraphBackup only reads the database into it. A restore
	// (bootstrap.fromBackup) reads from it unless fromBackup names a destination. Unset, the
	// cluster's backups wait (Pending, NoDestination) until it is set, or fail at their deadline.
	// +optional
	Destination *BackupDestination `json:"destination,omitempty"`
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

// FromBackup names the backup a new cluster restores: a Completed MemgraphBackup in the
// cluster's namespace (Name), whose objects are in the cluster's spec.backup.destination; or,
// when that object is gone, the default database's object (Key, as the MemgraphBackup's
// status.key said) in spec.backup.destination, or in Destination when the object is in another
// store (another cluster's bucket).
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.key)",message="bootstrap.fromBackup must name either a MemgraphBackup (name) or the key of its default database's object (key, and destination when the object is not in spec.backup.destination), not both"
// +kubebuilder:validation:XValidation:rule="!has(self.destination) || has(self.key)",message="bootstrap.fromBackup.destination goes with bootstrap.fromBackup.key: the key of the object in that destination, as the MemgraphBackup's status.key named it; a MemgraphBackup named by name is read from spec.backup.destination"
type FromBackup struct {
	// Name is a Completed MemgraphBackup in the cluster's namespace; its objects are read from
	// the cluster's spec.backup.destination, which must be the store it went to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`

	// Destination is the object store holding the backup, when it is not the cluster's own
	// spec.backup.destination: only read from, never written to.
	// +optional
	Destination *BackupDestination `json:"destination,omitempty"`

	// Key is the default database's object's key in the store (Destination's, else
	// spec.backup.destination's); the other databases' objects are beside it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Key string `json:"key,omitempty"`
}

// DefaultDatabase is the database every Memgraph instance has, the one a Bolt session without a
// database selects.
const DefaultDatabase = "memgraph"

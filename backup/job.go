package backup

import "time"

// JobsPath is the agent's route for jobs: PUT starts one (idempotent), GET reads it.
const JobsPath = "/v1/jobs/"

// The kinds of job an agent runs.
const (
	KindBackup  = "backup"
	KindRestore = "restore"
)

// JobRequest asks the agent to run one job beside its Memgraph: a backup (snapshot every
// database, upload each snapshot) or a restore (download each database's snapshot into Memgraph
// and recover it). Everything the job needs travels in it; the agent keeps none of it on disk.
type JobRequest struct {
	Kind string `json:"kind"`
	// Memgraph is how the agent reaches the instance of its own pod.
	Memgraph MemgraphTarget `json:"memgraph"`
	// Deadline is when the job gives up: until then a snapshot already being written is waited
	// for and a store that does not answer is tried again.
	Deadline time.Time `json:"deadline"`
	// Store is the bucket and the credentials. For a backup, Store.Key is the prefix every
	// object goes under (topology.BackupKeyPrefix); for a restore, the default database's
	// object, beside which the other databases' objects are (topology.BackupDatabasesPrefix).
	Store       S3Object      `json:"store"`
	Credentials S3Credentials `json:"credentials"`
	// Role is, for a backup, the replication role ("main" or "replica") the instance was chosen
	// in: one that holds another when the job starts is not snapshotted. Reason is why it was
	// chosen, which the job keeps for a caller whose answer was lost.
	Role   string `json:"role,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Databases are, for a restore, the objects to restore as the backup recorded them (key,
	// size, SHA-256, timestamp); empty, the agent lists the store beside Store.Key.
	Databases []DatabaseJob `json:"databases,omitempty"`
	// RetryFailed starts again a job that failed; a running or completed one is returned as it
	// is whatever this says.
	RetryFailed bool `json:"retryFailed,omitempty"`
}

// MemgraphTarget is how the agent reaches the Memgraph of its own pod over Bolt: the instance's
// advertised address (the agent dials its port on the loopback interface; TLS, when CAPEM is set,
// verifies the address's host) and spec.auth's user, when the cluster has one.
type MemgraphTarget struct {
	Address  string `json:"address"`
	CAPEM    []byte `json:"caPEM,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// The states of a job, and the phases of a running one.
const (
	StateRunning   = "Running"
	StateCompleted = "Completed"
	StateFailed    = "Failed"

	PhaseCheckingStore = "CheckingStore" // a backup: the bucket answers, before anything is snapshotted
	PhaseSnapshotting  = "Snapshotting"  // CREATE SNAPSHOT, waiting for one already being written
	PhaseUploading     = "Uploading"
	PhaseDownloading   = "Downloading" // a restore: the object streams into Memgraph
	PhaseRecovering    = "Recovering"  // a restore: Memgraph loads the snapshot it downloaded
)

// JobStatus is what the agent records of a job, from its start: what it was asked and what it
// did so far. A caller whose Start answer was lost learns everything from a Status.
type JobStatus struct {
	Kind  string `json:"kind"`
	State string `json:"state"`
	// Phase is what a running job does now, and what a failed one was doing when it failed.
	Phase string `json:"phase,omitempty"`
	// ChosenRole and Reason are the role the caller chose the instance in and why, as the
	// request said; Role is the role the instance held when the backup began.
	ChosenRole string    `json:"chosenRole,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Role       string    `json:"role,omitempty"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	Deadline   time.Time `json:"deadline"`
	// Databases are the job's databases, in order (the default database first), each with what
	// was done to it so far.
	Databases []DatabaseJob `json:"databases,omitempty"`
	// BytesDone of BytesTotal: uploaded (a backup, once every snapshot is written) or streamed
	// into Memgraph (a restore).
	BytesDone  int64 `json:"bytesDone"`
	BytesTotal int64 `json:"bytesTotal"`
	// SnapshotWaits counts the CREATE SNAPSHOTs refused because a snapshot of the same database
	// was already being written, each waited out.
	SnapshotWaits int `json:"snapshotWaits,omitempty"`
	// Error is why the job failed, in Memgraph's, the store's or the file system's words.
	Error string `json:"error,omitempty"`
	// Retrying is, while the job runs, the error of the store that it waits to try again
	// (a store that did not answer, or answered it is busy); "" once a try succeeded.
	Retrying string `json:"retrying,omitempty"`
	// Permanent: the failure is one that trying again does not mend (the storage holds data,
	// the object's checksum differs), as opposed to the deadline passing.
	Permanent bool `json:"permanent,omitempty"`
}

// DatabaseJob is one database of a job: its snapshot and its object.
type DatabaseJob struct {
	Name string `json:"name"`
	// Snapshot is the file's path on the instance (a backup), SnapshotTimestamp its durable
	// timestamp as SHOW SNAPSHOTS reports it.
	Snapshot          string `json:"snapshot,omitempty"`
	SnapshotTimestamp int64  `json:"snapshotTimestamp"`
	Key               string `json:"key,omitempty"`
	Size              int64  `json:"size,omitempty"`
	// SHA256 is the hex SHA-256 of the object's bytes: computed while uploading, verified while
	// restoring before Memgraph has the whole file.
	SHA256 string `json:"sha256,omitempty"`
	// CRC32C is the object's full-object CRC32C (base64): sent with the upload for the store to
	// verify, read back from the store after it, and verified while restoring.
	CRC32C string `json:"crc32c,omitempty"`
	// Verified is how the stored object was found to hold what was uploaded (UploadResult).
	Verified string `json:"verified,omitempty"`
	// Done: snapshotted and uploaded, or restored.
	Done bool `json:"done,omitempty"`
	// Skipped says why a database was not backed up (COLD, or broken), "" when it was.
	Skipped string `json:"skipped,omitempty"`
}

// Done reports whether a job's state is final.
func (s JobStatus) Done() bool { return s.State == StateCompleted || s.State == StateFailed }

package backup

import "time"

import "github.com/memgraph-hooks/memgraph-hooks/topology"

// S3Object is one object of an S3-compatible store. The hook makes it from the API's
// destination with ObjectIn; tests and the simulator may name a bare host[:port] endpoint.
type S3Object struct {
	// Endpoint is the store's URL, https://host[:port] or http://host[:port], whose scheme decides
	// HTTP or HTTPS; or host[:port] without a scheme (as minio-go takes it), reached over HTTPS
	// unless Insecure.
	Endpoint string `json:"endpoint"`
	Bucket   string `json:"bucket"`
	// Key is the object's name in the bucket (a prefix, for ListObjects).
	Key    string `json:"key"`
	Region string `json:"region,omitempty"`
	// Insecure speaks plain HTTP to an endpoint without a scheme.
	Insecure bool `json:"insecure,omitempty"`
	// CAPEM, when set, is the only set of CAs trusted for the store's certificate.
	CAPEM []byte `json:"caPEM,omitempty"`
}

// ObjectIn is the object key in the bucket d declares, the one place the API's destination
// becomes an object of the store: the region is us-east-1 when unset (the CRD's default), and
// caPEM, when set, is the CA bundle of d's caSecret.
func ObjectIn(d topology.S3Destination, key string, caPEM []byte) S3Object {
	return S3Object{Endpoint: d.Endpoint, Bucket: d.Bucket, Key: key, Region: topology.BackupRegion(d), CAPEM: caPEM}
}

// S3Credentials are the static keys the store is accessed with.
type S3Credentials struct {
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
}

// UploadRequest asks the agent to upload one snapshot file of its instance.
type UploadRequest struct {
	// Snapshot is the snapshot file: the path SHOW SNAPSHOTS reports (under the instance's
	// snapshot directory) or its base name.
	Snapshot string `json:"snapshot"`
	// SnapshotTimestamp is the snapshot's timestamp as SHOW SNAPSHOTS reports it. The agent
	// does not use it; it keeps it with the job and reports it back (UploadStatus.Job).
	SnapshotTimestamp int64         `json:"snapshotTimestamp,omitempty"`
	Object            S3Object      `json:"object"`
	Credentials       S3Credentials `json:"credentials"`
}

// UploadResult is the object a completed upload wrote.
type UploadResult struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
	ETag string `json:"etag"`
}

// The states of an upload job.
const (
	StateRunning   = "Running"
	StateCompleted = "Completed"
	StateFailed    = "Failed"
)

// UploadJob is what a job was started with, as the agent recorded it: a caller whose Start
// answer was lost learns from a Status which snapshot runs, to which key, since when.
type UploadJob struct {
	Snapshot          string    `json:"snapshot"`
	SnapshotTimestamp int64     `json:"snapshotTimestamp,omitempty"`
	Key               string    `json:"key"`
	StartedAt         time.Time `json:"startedAt"`
}

// UploadStatus is what the agent knows of one upload job. Result is set when State is
// Completed; Error, in the object store's or the file system's own words, when it is Failed.
type UploadStatus struct {
	State  string       `json:"state"`
	Job    UploadJob    `json:"job,omitzero"`
	Result UploadResult `json:"result,omitzero"`
	Error  string       `json:"error,omitempty"`
}

// ObjectInfo describes one object in the store.
type ObjectInfo struct {
	Key          string
	Size         int64
	ETag         string
	LastModified string // RFC 3339, UTC
}

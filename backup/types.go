package backup

import (
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// S3Object is one object of an S3-compatible store. The hook makes it from the API's
// destination with ObjectIn; tests may name a bare host[:port] endpoint.
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
func ObjectIn(d v1alpha1.S3Destination, key string, caPEM []byte) S3Object {
	return S3Object{Endpoint: d.Endpoint, Bucket: d.Bucket, Key: key, Region: topology.BackupRegion(d), CAPEM: caPEM}
}

// S3Credentials are the static keys the store is accessed with.
type S3Credentials struct {
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
}

// ObjectInfo describes one object in the store.
type ObjectInfo struct {
	Key          string
	Size         int64
	ETag         string
	LastModified string // RFC 3339, UTC
	// CRC32C is the full-object CRC32C (base64) the store keeps with the object, when it keeps
	// one and was asked for it (StatObject, OpenObject); "" otherwise.
	CRC32C string
}

// ErrorBody is the agent's answer to a request it refuses; Unknown marks a job it does not know.
type ErrorBody struct {
	Error   string `json:"error"`
	Unknown bool   `json:"unknownJob,omitempty"`
}

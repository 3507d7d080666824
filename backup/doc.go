// Package backup is the data path of a backup: the API the hook and the backup agent share, the
// agent's client and server, and the object-store helpers the hook uses directly.
//
// A backup's snapshot lives on the MAIN pod's data volume, so the upload runs in that pod: the
// agent (`memgraph-hooks agent`, a sidecar in every data pod with the volume mounted read-only)
// streams a named snapshot file to an S3-compatible object store. An upload may outlast one hook
// call, so the agent runs it as a job named by the caller; the hook starts it and polls it.
//
// The package knows nothing of the Bolt driver, and of Kubernetes only the API's S3 destination
// (topology.S3Destination), which ObjectIn turns into the object the store is asked for.
package backup

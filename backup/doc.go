// Package backup is the data path of backups and restores: the API the hook and the backup agent
// share, the agent's server, and the object-store helpers the hook uses directly. The agent's
// client is the backup controller's (package hooks/backupcontroller).
//
// Everything whose duration grows with the data runs in the agent (`memgraph-hooks agent`, a
// sidecar of every data pod with the data volume mounted read-only), beside the Memgraph it
// talks to over Bolt on the pod's loopback interface: a backup job snapshots every database
// (CREATE SNAPSHOT, waiting out a snapshot already being written) and streams each file to an
// S3-compatible store; a restore job has Memgraph download each database's snapshot from the
// agent's own loopback stream of the object (RECOVER SNAPSHOT 'http://127.0.0.1:…'), verified
// against its recorded size and SHA-256, and load it. The hook starts a job, named by the
// caller (a MemgraphBackup's UID, a restoring cluster's), polls it and reports it; starting it
// twice returns the job that runs.
//
// The package knows nothing of the Bolt driver (the agent is given a memgraph.SnapshotClient)
// and of Kubernetes only the API's S3 destination and the objects' key layout (package topology).
package backup

package topology

import (
	"path"
	"strings"
)

// BackupAgentSecretName is the per-cluster Secret with the backup agents' token and TLS.
func BackupAgentSecretName(cluster string) string { return cluster + "-backup-agent" }

// BackupObjectKey is where a backup's snapshot goes in the bucket:
// <prefix>/<namespace>/<cluster>/<backup>/<snapshot file name>, without the leading <prefix>/
// when prefix is empty. The snapshot's own file name keeps Memgraph's naming (time and durable
// timestamp), which RECOVER SNAPSHOT keeps too when it copies the file into a snapshot
// directory.
func BackupObjectKey(prefix, namespace, cluster, backup, snapshotPath string) string {
	key := path.Join(namespace, cluster, backup, path.Base(snapshotPath))
	if prefix == "" {
		return key
	}
	return strings.TrimSuffix(prefix, "/") + "/" + key
}

// BackupAgentAddress is the host:port of the backup agent beside data instance d: its pod's FQDN
// (which the agent's certificate names) and the agent's port.
func BackupAgentAddress(d DataInstance) string { return hostPort(d.Host, BackupAgentPort) }

// BackupRegion is the destination's region, us-east-1 when unset (the CRD's default).
func BackupRegion(s S3Destination) string {
	if s.Region == "" {
		return "us-east-1"
	}
	return s.Region
}

// FromBackup is spec.bootstrap.fromBackup, nil when unset.
func (c *Cluster) FromBackup() *FromBackup {
	if c.mc.Spec.Bootstrap == nil {
		return nil
	}
	return c.mc.Spec.Bootstrap.FromBackup
}

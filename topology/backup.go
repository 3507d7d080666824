package topology

import (
	"path"
	"strings"
)

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

// RestoreHold is what holds registration before a restore ran (Declared.RestoreHeld): nothing
// when the cluster restores nothing.
func (c *Cluster) RestoreHold() string {
	if c.FromBackup() == nil {
		return ""
	}
	return "no data instance is registered before the backup (spec.bootstrap.fromBackup) is restored into the first MAIN"
}

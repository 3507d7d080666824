package topology

import (
	"net/url"
	"path"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// BackupKeyPrefix is where a backup's objects go in the bucket:
// <prefix>/<namespace>/<cluster>/<backup>, without the leading <prefix>/ when prefix is empty.
func BackupKeyPrefix(prefix, namespace, cluster, backup string) string {
	key := path.Join(namespace, cluster, backup)
	if prefix == "" {
		return key
	}
	return strings.TrimSuffix(prefix, "/") + "/" + key
}

// BackupDatabaseKey is one database's snapshot object under a backup's key prefix base: the
// default database's is <base>/<snapshot file>, any other's
// <base>/databases/<name, path-escaped>/<snapshot file>. The snapshot keeps Memgraph's file name
// (creation time and durable timestamp).
func BackupDatabaseKey(base, database, snapshotPath string) string {
	if database == v1alpha1.DefaultDatabase {
		return base + "/" + path.Base(snapshotPath)
	}
	return base + "/" + backupDatabasesDir + "/" + url.PathEscape(database) + "/" + path.Base(snapshotPath)
}

// BackupDatabasesPrefix is, for the key of a backup's default database object, the prefix under
// which its other databases' objects are: <directory of key>/databases/.
func BackupDatabasesPrefix(defaultKey string) string {
	return path.Dir(defaultKey) + "/" + backupDatabasesDir + "/"
}

// BackupDatabaseOf is the database an object under BackupDatabasesPrefix belongs to, read back
// from its key; ok is false for a key that is not <prefix><name>/<file>.
func BackupDatabaseOf(databasesPrefix, key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, databasesPrefix)
	escaped, file, found := strings.Cut(rest, "/")
	if !ok || !found || file == "" || strings.Contains(file, "/") {
		return "", false
	}
	name, err := url.PathUnescape(escaped)
	return name, err == nil && name != ""
}

const backupDatabasesDir = "databases"

// BackupRegion is the destination's region, us-east-1 when unset (the CRD's default).
func BackupRegion(s v1alpha1.S3Destination) string {
	if s.Region == "" {
		return "us-east-1"
	}
	return s.Region
}

// FromBackup is spec.bootstrap.fromBackup, nil when unset.
func (c *Cluster) FromBackup() *v1alpha1.FromBackup {
	if c.mc.Spec.Bootstrap == nil {
		return nil
	}
	return c.mc.Spec.Bootstrap.FromBackup
}

// BackupDestination is spec.backup.destination, the one store the cluster's backups go to; nil
// when unset.
func (c *Cluster) BackupDestination() *v1alpha1.BackupDestination {
	if c.mc.Spec.Backup == nil {
		return nil
	}
	return c.mc.Spec.Backup.Destination
}

// RestoreDestination is the store spec.bootstrap.fromBackup reads from: its own destination
// when it names one, else spec.backup.destination; nil when the cluster restores nothing (or,
// in a spec that skipped admission, names no store).
func (c *Cluster) RestoreDestination() *v1alpha1.BackupDestination {
	from := c.FromBackup()
	switch {
	case from == nil:
		return nil
	case from.Destination != nil:
		return from.Destination
	}
	return c.BackupDestination()
}

// RestoreLabel names the backup spec.bootstrap.fromBackup restores: "MemgraphBackup <name>",
// or the s3:// URI of its default database's object; "" when the cluster restores nothing.
func (c *Cluster) RestoreLabel() string {
	from := c.FromBackup()
	switch {
	case from == nil:
		return ""
	case from.Name != "":
		return "MemgraphBackup " + from.Name
	}
	bucket := ""
	if d := c.RestoreDestination(); d != nil {
		bucket = d.S3.Bucket
	}
	return "s3://" + bucket + "/" + from.Key
}

// BackupTarget is spec.backup.target, PreferReplica when unset.
func (c *Cluster) BackupTarget() v1alpha1.BackupTarget {
	if c.mc.Spec.Backup == nil || c.mc.Spec.Backup.Target == "" {
		return v1alpha1.BackupPreferReplica
	}
	return c.mc.Spec.Backup.Target
}

// RestoreHold is what holds registration before a restore ran (Declared.RestoreHeld): nothing
// when the cluster restores nothing.
func (c *Cluster) RestoreHold() string {
	if c.FromBackup() == nil {
		return ""
	}
	return "no data instance is registered before the backup (spec.bootstrap.fromBackup) is restored into the first MAIN"
}

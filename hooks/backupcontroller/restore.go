package backupcontroller

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// RestoreSource is where the backup a cluster restores is, as the related objects say, or what
// is missing for it.
type RestoreSource struct {
	Label string // "MemgraphBackup <name>" or the s3:// URI
	// Store is the default database's object (in the restore's store, with its caSecret's CA
	// when it names one), Credentials the store's.
	Store       backup.S3Object
	Credentials backup.S3Credentials
	// Databases are the backup's databases as its MemgraphBackup recorded them (key, size,
	// SHA-256, CRC32C, timestamp); empty for an object named by key, whose other databases the
	// agent finds beside it in the store.
	Databases []backup.DatabaseJob
	Problem   string
}

// ReadRestoreSource resolves spec.bootstrap.fromBackup with the related MemgraphBackup (by name)
// and the Secrets of the store it reads from (topology.Cluster.RestoreDestination); nil when the
// spec restores nothing. A MemgraphBackup is read from the cluster's spec.backup.destination,
// which must be the store its status records.
func ReadRestoreSource(c *topology.Cluster, related wire.Groups, secrets map[string]*wire.Object) *RestoreSource {
	from := c.FromBackup()
	if from == nil {
		return nil
	}
	src := &RestoreSource{Label: c.RestoreLabel()}
	dest, field := c.RestoreDestination(), "spec.bootstrap.fromBackup.destination.s3"
	if from.Destination == nil {
		field = "spec.backup.destination.s3"
	}
	if dest == nil {
		src.Problem = "the cluster restores " + src.Label + " but names no store to read it from: set spec.backup.destination"
		return src
	}
	s3, key := dest.S3, from.Key
	if from.Name != "" {
		b := relatedBackup(c, from.Name, related)
		var st wire.BackupStatus
		if b != nil && b.Status.BackupStatus != nil {
			st = *b.Status.BackupStatus
		}
		switch {
		case b == nil:
			src.Problem = fmt.Sprintf("the cluster restores MemgraphBackup %s/%s (spec.bootstrap.fromBackup.name), which does not exist; "+
				"create it, or name its default database's object with fromBackup.key", c.Namespace(), from.Name)
			return src
		case b.Status.Phase != wire.Phase(v1alpha1.BackupCompleted) || st.Key == "":
			src.Problem = fmt.Sprintf("the cluster restores MemgraphBackup %s/%s, which is %s, not Completed", c.Namespace(), from.Name, b.Status.Phase)
			return src
		case st.Bucket != "" && (st.Bucket != s3.Bucket || st.Endpoint != s3.Endpoint):
			src.Problem = fmt.Sprintf("MemgraphBackup %s/%s is in bucket %s at %s, and the cluster's spec.backup.destination names bucket %s at %s: "+
				"restore it with fromBackup.key %q and fromBackup.destination naming its store", c.Namespace(), from.Name,
				st.Bucket, st.Endpoint, s3.Bucket, s3.Endpoint, st.Key)
			return src
		}
		key = st.Key
		src.Databases = recordedDatabases(st)
	}
	read := ReadCredentials(c.Namespace(), s3, secrets, field+".credentialsSecret")
	var ca []byte
	if s3.CASecret != nil {
		if values := read.read(secrets, c.Namespace(), s3.CASecret.Name, field+".caSecret", v1alpha1.S3CAKey); values != nil {
			ca = []byte(values[0])
		}
	}
	if len(read.Problems) > 0 {
		src.Problem = "restoring " + src.Label + " needs " + strings.Join(read.Problems, "; ")
		return src
	}
	src.Store, src.Credentials = backup.ObjectIn(s3, key, ca), read.Creds
	return src
}

// recordedDatabases are the databases a completed backup's status records, for a restore to
// verify; a status that lists none (a backup of the default database alone, as an earlier hook
// recorded it) gives that one.
func recordedDatabases(st wire.BackupStatus) []backup.DatabaseJob {
	var out []backup.DatabaseJob
	for _, d := range st.Databases {
		if d.Skipped == "" {
			out = append(out, backup.DatabaseJob{Name: d.Name, Key: d.Key, Size: d.Size, SHA256: d.SHA256, CRC32C: d.CRC32C,
				SnapshotTimestamp: d.SnapshotTimestamp})
		}
	}
	if len(out) == 0 {
		out = []backup.DatabaseJob{{Name: v1alpha1.DefaultDatabase, Key: st.Key, Size: st.Size, SnapshotTimestamp: st.SnapshotTimestamp}}
	}
	return out
}

// relatedBackup is the MemgraphBackup name of c's namespace among the related objects.
func relatedBackup(c *topology.Cluster, name string, related wire.Groups) *wire.Object {
	group := related[wire.BackupKind]
	for _, key := range wire.SortedKeys(group) {
		if b := group[key]; b != nil && b.Metadata.Name == name && b.Metadata.In(c.Namespace()) {
			return b
		}
	}
	return nil
}

// ObserveCluster reads, out of a MemgraphCluster's sync request's related objects, the restore's
// source (nil when the spec restores nothing) and what the cluster's hook copies into its
// backup-agent Secret for its backups (CopyAccess; nil without spec.backup.destination), from
// the related MemgraphBackups and Secrets as the request's one decode read them, and spec.tls's
// CA and spec.auth's user as the pass read them.
func ObserveCluster(related wire.Groups, c *topology.Cluster, boltCA []byte, tlsProblem string,
	auth *memgraph.Credentials, authProblem string) (*RestoreSource, *Copied, error) {
	if c.FromBackup() == nil && c.BackupDestination() == nil {
		return nil, nil, nil
	}
	found, err := wire.Entries(related, "related", wire.SecretKey)
	if err != nil {
		return nil, nil, err
	}
	secrets := map[string]*wire.Object{}
	for _, e := range found {
		if e.Obj.Metadata.In(c.Namespace()) {
			secrets[e.Obj.Metadata.Name] = e.Obj
		}
	}
	copied := CopyAccess(c, secrets, boltCA, tlsProblem, auth, authProblem)
	if c.FromBackup() == nil {
		return nil, copied, nil
	}
	return ReadRestoreSource(c, related, secrets), copied, nil
}

// ClusterRules ask, for a MemgraphCluster, for what its backups and its restore read that only
// its spec names, by name: the Secrets of spec.backup.destination and of
// spec.bootstrap.fromBackup.destination (credentials and CA), and the MemgraphBackup
// fromBackup names. Each follows the cluster's spec, whose generation keys Metacontroller's
// cache of the answer.
func ClusterRules(c *topology.Cluster) []wire.RelatedRule {
	var names []string
	add := func(d *v1alpha1.BackupDestination) {
		if d == nil {
			return
		}
		for _, ref := range []*v1alpha1.SecretReference{&d.S3.CredentialsSecret, d.S3.CASecret} {
			if ref != nil && !slices.Contains(names, ref.Name) {
				names = append(names, ref.Name)
			}
		}
	}
	add(c.BackupDestination())
	from := c.FromBackup()
	if from != nil {
		add(from.Destination)
	}
	var rules []wire.RelatedRule
	if len(names) > 0 {
		rules = append(rules, wire.RelatedRule{APIVersion: "v1", Resource: "secrets", Namespace: c.Namespace(), Names: names})
	}
	if from != nil && from.Name != "" {
		rules = append(rules, wire.RelatedRule{APIVersion: v1alpha1.APIVersion, Resource: v1alpha1.BackupResource, Namespace: c.Namespace(), Names: []string{from.Name}})
	}
	return rules
}

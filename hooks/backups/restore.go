package backups

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// RestoreSource is where the backup a cluster restores is, as the related objects say, or what
// is missing for it.
type RestoreSource struct {
	Label string // "MemgraphBackup <name>" or the s3:// URI
	// Store is the default database's object (in the destination, with its caSecret's CA when
	// it names one), Credentials the destination's.
	Store       backup.S3Object
	Credentials backup.S3Credentials
	// Databases are the backup's databases as its MemgraphBackup recorded them (key, size,
	// SHA-256, timestamp); empty for an object named by destination and key, whose other
	// databases the agent finds beside it in the store.
	Databases []backup.DatabaseJob
	Problem   string
}

// ReadRestoreSource resolves spec.bootstrap.fromBackup with the related MemgraphBackup (by name)
// and the destination's Secrets; nil when the spec restores nothing.
func ReadRestoreSource(c *topology.Cluster, related map[string]map[string]json.RawMessage, secrets map[string]*wire.Object) (*RestoreSource, error) {
	from := c.FromBackup()
	if from == nil {
		return nil, nil
	}
	dest, key := from.Destination, from.Key
	src := &RestoreSource{}
	if from.Name != "" {
		src.Label = "MemgraphBackup " + from.Name
		b, err := relatedBackup(c, from.Name, related[wire.BackupKind])
		switch {
		case err != nil:
			return nil, err
		case b == nil:
			src.Problem = fmt.Sprintf("the cluster restores MemgraphBackup %s/%s (spec.bootstrap.fromBackup.name), which does not exist; "+
				"create it, or name the object with fromBackup.destination and key", c.Namespace(), from.Name)
			return src, nil
		case b.Status.Phase != topology.BackupCompleted || b.Status.Key == "":
			src.Problem = fmt.Sprintf("the cluster restores MemgraphBackup %s/%s, which is %s, not Completed", c.Namespace(), from.Name, b.Status.Phase)
			return src, nil
		}
		dest, key = &b.Spec.Destination, b.Status.Key
		src.Databases = recordedDatabases(b.Status)
	}
	s3 := dest.S3
	if src.Label == "" {
		src.Label = "s3://" + s3.Bucket + "/" + key
	}
	read := ReadCredentials(c.Namespace(), s3, secrets)
	var ca []byte
	if s3.CASecret != nil {
		if values := read.read(secrets, c.Namespace(), s3.CASecret.Name, "the destination's caSecret", topology.S3CAKey); values != nil {
			ca = []byte(values[0])
		}
	}
	if len(read.Problems) > 0 {
		src.Problem = "restoring " + src.Label + " needs " + strings.Join(read.Problems, "; ")
		return src, nil
	}
	src.Store, src.Credentials = backup.ObjectIn(s3, key, ca), read.Creds
	return src, nil
}

// recordedDatabases are the databases a completed backup's status records, for a restore to
// verify; a status that lists none (a backup of the default database alone, as an earlier hook
// recorded it) gives that one.
func recordedDatabases(st topology.MemgraphBackupStatus) []backup.DatabaseJob {
	var out []backup.DatabaseJob
	for _, d := range st.Databases {
		if d.Skipped == "" {
			out = append(out, backup.DatabaseJob{Name: d.Name, Key: d.Key, Size: d.Size, SHA256: d.SHA256, SnapshotTimestamp: d.SnapshotTimestamp})
		}
	}
	if len(out) == 0 {
		out = []backup.DatabaseJob{{Name: topology.DefaultDatabase, Key: st.Key, Size: st.Size, SnapshotTimestamp: st.SnapshotTimestamp}}
	}
	return out
}

// relatedBackup is the MemgraphBackup name of c's namespace among the related objects.
func relatedBackup(c *topology.Cluster, name string, group map[string]json.RawMessage) (*topology.MemgraphBackup, error) {
	for _, key := range wire.SortedKeys(group) {
		var b topology.MemgraphBackup
		if err := wire.DecodeAt(group[key], wire.EntryPath("related", wire.BackupKind, key), &b); err != nil {
			return nil, err
		}
		if b.Name == name && (b.Namespace == "" || b.Namespace == c.Namespace()) {
			return &b, nil
		}
	}
	return nil, nil
}

// ObserveRestore reads the restore's source out of a sync request (body, whose related objects are
// related): the related MemgraphBackups
// (decoded again from body, as MemgraphBackups) and Secrets.
func ObserveRestore(related wire.Groups, body []byte, c *topology.Cluster) (*RestoreSource, error) {
	if c.FromBackup() == nil {
		return nil, nil
	}
	var raw wire.RawGroups
	if err := wire.DecodeBody(body, &raw); err != nil {
		return nil, err
	}
	found, err := wire.Entries(related, "related", wire.SecretKey)
	if err != nil {
		return nil, err
	}
	secrets := map[string]*wire.Object{}
	for _, e := range found {
		if e.Obj.Metadata.In(c.Namespace()) {
			secrets[e.Obj.Metadata.Name] = e.Obj
		}
	}
	return ReadRestoreSource(c, raw.Related, secrets)
}

// RestoreRules ask, for a cluster that restores a backup, for the MemgraphBackup it names and
// for the Secrets of its namespace: the backup's destination names its credentials and CA
// Secrets, which only the MemgraphBackup says (the hook reads only those).
func RestoreRules(c *topology.Cluster) []wire.RelatedRule {
	from := c.FromBackup()
	if from == nil {
		return nil
	}
	rules := []wire.RelatedRule{{APIVersion: "v1", Resource: "secrets", Namespace: c.Namespace(), LabelSelector: &wire.LabelSelector{MatchLabels: map[string]string{}}}}
	if from.Name != "" {
		rules = append(rules, wire.RelatedRule{APIVersion: topology.APIVersion, Resource: topology.BackupResource, Namespace: c.Namespace(), Names: []string{from.Name}})
	}
	return rules
}

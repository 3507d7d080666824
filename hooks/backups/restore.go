package backups

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// RestoreSource is where the backup a cluster restores is, as the related objects say, or what
// is missing for it.
type RestoreSource struct {
	Label   string // "MemgraphBackup <name>" or the s3:// URI
	URI     string
	S3      *memgraph.S3Config
	Problem string
	// CASecret names the destination's caSecret, "" when it has none. Memgraph downloads the
	// snapshot itself and RECOVER SNAPSHOT takes no CA (its config holds aws_region,
	// aws_access_key, aws_secret_key and aws_endpoint_url alone), so the data pods' image must
	// trust that CA; a failed restore says so.
	CASecret string
}

// ReadRestoreSource resolves spec.bootstrap.fromBackup with the related MemgraphBackup (by name)
// and the destination's credentials Secret; nil when the spec restores nothing.
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
	}
	s3 := dest.S3
	src.URI = "s3://" + s3.Bucket + "/" + key
	if src.Label == "" {
		src.Label = src.URI
	}
	creds := ReadCredentials(c.Namespace(), s3, secrets)
	if len(creds.Problems) > 0 {
		src.Problem = "restoring " + src.Label + " needs " + strings.Join(creds.Problems, "; ")
		return src, nil
	}
	if s3.CASecret != nil {
		src.CASecret = s3.CASecret.Name
	}
	src.S3 = &memgraph.S3Config{Region: topology.BackupRegion(s3), AccessKey: creds.Creds.AccessKeyID,
		SecretKey: creds.Creds.SecretAccessKey, EndpointURL: strings.TrimSuffix(s3.Endpoint, "/")}
	return src, nil
}

// CANote tells, for a store verified with a private CA, that Memgraph cannot be given it; "" for
// a store without caSecret.
func (src *RestoreSource) CANote() string {
	if src.CASecret == "" {
		return ""
	}
	return " (Memgraph fetches the snapshot itself and RECOVER SNAPSHOT takes no CA: the data pods' image must trust " +
		"the CA in Secret " + src.CASecret + ")"
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
// for the Secrets of its namespace: the backup's destination names its credentials Secret, which
// only the MemgraphBackup says (the hook reads only that one).
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

package backups

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// decodeBackup decodes a MemgraphBackup at path and checks its spec as admission does: a spec
// that breaks a rule is a bad request naming the field.
func decodeBackup(raw json.RawMessage, path string) (*topology.MemgraphBackup, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, wire.Badf("request has no %s: expected a MemgraphBackup", path)
	}
	var b topology.MemgraphBackup
	if err := wire.DecodeAt(raw, path, &b); err != nil {
		return nil, err
	}
	if b.Name == "" {
		return nil, wire.Badf("%s has no metadata.name", path)
	}
	if vs := topology.BackupViolations(path+".spec", &b.Spec); len(vs) > 0 {
		return nil, wire.Badf("MemgraphBackup %s has a spec admission refuses: %s: %s", wire.ObjectKey(b.Namespace, b.Name), vs[0].Field, vs[0].Message)
	}
	return &b, nil
}

// backupObservation is what a MemgraphBackup's request says of its world: the cluster (nil when
// it does not exist or cannot run), its pods, the Secrets the backup needs, and the other
// backups of the same cluster.
type backupObservation struct {
	cluster   *topology.Cluster
	clusterNG string // why the cluster's spec cannot be used, when it exists but is refused
	pods      map[string]*wire.Object
	secrets   map[string]*wire.Object
	others    []planner.OtherBackup
}

// observeBackup reads the related objects of b's request.
func observeBackup(b *topology.MemgraphBackup, related map[string]map[string]json.RawMessage) (backupObservation, error) {
	obs := backupObservation{pods: map[string]*wire.Object{}, secrets: map[string]*wire.Object{}}
	for _, key := range wire.SortedKeys(related[wire.ClusterKind]) {
		raw := related[wire.ClusterKind][key]
		var meta struct {
			Metadata wire.ObjectMeta `json:"metadata"`
		}
		if err := wire.DecodeAt(raw, wire.EntryPath("related", wire.ClusterKind, key), &meta); err != nil {
			return obs, err
		}
		if meta.Metadata.Name != b.Spec.Cluster || !meta.Metadata.In(b.Namespace) {
			continue
		}
		c, err := topology.AdmitWithholding(raw) // a withheld coordinator setting is no concern of a backup
		if err != nil {
			obs.clusterNG = fmt.Sprintf("MemgraphCluster %s has a spec the hook refuses: %v", wire.ObjectKey(b.Namespace, b.Spec.Cluster), err)
			continue
		}
		obs.cluster = c
	}
	for kind, into := range map[string]map[string]*wire.Object{wire.PodKey: obs.pods, wire.SecretKey: obs.secrets} {
		for _, key := range wire.SortedKeys(related[kind]) {
			var o *wire.Object
			if err := wire.DecodeAt(related[kind][key], wire.EntryPath("related", kind, key), &o); err != nil {
				return obs, err
			}
			if o != nil && o.Metadata.In(b.Namespace) {
				into[o.Metadata.Name] = o
			}
		}
	}
	others, err := otherBackups(b, related[wire.BackupKind])
	obs.others = others
	return obs, err
}

// otherBackups are the MemgraphBackups of b's cluster in b's namespace, but b.
func otherBackups(b *topology.MemgraphBackup, group map[string]json.RawMessage) ([]planner.OtherBackup, error) {
	var out []planner.OtherBackup
	for _, key := range wire.SortedKeys(group) {
		var o topology.MemgraphBackup
		if err := wire.DecodeAt(group[key], wire.EntryPath("related", wire.BackupKind, key), &o); err != nil {
			return nil, err
		}
		if o.UID == b.UID || o.Name == b.Name || o.Namespace != b.Namespace || o.Spec.Cluster != b.Spec.Cluster {
			continue
		}
		older := o.CreationTimestamp.Before(&b.CreationTimestamp) ||
			(o.CreationTimestamp.Equal(&b.CreationTimestamp) && o.Name < b.Name)
		out = append(out, planner.OtherBackup{Name: o.Name, Phase: o.Status.Phase, Older: older})
	}
	return out, nil
}

// Secrets are what the Secrets of its namespace give a backup (or a restore): the object
// store's credentials and CA, and the backup agents' token and CA; Problems say, per Secret,
// what is missing, never its content.
type Secrets struct {
	Creds    backup.S3Credentials
	StoreCA  []byte
	AgentCfg backup.AgentClientConfig
	Problems []string
}

// ReadSecrets reads the destination's Secrets, and the cluster's agent Secret when
// withAgent (a backup that has not uploaded yet needs it; deleting an object does not).
func ReadSecrets(b *topology.MemgraphBackup, secrets map[string]*wire.Object, withAgent bool) Secrets {
	s3 := b.Spec.Destination.S3
	out := ReadCredentials(b.Namespace, s3, secrets)
	if s3.CASecret != nil {
		if values := out.read(secrets, b.Namespace, s3.CASecret.Name, "spec.destination.s3.caSecret", topology.S3CAKey); values != nil {
			out.StoreCA = []byte(values[0])
		}
	}
	if withAgent {
		name := topology.BackupAgentSecretName(b.Spec.Cluster)
		values := out.read(secrets, b.Namespace, name, "the cluster's backup agents", topology.BackupAgentTokenKey, topology.BackupAgentCAKey)
		if values != nil {
			out.AgentCfg = backup.AgentClientConfig{Token: strings.TrimSpace(values[0]), CAPEM: []byte(values[1])}
		}
	}
	return out
}

// ReadCredentials reads the destination's credentials Secret alone, which is all removing an
// object, or reading one, needs besides the CA.
func ReadCredentials(namespace string, s3 topology.S3Destination, secrets map[string]*wire.Object) Secrets {
	var out Secrets
	values := out.read(secrets, namespace, s3.CredentialsSecret.Name, "spec.destination.s3.credentialsSecret",
		topology.S3AccessKeyIDKey, topology.S3SecretAccessKeyKey)
	if values != nil {
		out.Creds = backup.S3Credentials{AccessKeyID: values[0], SecretAccessKey: values[1]}
	}
	return out
}

// read returns the decoded values of keys of Secret name, or nil after recording what is wrong.
func (s *Secrets) read(secrets map[string]*wire.Object, namespace, name, field string, keys ...string) []string {
	where := fmt.Sprintf("Secret %s/%s (%s)", namespace, name, field)
	obj := secrets[name]
	if obj == nil {
		s.Problems = append(s.Problems, where+" does not exist: create it with the keys "+strings.Join(keys, " and "))
		return nil
	}
	values := make([]string, len(keys))
	for i, key := range keys {
		raw, err := base64.StdEncoding.DecodeString(obj.Data[key])
		switch {
		case obj.Data[key] == "":
			s.Problems = append(s.Problems, where+" has no "+key+": it needs the keys "+strings.Join(keys, " and "))
			return nil
		case err != nil:
			s.Problems = append(s.Problems, where+" has a "+key+" that is not valid base64")
			return nil
		}
		values[i] = string(raw)
	}
	return values
}

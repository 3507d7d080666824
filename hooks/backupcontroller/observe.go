package backupcontroller

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// decodeBackup decodes a MemgraphBackup at path and checks its spec as admission does: a spec
// that breaks a rule is a bad request naming the field.
func decodeBackup(raw json.RawMessage, path string) (*v1alpha1.MemgraphBackup, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, wire.Badf("request has no %s: expected a MemgraphBackup", path)
	}
	var b v1alpha1.MemgraphBackup
	if err := wire.DecodeAt(raw, path, &b); err != nil {
		return nil, err
	}
	if b.Name == "" {
		return nil, wire.Badf("%s has no metadata.name", path)
	}
	if vs := v1alpha1.BackupViolations(path+".spec", &b.Spec); len(vs) > 0 {
		return nil, wire.Badf("MemgraphBackup %s has a spec admission refuses: %s: %s", wire.ObjectKey(b.Namespace, b.Name), vs[0].Field, vs[0].Message)
	}
	return &b, nil
}

// scheduleKind is a MemgraphScheduledBackup's key among a request's related objects.
const scheduleKind = "MemgraphScheduledBackup.memgraph.com/v1alpha1"

// backupObservation is what a MemgraphBackup's request says of its world: the cluster (nil when
// it does not exist or cannot run), its pods, its backup-agent Secret, the other backups of the
// same cluster, the newest completion among the cluster's backups, and the schedule that owns
// the backup.
type backupObservation struct {
	cluster     *topology.Cluster
	clusterNG   string            // why the cluster's spec cannot be used, when it exists but is refused
	podImages   map[string]string // the Memgraph container's image of each pod seen, by name
	agentSecret *agentSecretObject
	others      []v1alpha1.MemgraphBackup
	// lastSuccess is when the newest Completed backup of the cluster (this one or another)
	// completed; zero when none did.
	lastSuccess time.Time
	// scheduleName is the MemgraphScheduledBackup that controls the backup ("" when none
	// does), schedule that schedule as observed (nil when it is gone).
	scheduleName string
	schedule     *v1alpha1.MemgraphScheduledBackup
}

// observeBackup reads the related objects of b's request.
func observeBackup(b *v1alpha1.MemgraphBackup, related map[string]map[string]json.RawMessage) (backupObservation, error) {
	obs := backupObservation{podImages: map[string]string{}}
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
	for _, key := range wire.SortedKeys(related[wire.PodKey]) {
		var o *wire.Object
		if err := wire.DecodeAt(related[wire.PodKey][key], wire.EntryPath("related", wire.PodKey, key), &o); err != nil {
			return obs, err
		}
		if o == nil || !o.Metadata.In(b.Namespace) {
			continue
		}
		for _, ct := range o.Spec.Containers {
			if ct.Name == topology.ContainerName {
				obs.podImages[o.Metadata.Name] = ct.Image
			}
		}
	}
	for _, key := range wire.SortedKeys(related[wire.SecretKey]) {
		var o agentSecretObject
		if err := wire.DecodeAt(related[wire.SecretKey][key], wire.EntryPath("related", wire.SecretKey, key), &o); err != nil {
			return obs, err
		}
		if o.Metadata.Name == topology.BackupAgentSecretName(b.Spec.Cluster) && (o.Metadata.Namespace == "" || o.Metadata.Namespace == b.Namespace) {
			obs.agentSecret = &o
		}
	}
	var err error
	if obs.others, obs.lastSuccess, err = otherBackups(b, related[wire.BackupKind]); err != nil {
		return obs, err
	}
	obs.scheduleName, obs.schedule, err = observeSchedule(b, related[scheduleKind])
	return obs, err
}

// otherBackups are the MemgraphBackups of b's cluster in b's namespace, but b, and when the
// newest Completed backup of the cluster, b included, completed.
func otherBackups(b *v1alpha1.MemgraphBackup, group map[string]json.RawMessage) ([]v1alpha1.MemgraphBackup, time.Time, error) {
	var out []v1alpha1.MemgraphBackup
	var last time.Time
	if b.Status.Phase == v1alpha1.BackupCompleted && b.Status.CompletedAt != nil {
		last = b.Status.CompletedAt.Time
	}
	for _, key := range wire.SortedKeys(group) {
		var o v1alpha1.MemgraphBackup
		if err := wire.DecodeAt(group[key], wire.EntryPath("related", wire.BackupKind, key), &o); err != nil {
			return nil, last, err
		}
		if o.UID == b.UID || o.Name == b.Name || o.Namespace != b.Namespace || o.Spec.Cluster != b.Spec.Cluster {
			continue
		}
		if o.Status.Phase == v1alpha1.BackupCompleted && o.Status.CompletedAt != nil && o.Status.CompletedAt.After(last) {
			last = o.Status.CompletedAt.Time
		}
		out = append(out, o)
	}
	return out, last, nil
}

// scheduleOwner is the name of the MemgraphScheduledBackup that controls b, "" when none does.
func scheduleOwner(b *v1alpha1.MemgraphBackup) string {
	for _, ref := range b.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.Kind == v1alpha1.ScheduledBackupKind && ref.APIVersion == v1alpha1.APIVersion {
			return ref.Name
		}
	}
	return ""
}

// observeSchedule finds the MemgraphScheduledBackup that controls b among the related objects:
// its name ("" when none does) and the object (nil when it is gone).
func observeSchedule(b *v1alpha1.MemgraphBackup, group map[string]json.RawMessage) (string, *v1alpha1.MemgraphScheduledBackup, error) {
	name := scheduleOwner(b)
	if name == "" {
		return "", nil, nil
	}
	var found *v1alpha1.MemgraphScheduledBackup
	for _, key := range wire.SortedKeys(group) {
		var sb v1alpha1.MemgraphScheduledBackup
		if err := wire.DecodeAt(group[key], wire.EntryPath("related", scheduleKind, key), &sb); err != nil {
			return name, found, err
		}
		if sb.Name == name && (sb.Namespace == "" || sb.Namespace == b.Namespace) {
			found = &sb
		}
	}
	return name, found, nil
}

// Secrets are what the Secrets of a cluster's namespace give: the object store's credentials
// and CA; Problems say, per Secret, what is missing, never its content.
type Secrets struct {
	Creds    backup.S3Credentials
	StoreCA  []byte
	Problems []string
}

// ReadCredentials reads the destination's credentials Secret (named at field of the spec).
func ReadCredentials(namespace string, s3 v1alpha1.S3Destination, secrets map[string]*wire.Object, field string) Secrets {
	var out Secrets
	values := out.read(secrets, namespace, s3.CredentialsSecret.Name, field, v1alpha1.S3AccessKeyIDKey, v1alpha1.S3SecretAccessKeyKey)
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

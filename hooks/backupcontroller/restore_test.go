package backupcontroller

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

func admitted(t *testing.T, spec string) *topology.Cluster {
	t.Helper()
	c, err := topology.Admit([]byte(`{"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphCluster",` +
		`"metadata":{"name":"mg","namespace":"db","uid":"u1","generation":1},"spec":` + spec + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const ownStore = `"backup":{"destination":{"s3":{"endpoint":"https://s3.example.org","bucket":"backups","region":"eu-west-1",` +
	`"credentialsSecret":{"name":"s3-creds"}}}}`

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// A restore named by key in a store of its own (another cluster's bucket) reads that store's
// credentials Secret and caSecret, whose CA the agent verifies the store with; the agent finds
// the other databases beside the key. A missing Secret is the source's problem, and no store is
// given.
func TestRestoreSourceOfAStoreWithAPrivateCA(t *testing.T) {
	c := admitted(t, `{"bootstrap":{"fromBackup":{"destination":{"s3":{"endpoint":"https://s3.example.org","bucket":"other-cluster",`+
		`"region":"eu-west-1","credentialsSecret":{"name":"s3-creds"},"caSecret":{"name":"s3-ca"}}},"key":"prod/snap_timestamp_9"}}}`)
	secrets := map[string]*wire.Object{
		"s3-creds": {Data: map[string]string{"accessKeyId": b64("AK"), "secretAccessKey": b64("SK")}},
		"s3-ca":    {Data: map[string]string{"ca.crt": b64("CA PEM")}},
	}
	src := ReadRestoreSource(c, nil, secrets)
	want := &RestoreSource{Label: "s3://other-cluster/prod/snap_timestamp_9",
		Store: backup.S3Object{Endpoint: "https://s3.example.org", Bucket: "other-cluster", Key: "prod/snap_timestamp_9", Region: "eu-west-1",
			CAPEM: []byte("CA PEM")},
		Credentials: backup.S3Credentials{AccessKeyID: "AK", SecretAccessKey: "SK"}}
	if diff := cmp.Diff(want, src); diff != "" {
		t.Errorf("restore source (-want +got):\n%s", diff)
	}
	for _, missing := range []string{"s3-ca", "s3-creds"} {
		delete(secrets, missing)
		if src = ReadRestoreSource(c, nil, secrets); !strings.Contains(src.Problem, "spec.bootstrap.fromBackup.destination.s3") || src.Store.Bucket != "" {
			t.Errorf("without Secret %s: %+v, want a problem naming the field and no store", missing, src)
		}
	}
}

// A restore by name reads the MemgraphBackup's objects from the cluster's own
// spec.backup.destination, verifying what it recorded; a backup recorded in another store is
// refused, saying how to restore it (its key and that store).
func TestRestoreSourceByName(t *testing.T) {
	c := admitted(t, `{`+ownStore+`,"bootstrap":{"fromBackup":{"name":"nightly"}}}`)
	secrets := map[string]*wire.Object{"s3-creds": {Data: map[string]string{"accessKeyId": b64("AK"), "secretAccessKey": b64("SK")}}}
	backupOf := func(bucket string) wire.Groups {
		b := decoded(t, v1alpha1.MemgraphBackup{ObjectMeta: metaOf("nightly", "db"), Status: v1alpha1.MemgraphBackupStatus{
			Phase: v1alpha1.BackupCompleted, Key: "p/s_timestamp_3", Endpoint: "https://s3.example.org", Bucket: bucket,
			Databases: []v1alpha1.BackupDatabase{{Name: "memgraph", Key: "p/s_timestamp_3", Size: 9, SHA256: "aa", CRC32C: "c==", SnapshotTimestamp: 3}}}})
		return wire.Groups{wire.BackupKind: {"db/nightly": b}}
	}
	src := ReadRestoreSource(c, backupOf("backups"), secrets)
	if src.Problem != "" || src.Store.Bucket != "backups" || src.Store.Key != "p/s_timestamp_3" ||
		!cmp.Equal(src.Databases, []backup.DatabaseJob{{Name: "memgraph", Key: "p/s_timestamp_3", Size: 9, SHA256: "aa", CRC32C: "c==", SnapshotTimestamp: 3}}) {
		t.Fatalf("restore by name: %+v", src)
	}
	src = ReadRestoreSource(c, backupOf("elsewhere"), secrets)
	if !strings.Contains(src.Problem, "is in bucket elsewhere") || !strings.Contains(src.Problem, `fromBackup.key "p/s_timestamp_3"`) {
		t.Errorf("a backup in another store: %q, want it refused with the way to restore it", src.Problem)
	}
}

// A restore by key alone reads the cluster's own store.
func TestRestoreSourceByKeyInTheClustersStore(t *testing.T) {
	c := admitted(t, `{`+ownStore+`,"bootstrap":{"fromBackup":{"key":"p/s_timestamp_3"}}}`)
	secrets := map[string]*wire.Object{"s3-creds": {Data: map[string]string{"accessKeyId": b64("AK"), "secretAccessKey": b64("SK")}}}
	src := ReadRestoreSource(c, nil, secrets)
	if src.Problem != "" || src.Label != "s3://backups/p/s_timestamp_3" || src.Store.Bucket != "backups" {
		t.Fatalf("restore by key: %+v", src)
	}
}

// A cluster asks, by name, for the Secrets its spec.backup.destination and its
// fromBackup.destination name, and for the MemgraphBackup it restores; a cluster that names
// none asks for nothing more.
func TestClusterRules(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []wire.RelatedRule
	}{
		{`{}`, nil},
		{`{"backup":{"destination":{"s3":{"endpoint":"https://s3.example.org","bucket":"backups","credentialsSecret":{"name":"s3-creds"},` +
			`"caSecret":{"name":"s3-ca"}}}},"bootstrap":{"fromBackup":{"name":"nightly"}}}`,
			[]wire.RelatedRule{
				{APIVersion: "v1", Resource: "secrets", Namespace: "db", Names: []string{"s3-creds", "s3-ca"}},
				{APIVersion: v1alpha1.APIVersion, Resource: v1alpha1.BackupResource, Namespace: "db", Names: []string{"nightly"}}}},
		{`{` + ownStore + `,"bootstrap":{"fromBackup":{"key":"k","destination":{"s3":{"endpoint":"https://s3.example.org","bucket":"old",` +
			`"credentialsSecret":{"name":"old-creds"}}}}}}`,
			[]wire.RelatedRule{{APIVersion: "v1", Resource: "secrets", Namespace: "db", Names: []string{"s3-creds", "old-creds"}}}},
	} {
		if diff := cmp.Diff(tc.want, ClusterRules(admitted(t, tc.spec))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.spec, diff)
		}
	}
}

// A restore by name verifies what the MemgraphBackup recorded of each database it backed up; a
// status that lists no database (a backup an earlier hook took of the default database) gives
// that one.
func TestRecordedDatabases(t *testing.T) {
	st := v1alpha1.MemgraphBackupStatus{Key: "p/snap_timestamp_4", Size: 10, SnapshotTimestamp: 4, Databases: []v1alpha1.BackupDatabase{
		{Name: "memgraph", Key: "p/snap_timestamp_4", Size: 10, SHA256: "aa", CRC32C: "ca==", SnapshotTimestamp: 4},
		{Name: "cold_one", Skipped: "the database is COLD"},
		{Name: "tenant", Key: "p/databases/tenant/s_timestamp_2", Size: 5, SHA256: "bb", SnapshotTimestamp: 2},
	}}
	want := []backup.DatabaseJob{
		{Name: "memgraph", Key: "p/snap_timestamp_4", Size: 10, SHA256: "aa", CRC32C: "ca==", SnapshotTimestamp: 4},
		{Name: "tenant", Key: "p/databases/tenant/s_timestamp_2", Size: 5, SHA256: "bb", SnapshotTimestamp: 2},
	}
	if diff := cmp.Diff(want, recordedDatabases(*decoded(t, v1alpha1.MemgraphBackup{Status: st}).Status.BackupStatus)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	st.Databases = nil
	if diff := cmp.Diff([]backup.DatabaseJob{{Name: "memgraph", Key: st.Key, Size: 10, SnapshotTimestamp: 4}},
		recordedDatabases(*decoded(t, v1alpha1.MemgraphBackup{Status: st}).Status.BackupStatus)); diff != "" {
		t.Errorf("without databases (-want +got):\n%s", diff)
	}
}

// decoded is b as a sync request's decode reads it.
func decoded(t *testing.T, b v1alpha1.MemgraphBackup) *wire.Object {
	t.Helper()
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var obj *wire.Object
	if err := wire.DecodeBody(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func metaOf(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace}
}

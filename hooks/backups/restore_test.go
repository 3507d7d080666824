package backups

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A restore named by destination and key reads the credentials Secret and the caSecret, whose CA
// the agent verifies the store with; the agent finds the other databases beside the key. A
// missing Secret is the source's problem, and no store is given.
func TestRestoreSourceOfAStoreWithAPrivateCA(t *testing.T) {
	c, err := topology.Admit([]byte(`{"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphCluster",` +
		`"metadata":{"name":"mg","namespace":"db","uid":"u1","generation":1},"spec":{"bootstrap":{"fromBackup":{` +
		`"destination":{"s3":{"endpoint":"https://s3.example.org","bucket":"backups","region":"eu-west-1",` +
		`"credentialsSecret":{"name":"s3-creds"},"caSecret":{"name":"s3-ca"}}},"key":"prod/snap_timestamp_9"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secrets := map[string]*wire.Object{
		"s3-creds": {Data: map[string]string{"accessKeyId": b64("AK"), "secretAccessKey": b64("SK")}},
		"s3-ca":    {Data: map[string]string{"ca.crt": b64("CA PEM")}},
	}
	src, err := ReadRestoreSource(c, nil, secrets)
	if err != nil {
		t.Fatal(err)
	}
	want := &RestoreSource{Label: "s3://backups/prod/snap_timestamp_9",
		Store: backup.S3Object{Endpoint: "https://s3.example.org", Bucket: "backups", Key: "prod/snap_timestamp_9", Region: "eu-west-1",
			CAPEM: []byte("CA PEM")},
		Credentials: backup.S3Credentials{AccessKeyID: "AK", SecretAccessKey: "SK"}}
	if diff := cmp.Diff(want, src); diff != "" {
		t.Errorf("restore source (-want +got):\n%s", diff)
	}
	for _, missing := range []string{"s3-ca", "s3-creds"} {
		delete(secrets, missing)
		if src, _ = ReadRestoreSource(c, nil, secrets); src.Problem == "" || src.Store.Bucket != "" {
			t.Errorf("without Secret %s: %+v, want a problem and no store", missing, src)
		}
	}
}

// A restore by name verifies what the MemgraphBackup recorded of each database it backed up; a
// status that lists no database (a backup an earlier hook took of the default database) gives
// that one.
func TestRecordedDatabases(t *testing.T) {
	st := topology.MemgraphBackupStatus{Key: "p/snap_timestamp_4", Size: 10, SnapshotTimestamp: 4, Databases: []topology.BackupDatabase{
		{Name: "memgraph", Key: "p/snap_timestamp_4", Size: 10, SHA256: "aa", SnapshotTimestamp: 4},
		{Name: "cold_one", Skipped: "the database is COLD"},
		{Name: "tenant", Key: "p/databases/tenant/s_timestamp_2", Size: 5, SHA256: "bb", SnapshotTimestamp: 2},
	}}
	want := []backup.DatabaseJob{
		{Name: "memgraph", Key: "p/snap_timestamp_4", Size: 10, SHA256: "aa", SnapshotTimestamp: 4},
		{Name: "tenant", Key: "p/databases/tenant/s_timestamp_2", Size: 5, SHA256: "bb", SnapshotTimestamp: 2},
	}
	if diff := cmp.Diff(want, recordedDatabases(st)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	st.Databases = nil
	if diff := cmp.Diff([]backup.DatabaseJob{{Name: "memgraph", Key: st.Key, Size: 10, SnapshotTimestamp: 4}}, recordedDatabases(st)); diff != "" {
		t.Errorf("without databases (-want +got):\n%s", diff)
	}
}

package backups

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A restore named by destination and key reads the credentials Secret alone: the caSecret it
// names cannot reach Memgraph, so its absence holds nothing, and the source says which it is.
func TestRestoreSourceOfAStoreWithAPrivateCA(t *testing.T) {
	c, err := topology.Admit([]byte(`{"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphCluster",` +
		`"metadata":{"name":"mg","namespace":"db","uid":"u1","generation":1},"spec":{"bootstrap":{"fromBackup":{` +
		`"destination":{"s3":{"endpoint":"https://s3.example.org","bucket":"backups","region":"eu-west-1",` +
		`"credentialsSecret":{"name":"s3-creds"},"caSecret":{"name":"s3-ca"}}},"key":"prod/snap_timestamp_9"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secrets := map[string]*wire.Object{"s3-creds": {Data: map[string]string{"accessKeyId": b64("AK"), "secretAccessKey": b64("SK")}}}

	src, err := ReadRestoreSource(c, nil, secrets)
	if err != nil {
		t.Fatal(err)
	}
	want := &RestoreSource{Label: "s3://backups/prod/snap_timestamp_9", URI: "s3://backups/prod/snap_timestamp_9",
		S3:       &memgraph.S3Config{Region: "eu-west-1", AccessKey: "AK", SecretKey: "SK", EndpointURL: "https://s3.example.org"},
		CASecret: "s3-ca"}
	if diff := cmp.Diff(want, src); diff != "" {
		t.Errorf("restore source (-want +got):\n%s", diff)
	}
	if src.CANote() == "" {
		t.Error("a source with a caSecret has no note for a failed restore")
	}

	delete(secrets, "s3-creds")
	if src, _ = ReadRestoreSource(c, nil, secrets); src.Problem == "" || src.S3 != nil {
		t.Errorf("without its credentials Secret: %+v, want a problem and no config", src)
	}
}

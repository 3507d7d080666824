package backup_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
)

// The object of a destination as a user declares it (an http:// endpoint, no region) is written
// to that store: the scheme decides plain HTTP, the region is the CRD's default, the prefix is
// the key's business and no part of the object's address.
func TestObjectInWritesToTheDeclaredDestination(t *testing.T) {
	s := newStoreOn(t, false)
	d := v1alpha1.S3Destination{Endpoint: s.endpoint, Bucket: bucket, Prefix: "nightly",
		CredentialsSecret: v1alpha1.SecretReference{Name: "s3-credentials"}}
	obj := backup.ObjectIn(d, "nightly/db/prod/one/snap", []byte("ca"))
	want := backup.S3Object{Endpoint: d.Endpoint, Bucket: bucket, Key: "nightly/db/prod/one/snap", Region: "us-east-1", CAPEM: []byte("ca")}
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Fatalf("ObjectIn (-want +got):\n%s", diff)
	}
	obj.CAPEM = nil // the in-process store speaks plain HTTP
	ctx := context.Background()
	if _, err := backup.Upload(ctx, obj, creds, strings.NewReader("snapshot"), int64(len("snapshot")), nil); err != nil {
		t.Fatalf("upload to the declared destination: %v", err)
	}
	info, err := backup.StatObject(ctx, obj, creds)
	if err != nil || info.Size != int64(len("snapshot")) {
		t.Fatalf("the object in the store: %+v, %v; want %d bytes", info, err, len("snapshot"))
	}
}

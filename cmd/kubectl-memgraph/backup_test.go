package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const storedSchedule = `
apiVersion: memgraph.com/v1alpha1
kind: MemgraphScheduledBackup
metadata: {name: nightly, namespace: prod}
spec:
  schedule: "0 3 * * *"
  keep: 7
  backupTemplate:
    cluster: other
    deletionPolicy: Delete
    destination:
      s3: {endpoint: "https://s3.eu-west-1.amazonaws.com", bucket: memgraph-backups, prefix: nightly, region: eu-west-1,
           credentialsSecret: {name: s3-credentials}}
`

func backupFakeClient(t *testing.T, objs ...runtime.Object) dynamic.Interface {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		clustersGVR: "MemgraphClusterList", backupsGVR: "MemgraphBackupList", schedulesGVR: "MemgraphScheduledBackupList",
	}, objs...)
}

func storedBackupSpec(t *testing.T, client dynamic.Interface, name string) topology.MemgraphBackupSpec {
	t.Helper()
	u, err := client.Resource(backupsGVR).Namespace("prod").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b topology.MemgraphBackup
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b); err != nil {
		t.Fatal(err)
	}
	return b.Spec
}

// kubectl memgraph backup creates a MemgraphBackup of the cluster: to a schedule's destination,
// or to the one the flags name; without a destination, or with one admission refuses, it creates
// nothing and says why.
func TestBackupVerbCreatesAMemgraphBackup(t *testing.T) {
	client := backupFakeClient(t, object(t, storedSchedule))
	out, err := run(t, client, "backup", "memgraph", "--from-schedule", "nightly", "--name", "before-upgrade")
	if err != nil || out != "memgraphbackup/before-upgrade created\n" {
		t.Fatalf("out %q, err %v", out, err)
	}
	want := topology.MemgraphBackupSpec{Cluster: "memgraph", DeletionPolicy: topology.BackupDelete, Destination: topology.BackupDestination{
		S3: topology.S3Destination{Endpoint: "https://s3.eu-west-1.amazonaws.com", Bucket: "memgraph-backups", Prefix: "nightly",
			Region: "eu-west-1", CredentialsSecret: topology.SecretReference{Name: "s3-credentials"}}}}
	if diff := cmp.Diff(want, storedBackupSpec(t, client, "before-upgrade")); diff != "" {
		t.Errorf("spec from the schedule (-want +got):\n%s", diff)
	}

	if _, err := run(t, client, "backup", "memgraph", "--name", "by-flags", "--endpoint", "http://minio.storage.svc:9000",
		"--bucket", "backups", "--credentials-secret", "minio"); err != nil {
		t.Fatal(err)
	}
	if got := storedBackupSpec(t, client, "by-flags"); got.Destination.S3.Endpoint != "http://minio.storage.svc:9000" || got.DeletionPolicy != topology.BackupRetain {
		t.Errorf("spec from the flags: %+v", got)
	}

	for args, want := range map[string]string{
		"backup memgraph --name x": "name a destination",
		"backup memgraph --name x --endpoint s3.example.com --bucket b1 --credentials-secret c": topology.MsgS3Endpoint,
	} {
		if _, err := run(t, client, strings.Fields(args)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", args, err, want)
		}
	}
	list, err := client.Resource(backupsGVR).Namespace("prod").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Errorf("%d MemgraphBackups, want the 2 created (%v)", len(list.Items), err)
	}
}

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

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
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
    timeout: 2h
`

const clusterWithDestination = `
apiVersion: memgraph.com/v1alpha1
kind: MemgraphCluster
metadata: {name: memgraph, namespace: prod}
spec:
  backup:
    destination:
      s3: {endpoint: "https://s3.eu-west-1.amazonaws.com", bucket: memgraph-backups, credentialsSecret: {name: s3-credentials}}
`

const clusterWithoutDestination = `
apiVersion: memgraph.com/v1alpha1
kind: MemgraphCluster
metadata: {name: nodest, namespace: prod}
spec: {}
`

func backupFakeClient(t *testing.T, objs ...runtime.Object) dynamic.Interface {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		clustersGVR: "MemgraphClusterList", backupsGVR: "MemgraphBackupList", schedulesGVR: "MemgraphScheduledBackupList",
	}, objs...)
}

func storedBackupSpec(t *testing.T, client dynamic.Interface, name string) v1alpha1.MemgraphBackupSpec {
	t.Helper()
	u, err := client.Resource(backupsGVR).Namespace("prod").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b v1alpha1.MemgraphBackup
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b); err != nil {
		t.Fatal(err)
	}
	return b.Spec
}

// kubectl memgraph backup creates a MemgraphBackup of the cluster, which goes to the cluster's
// spec.backup.destination: with a schedule's deletion policy and timeout, or the flags'. For a
// cluster without a destination, or with a timeout admission refuses, it creates nothing and
// says why.
func TestBackupVerbCreatesAMemgraphBackup(t *testing.T) {
	client := backupFakeClient(t, object(t, storedSchedule), object(t, clusterWithDestination), object(t, clusterWithoutDestination))
	out, err := run(t, client, "backup", "memgraph", "--from-schedule", "nightly", "--name", "before-upgrade")
	if err != nil || out != "memgraphbackup/before-upgrade created\n" {
		t.Fatalf("out %q, err %v", out, err)
	}
	want := v1alpha1.MemgraphBackupSpec{Cluster: "memgraph", DeletionPolicy: v1alpha1.BackupDelete, Timeout: "2h"}
	if diff := cmp.Diff(want, storedBackupSpec(t, client, "before-upgrade")); diff != "" {
		t.Errorf("spec from the schedule (-want +got):\n%s", diff)
	}

	if _, err := run(t, client, "backup", "memgraph", "--name", "by-flags", "--backup-timeout", "30m"); err != nil {
		t.Fatal(err)
	}
	want = v1alpha1.MemgraphBackupSpec{Cluster: "memgraph", DeletionPolicy: v1alpha1.BackupRetain, Timeout: "30m"}
	if diff := cmp.Diff(want, storedBackupSpec(t, client, "by-flags")); diff != "" {
		t.Errorf("spec from the flags (-want +got):\n%s", diff)
	}

	for args, want := range map[string]string{
		"backup nodest --name x":                       "MemgraphCluster prod/nodest has no spec.backup.destination",
		"backup memgraph --name x --backup-timeout 5s": v1alpha1.MsgBackupTimeout,
		"backup absent --name x":                       "MemgraphCluster prod/absent",
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

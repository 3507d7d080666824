package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// The secret a report must never carry, base64 ("s3cr3t-password") and plain.
const (
	secretB64   = "czNjcjN0LXBhc3N3b3Jk"
	secretPlain = "s3cr3t-password"
)

const reportObjects = `
apiVersion: v1
kind: Secret
metadata:
  name: memgraph-auth
  namespace: prod
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"stringData":{"password":"s3cr3t-password"}}'
data: {password: czNjcjN0LXBhc3N3b3Jk}
---
apiVersion: v1
kind: Secret
metadata:
  name: memgraph-cluster-tls
  namespace: prod
  ownerReferences: [{apiVersion: memgraph.com/v1alpha1, kind: MemgraphCluster, name: memgraph, uid: mgc-uid, controller: true}]
stringData: {tls.key: s3cr3t-password}
---
apiVersion: v1
kind: Secret
metadata: {name: unrelated, namespace: prod}
data: {token: dW5yZWxhdGVk}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: memgraph-data
  namespace: prod
  ownerReferences: [{apiVersion: memgraph.com/v1alpha1, kind: MemgraphCluster, name: memgraph, uid: mgc-uid, controller: true}]
---
apiVersion: v1
kind: Event
metadata: {name: memgraph-data-0.1, namespace: prod}
involvedObject: {kind: Pod, name: memgraph-data-0}
reason: BackOff
message: Back-off restarting failed container memgraph
---
apiVersion: v1
kind: Event
metadata: {name: other.1, namespace: prod}
involvedObject: {kind: Pod, name: other}
reason: Pulled
---
apiVersion: memgraph.com/v1alpha1
kind: MemgraphBackup
metadata: {name: nightly-1, namespace: prod}
spec: {cluster: memgraph, destination: {s3: {bucket: b, credentialsSecret: {name: s3-credentials}}}}
---
apiVersion: v1
kind: Secret
metadata: {name: s3-credentials, namespace: prod}
data: {AWS_SECRET_ACCESS_KEY: czNjcjN0LXBhc3N3b3Jk}
---
apiVersion: memgraph.com/v1alpha1
kind: MemgraphUser
metadata: {name: alice, namespace: prod}
spec: {cluster: memgraph, passwordSecret: {name: alice-password}}
---
apiVersion: v1
kind: Secret
metadata: {name: alice-password, namespace: prod}
data: {password: czNjcjN0LXBhc3N3b3Jk}
---
apiVersion: v1
kind: Pod
metadata:
  name: memgraph-hooks-abc
  namespace: memgraph-hooks
  labels: {app.kubernetes.io/name: memgraph-hooks}
spec: {containers: [{name: memgraph-hooks}]}
`

type fakeLogs struct{}

func (fakeLogs) Tail(_ context.Context, namespace, pod, container string, lines int64, previous bool) ([]byte, error) {
	if pod == "memgraph-coordinator-3" {
		return nil, errors.New("the server could not find the requested resource")
	}
	return fmt.Appendf(nil, "%s/%s/%s last %d lines previous=%v\n", namespace, pod, container, lines, previous), nil
}

// readArchive returns the archive's files by name.
func readArchive(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = string(data)
	}
}

// kubectl memgraph report writes one archive with the cluster, its children, pods, events,
// backups and referenced Secrets, and the logs of every member and of the hook; no Secret's data
// is in it, only its keys.
func TestReportArchiveHasEverythingButSecretData(t *testing.T) {
	mgc := object(t, storedCluster)
	mgc.SetUID("mgc-uid")
	if err := unstructured.SetNestedField(mgc.Object, "memgraph-auth", "spec", "auth", "secretName"); err != nil {
		t.Fatal(err)
	}
	objs := append(testPods(t), mgc)
	for _, doc := range strings.Split(reportObjects, "\n---\n") {
		objs = append(objs, object(t, doc))
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		clustersGVR: "MemgraphClusterList", podsGVR: "PodList", statefulSetsGVR: "StatefulSetList", servicesGVR: "ServiceList",
		budgetsGVR: "PodDisruptionBudgetList", secretsGVR: "SecretList", claimsGVR: "PersistentVolumeClaimList", eventsGVR: "EventList",
		backupsGVR: "MemgraphBackupList", schedulesGVR: "MemgraphScheduledBackupList", usersGVR: "MemgraphUserList",
	}, objs...)
	path := filepath.Join(t.TempDir(), "report.tar.gz")
	var out, errOut bytes.Buffer
	root := newRootWith(&out, &errOut, func() (dynamic.Interface, string, error) { return client, "prod", nil },
		func() (podLogs, error) { return fakeLogs{}, nil })
	root.SetArgs([]string{"report", "memgraph", "-o", path, "--tail", "50"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	files := readArchive(t, path)
	var names []string
	for name, data := range files {
		names = append(names, name)
		if strings.Contains(data, secretB64) || strings.Contains(data, secretPlain) || strings.Contains(data, "dW5yZWxhdGVk") {
			t.Errorf("%s carries Secret data:\n%s", name, data)
		}
	}
	slices.Sort(names)
	want := []string{"report/events.yaml", "report/logs/hook/memgraph-hooks-abc/memgraph-hooks.log",
		"report/logs/members/memgraph-coordinator-1/memgraph.log", "report/logs/members/memgraph-coordinator-2/memgraph.log",
		"report/logs/members/memgraph-data-0/memgraph.log", "report/logs/members/memgraph-data-1/memgraph.log",
		"report/memgraphbackups.yaml", "report/memgraphcluster.yaml", "report/memgraphscheduledbackups.yaml", "report/memgraphusers.yaml",
		"report/not-collected.txt", "report/persistentvolumeclaims.yaml", "report/poddisruptionbudgets.yaml", "report/pods.yaml",
		"report/secrets.yaml", "report/services.yaml", "report/statefulsets.yaml", "report/summary.txt"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	for file, wants := range map[string][]string{
		"report/secrets.yaml":                                    {"name: memgraph-auth", "password: REDACTED", "name: memgraph-cluster-tls", "tls.key: REDACTED", "AWS_SECRET_ACCESS_KEY: REDACTED", "name: alice-password"},
		"report/memgraphusers.yaml":                              {"name: alice"},
		"report/events.yaml":                                     {"Back-off restarting failed container memgraph"},
		"report/statefulsets.yaml":                               {"name: memgraph-data"},
		"report/summary.txt":                                     {"MAIN:      instance_1", "Last operations:", "SET INSTANCE instance_1 TO MAIN"},
		"report/logs/hook/memgraph-hooks-abc/memgraph-hooks.log": {"memgraph-hooks/memgraph-hooks-abc/memgraph-hooks last 50 lines"},
		"report/not-collected.txt":                               {"logs/members/memgraph-coordinator-3/memgraph.log"},
	} {
		for _, w := range wants {
			if !strings.Contains(files[file], w) {
				t.Errorf("%s lacks %q:\n%s", file, w, files[file])
			}
		}
	}
	for file, unwanted := range map[string]string{"report/secrets.yaml": "unrelated", "report/events.yaml": "Pulled"} {
		if strings.Contains(files[file], unwanted) {
			t.Errorf("%s carries %q, which is not the cluster's:\n%s", file, unwanted, files[file])
		}
	}
	if !strings.Contains(out.String(), "not collected: log logs/members/memgraph-coordinator-3/memgraph.log") {
		t.Errorf("output:\n%s", out.String())
	}
}

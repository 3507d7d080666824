package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

func init() { pollInterval = time.Millisecond }

// rebuildWorld is the rest of the system around the plugin, on a fake API server: the hook
// (status.rebuild and status.replicas as it reports them) and the StatefulSet controller (a
// deleted data pod or claim is created again, with a new UID).
type rebuildWorld struct {
	t      *testing.T
	client *dynamicfake.FakeDynamicClient
	mu     sync.Mutex
	uids   int
	// unregistered: the hook has unregistered the instance; the MAIN lists it again only once
	// the annotation is gone and its pod is back.
	unregistered map[string]bool
}

func newRebuildWorld(t *testing.T) *rebuildWorld {
	objs := []runtime.Object{object(t, storedCluster)}
	for i := range 3 {
		pod := fmt.Sprintf("memgraph-data-%d", i)
		objs = append(objs, namedObject(t, "Pod", pod, "old-pod-"+pod), namedObject(t, "PersistentVolumeClaim", topology.DataClaimName(pod), "old-claim-"+pod))
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		clustersGVR: "MemgraphClusterList", podsGVR: "PodList", claimsGVR: "PersistentVolumeClaimList", statefulSetsGVR: "StatefulSetList",
	}, objs...)
	return &rebuildWorld{t: t, client: client, unregistered: map[string]bool{}}
}

func namedObject(t *testing.T, kind, name, uid string) *unstructured.Unstructured {
	t.Helper()
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "prod", "uid": uid}}}
}

// run steps the world every millisecond until ctx ends.
func (w *rebuildWorld) run(ctx context.Context) {
	for ctx.Err() == nil {
		w.step(ctx)
		time.Sleep(time.Millisecond)
	}
}

func (w *rebuildWorld) step(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range 3 {
		pod := fmt.Sprintf("memgraph-data-%d", i)
		for _, o := range []struct {
			gvr        schema.GroupVersionResource
			kind, name string
		}{{podsGVR, "Pod", pod}, {claimsGVR, "PersistentVolumeClaim", topology.DataClaimName(pod)}} {
			if _, err := w.client.Resource(o.gvr).Namespace("prod").Get(ctx, o.name, metav1.GetOptions{}); err == nil {
				continue
			}
			w.uids++
			_, _ = w.client.Resource(o.gvr).Namespace("prod").Create(ctx, namedObject(w.t, o.kind, o.name, fmt.Sprintf("new-%d", w.uids)), metav1.CreateOptions{})
		}
	}
	mgc, err := w.client.Resource(clustersGVR).Namespace("prod").Get(ctx, "memgraph", metav1.GetOptions{})
	if err != nil {
		return
	}
	st, _ := clusterStatus(mgc)
	target := mgc.GetAnnotations()[topology.AnnotationRebuild]
	var rebuild any
	replicas := []v1alpha1.ReplicaStatus{}
	for _, r := range st.Replicas {
		if r.Name != target {
			replicas = append(replicas, r)
		}
	}
	switch {
	case target == "instance_1": // the MAIN
		rebuild = v1alpha1.RebuildStatus{Instance: target, Phase: v1alpha1.RebuildRefused}
	case target != "":
		w.unregistered[target] = true
		rebuild = v1alpha1.RebuildStatus{Instance: target, Phase: v1alpha1.RebuildHeld}
	}
	for name, gone := range w.unregistered {
		if gone && target != name {
			replicas = append(replicas, v1alpha1.ReplicaStatus{Name: name, SyncMode: "async", State: "ready", Since: metav1.Now()})
			w.unregistered[name] = false
		}
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"rebuild": rebuild, "replicas": replicas}})
	_, _ = w.client.Resource(clustersGVR).Namespace("prod").Patch(ctx, "memgraph", types.MergePatchType, patch, metav1.PatchOptions{})
}

func (w *rebuildWorld) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// deletions are the names the plugin deleted, with the UID precondition it sent, in order.
func (w *rebuildWorld) deletions() []string {
	var out []string
	for _, a := range w.client.Actions() {
		if d, ok := a.(clienttesting.DeleteAction); ok {
			out = append(out, fmt.Sprintf("%s %s uid=%s", d.GetResource().Resource, d.GetName(), *d.GetDeleteOptions().Preconditions.UID))
		}
	}
	return out
}

func (w *rebuildWorld) cluster(t *testing.T) (map[string]string, v1alpha1.MemgraphClusterStatus) {
	t.Helper()
	mgc, err := w.client.Resource(clustersGVR).Namespace("prod").Get(context.Background(), "memgraph", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := clusterStatus(mgc)
	if err != nil {
		t.Fatal(err)
	}
	return mgc.GetAnnotations(), st
}

// kubectl memgraph rebuild takes a diverged replica through every step: the hook holds it, the
// plugin deletes exactly its recorded claim and pod, removes the annotation and returns once the
// MAIN reports the instance ready; both annotations are gone.
func TestRebuildReplacesTheVolumeAndWaitsForReplication(t *testing.T) {
	w := newRebuildWorld(t)
	w.start(t)
	out, err := run(t, w.client, "rebuild", "memgraph", "instance_2")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []string{"persistentvolumeclaims lib-storage-memgraph-data-2 uid=old-claim-memgraph-data-2", "pods memgraph-data-2 uid=old-pod-memgraph-data-2"}
	if diff := cmp.Diff(want, w.deletions()); diff != "" {
		t.Errorf("deletions (-want +got):\n%s", diff)
	}
	for _, line := range []string{"annotated memgraph.com/rebuild=instance_2", "instance_2 is unregistered and held", "pod/memgraph-data-2 deleted",
		"annotation memgraph.com/rebuild removed", "rebuild of instance_2 done"} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	annotations, st := w.cluster(t)
	if annotations[topology.AnnotationRebuild] != "" || annotations[topology.AnnotationRebuildRecord] != "" {
		t.Errorf("annotations left behind: %v", annotations)
	}
	if st.Rebuild != nil || len(st.Replicas) != 2 || st.Replicas[1].Name != "instance_2" || st.Replicas[1].State != "ready" {
		t.Errorf("status after the rebuild: rebuild %v, replicas %+v", st.Rebuild, st.Replicas)
	}
}

// The plugin never starts a rebuild of the MAIN: nothing is annotated, nothing deleted. One the
// hook refuses is withdrawn without a deletion.
func TestRebuildRefusesTheMain(t *testing.T) {
	w := newRebuildWorld(t)
	w.start(t)
	_, err := run(t, w.client, "rebuild", "memgraph", "instance_1")
	if err == nil || !strings.Contains(err.Error(), "instance_1 is MAIN") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("error %v", err)
	}
	if annotations, _ := w.cluster(t); annotations[topology.AnnotationRebuild] != "" || annotations[topology.AnnotationRebuildRecord] != "" {
		t.Errorf("annotated: %v", annotations)
	}
	// The stored status says instance_0 is MAIN now, and the hook (the world) still refuses instance_1.
	w.mu.Lock()
	patch := []byte(`{"status":{"main":"instance_0"}}`)
	if _, err := w.client.Resource(clustersGVR).Namespace("prod").Patch(context.Background(), "memgraph", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w.mu.Unlock()
	_, err = run(t, w.client, "rebuild", "memgraph", "instance_1")
	if err == nil || !strings.Contains(err.Error(), "the hook refused to rebuild instance_1") {
		t.Fatalf("error %v", err)
	}
	if annotations, _ := w.cluster(t); annotations[topology.AnnotationRebuild] != "" || annotations[topology.AnnotationRebuildRecord] != "" {
		t.Errorf("annotations left behind: %v", annotations)
	}
	if d := w.deletions(); len(d) != 0 {
		t.Errorf("deleted %v", d)
	}
	for _, bad := range []string{"instance_3", "instance_01", "coordinator_1"} {
		if _, err := run(t, w.client, "rebuild", "memgraph", bad); err == nil || !strings.Contains(err.Error(), "not a declared data instance") {
			t.Errorf("%s: error %v", bad, err)
		}
	}
}

// A rebuild cut off after the claim was deleted (the pod's deletion failed) resumes when run
// again: the claim the StatefulSet controller created since is kept, the old pod is deleted,
// and the rebuild completes.
func TestRebuildResumesAfterAnInterruption(t *testing.T) {
	w := newRebuildWorld(t)
	failed := false
	w.client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		if !failed {
			failed = true
			return true, nil, errors.New("connection reset by peer")
		}
		return false, nil, nil
	})
	w.start(t)
	if _, err := run(t, w.client, "rebuild", "memgraph", "instance_2"); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("first run: error %v", err)
	}
	annotations, _ := w.cluster(t)
	if annotations[topology.AnnotationRebuild] != "instance_2" || annotations[topology.AnnotationRebuildRecord] == "" {
		t.Fatalf("the interrupted rebuild left no record: %v", annotations)
	}
	out, err := run(t, w.client, "rebuild", "memgraph", "instance_2")
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	if !strings.Contains(out, "resuming the rebuild of instance_2") {
		t.Errorf("output:\n%s", out)
	}
	want := []string{"persistentvolumeclaims lib-storage-memgraph-data-2 uid=old-claim-memgraph-data-2",
		"pods memgraph-data-2 uid=old-pod-memgraph-data-2", "pods memgraph-data-2 uid=old-pod-memgraph-data-2"}
	if diff := cmp.Diff(want, w.deletions()); diff != "" {
		t.Errorf("deletions (-want +got; the second pod deletion is the retry of the failed one):\n%s", diff)
	}
	claim, err := w.client.Resource(claimsGVR).Namespace("prod").Get(context.Background(), "lib-storage-memgraph-data-2", metav1.GetOptions{})
	if err != nil || !strings.HasPrefix(string(claim.GetUID()), "new-") {
		t.Errorf("the new claim: %v, %v", claim, err)
	}
	if annotations, _ := w.cluster(t); annotations[topology.AnnotationRebuild] != "" || annotations[topology.AnnotationRebuildRecord] != "" {
		t.Errorf("annotations left behind: %v", annotations)
	}
}

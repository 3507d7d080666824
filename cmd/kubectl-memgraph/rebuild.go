package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var claimsGVR = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}

// rebuildRecord is the annotation topology.AnnotationRebuildRecord: the rebuild under way, so
// that a rebuild interrupted at any step resumes where it stopped. The UIDs are those of the
// claim and pod the rebuild replaces, so that a repeated step never deletes their successors.
type rebuildRecord struct {
	Instance string `json:"instance"`
	ClaimUID string `json:"claimUID,omitempty"`
	PodUID   string `json:"podUID,omitempty"`
	// Returning: the volume is replaced and the rebuild annotation removed; what is left is to
	// wait for the instance to be registered again and replicating.
	Returning bool `json:"returning,omitempty"`
}

// rebuildCommand rebuilds a replica on a fresh volume (docs/operations.md, Rebuilding a replica).
func (p *plugin) rebuildCommand() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "rebuild NAME INSTANCE",
		Short: "Rebuild a replica from the MAIN on a fresh volume (annotation memgraph.com/rebuild)",
		Long: "rebuild sets the memgraph.com/rebuild annotation, waits until the hook has unregistered the instance, deletes " +
			"its pod's data PersistentVolumeClaim and the pod, removes the annotation and waits until the instance is " +
			"registered again and replicating. The hook refuses the MAIN and the last Sync replica caught up with it. Run it " +
			"again after an interruption: it resumes where it stopped.",
		Args:              usageArgs(cobra.ExactArgs(2)),
		ValidArgsFunction: p.complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := p.open()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			err = s.rebuild(ctx, args[0], args[1])
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("%w; run the same command again to resume", err)
			}
			return err
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Minute, "how long to wait for the hook and the StatefulSet controller")
	return cmd
}

// rebuild runs or resumes the rebuild of instance, step by step, each safe to repeat.
func (s *session) rebuild(ctx context.Context, cluster, instance string) error {
	mgc, err := s.get(ctx, cluster)
	if err != nil {
		return err
	}
	rec, err := readRecord(mgc)
	if err != nil {
		return err
	}
	switch {
	case rec != nil && rec.Instance != instance:
		return fmt.Errorf("a rebuild of %s is under way on %s; finish it first: kubectl memgraph rebuild %s %s", rec.Instance, cluster, cluster, rec.Instance)
	case rec == nil:
		if rec, err = s.startRebuild(ctx, mgc, instance); err != nil {
			return err
		}
	default:
		fmt.Fprintf(s.out, "resuming the rebuild of %s\n", instance)
	}
	if !rec.Returning {
		if err := s.replaceVolume(ctx, cluster, rec); err != nil {
			return err
		}
	}
	if err := s.waitFor(ctx, cluster, instance+" to replicate again", func(mgc *unstructured.Unstructured) (bool, string, error) {
		return replicating(mgc, instance)
	}); err != nil {
		return err
	}
	if err := s.annotate(ctx, cluster, map[string]any{topology.AnnotationRebuildRecord: nil}); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "rebuild of %s done: it is registered again and replicating\n", instance)
	return nil
}

// startRebuild checks what the plugin can check itself (a declared data instance, not the MAIN,
// no other rebuild declared), records the claim and pod to replace and sets the annotation.
func (s *session) startRebuild(ctx context.Context, mgc *unstructured.Unstructured, instance string) (*rebuildRecord, error) {
	cluster := mgc.GetName()
	data, found, _ := unstructured.NestedInt64(mgc.Object, "spec", "dataInstances")
	if !found {
		data = int64(v1alpha1.DefaultDataInstances)
	}
	n, ok := topology.ParseDataInstanceName(instance)
	if !ok || !instanceRE.MatchString(instance) || int64(n) >= data {
		return nil, fmt.Errorf("rebuild %s refused: %q is not a declared data instance of %s (instance_0 to instance_%d)", cluster, instance, cluster, data-1)
	}
	if main, _, _ := unstructured.NestedString(mgc.Object, "status", "main"); main == instance {
		return nil, fmt.Errorf("rebuild %s refused: %s is MAIN, whose data every replica recovers from; hand MAIN over first "+
			"(kubectl memgraph switchover %s --to <a caught-up replica> --wait), then rebuild %s; nothing was changed", cluster, instance, cluster, instance)
	}
	if other := mgc.GetAnnotations()[topology.AnnotationRebuild]; other != "" && other != instance {
		return nil, fmt.Errorf("rebuild %s refused: the %s annotation already names %s; remove it first (kubectl annotate mgc %s %s-)",
			cluster, topology.AnnotationRebuild, other, cluster, topology.AnnotationRebuild)
	}
	pod := dataPod(cluster, instance)
	rec := &rebuildRecord{Instance: instance}
	var err error
	if rec.PodUID, err = s.uid(ctx, podsGVR, pod); err != nil {
		return nil, err
	}
	if rec.ClaimUID, err = s.uid(ctx, claimsGVR, topology.DataClaimName(pod)); err != nil {
		return nil, err
	}
	if err := s.saveRecord(ctx, cluster, rec, instance); err != nil {
		return nil, err
	}
	fmt.Fprintf(s.out, "memgraphcluster.memgraph.com/%s annotated %s=%s\n", cluster, topology.AnnotationRebuild, instance)
	return rec, nil
}

// dataPod is the pod of the data instance instance_<n>: <cluster>-data-<n>.
func dataPod(cluster, instance string) string {
	n, _ := topology.ParseDataInstanceName(instance)
	return fmt.Sprintf("%s-%d", topology.DataSetName(cluster), n)
}

// replaceVolume waits until the hook holds the instance unregistered (and the MAIN no longer
// lists it), deletes the recorded claim and pod, waits until both are gone, and removes the
// rebuild annotation. A rebuild the hook refuses is withdrawn: both annotations are removed.
func (s *session) replaceVolume(ctx context.Context, cluster string, rec *rebuildRecord) error {
	// Setting both annotations again is a no-op unless someone removed the rebuild annotation.
	if err := s.saveRecord(ctx, cluster, rec, rec.Instance); err != nil {
		return err
	}
	refusal := ""
	err := s.waitFor(ctx, cluster, "the hook to hold "+rec.Instance, func(mgc *unstructured.Unstructured) (bool, string, error) {
		done, progress, why := held(mgc, rec.Instance)
		refusal = why
		return done || why != "", progress, nil
	})
	if err != nil {
		return err
	}
	if refusal != "" {
		if err := s.annotate(ctx, cluster, map[string]any{topology.AnnotationRebuild: nil, topology.AnnotationRebuildRecord: nil}); err != nil {
			return err
		}
		return fmt.Errorf("the hook refused to rebuild %s: %s; the annotation is removed and nothing was deleted", rec.Instance, refusal)
	}
	pod := dataPod(cluster, rec.Instance)
	claim := topology.DataClaimName(pod)
	for _, o := range []struct {
		gvr       schema.GroupVersionResource
		kind, uid string
		name      string
	}{{claimsGVR, "persistentvolumeclaim", rec.ClaimUID, claim}, {podsGVR, "pod", rec.PodUID, pod}} {
		if err := s.deleteIf(ctx, o.gvr, o.kind, o.name, o.uid); err != nil {
			return err
		}
	}
	err = s.waitFor(ctx, cluster, "the old claim and pod of "+rec.Instance+" to go", func(*unstructured.Unstructured) (bool, string, error) {
		for _, o := range []struct {
			gvr             schema.GroupVersionResource
			kind, name, uid string
		}{{claimsGVR, "persistentvolumeclaim", claim, rec.ClaimUID}, {podsGVR, "pod", pod, rec.PodUID}} {
			uid, err := s.uid(ctx, o.gvr, o.name)
			if err != nil {
				return false, "", err
			}
			if uid != "" && uid == o.uid {
				return false, fmt.Sprintf("waiting for the old %s %s to go", o.kind, o.name), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		return err
	}
	rec.Returning = true
	if err := s.saveRecord(ctx, cluster, rec, ""); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "memgraphcluster.memgraph.com/%s annotation %s removed: the hook registers %s again\n", cluster, topology.AnnotationRebuild, rec.Instance)
	return nil
}

// held reports whether the hook holds instance unregistered and the MAIN's last SHOW REPLICAS no
// longer lists it; else progress, or why the hook refuses.
func held(mgc *unstructured.Unstructured, instance string) (done bool, progress, refusal string) {
	st, err := clusterStatus(mgc)
	if err != nil {
		return false, err.Error(), ""
	}
	r := st.Rebuild
	if r == nil || r.Instance != instance {
		return false, "waiting for the hook to take the rebuild of " + instance + " up", ""
	}
	msg := conditionMessage(st, v1alpha1.ConditionRebuild)
	switch {
	case r.Phase == v1alpha1.RebuildRefused && msg == "":
		return false, "", "status.rebuild.phase is Refused"
	case r.Phase == v1alpha1.RebuildRefused:
		return false, "", msg
	case r.Phase != v1alpha1.RebuildHeld:
		return false, fmt.Sprintf("%s: %s", r.Phase, msg), ""
	}
	for _, rep := range st.Replicas {
		if rep.Name == instance {
			return false, fmt.Sprintf("%s is unregistered; waiting for the MAIN's SHOW REPLICAS to stop listing it", instance), ""
		}
	}
	return true, fmt.Sprintf("%s is unregistered and held", instance), ""
}

// replicating reports whether the hook no longer reports a rebuild and the MAIN lists instance
// ready or replicating.
func replicating(mgc *unstructured.Unstructured, instance string) (bool, string, error) {
	st, err := clusterStatus(mgc)
	if err != nil {
		return false, "", err
	}
	if st.Rebuild != nil {
		return false, fmt.Sprintf("the hook still reports the rebuild of %s: %s", st.Rebuild.Instance, st.Rebuild.Phase), nil
	}
	for _, rep := range st.Replicas {
		if rep.Name == instance {
			return v1alpha1.ReplicaStateHealthy(rep.State), fmt.Sprintf("%s is registered: %s", instance, dash(rep.State)), nil
		}
	}
	return false, fmt.Sprintf("waiting for %s to be registered again (the MAIN's SHOW REPLICAS is read every 30 s)", instance), nil
}

func clusterStatus(mgc *unstructured.Unstructured) (v1alpha1.MemgraphClusterStatus, error) {
	var mc v1alpha1.MemgraphCluster
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(mgc.Object, &mc)
	return mc.Status, err
}

func conditionMessage(st v1alpha1.MemgraphClusterStatus, t v1alpha1.ConditionType) string {
	for _, c := range st.Conditions {
		if c.Type == string(t) {
			return c.Message
		}
	}
	return ""
}

func readRecord(mgc *unstructured.Unstructured) (*rebuildRecord, error) {
	raw := mgc.GetAnnotations()[topology.AnnotationRebuildRecord]
	if raw == "" {
		return nil, nil
	}
	var rec rebuildRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil || !instanceRE.MatchString(rec.Instance) {
		return nil, fmt.Errorf("annotation %s of %s is not a rebuild record (%q); remove it if no rebuild is under way",
			topology.AnnotationRebuildRecord, mgc.GetName(), raw)
	}
	return &rec, nil
}

// saveRecord writes rec and sets the rebuild annotation to target ("" removes it), in one patch.
func (s *session) saveRecord(ctx context.Context, cluster string, rec *rebuildRecord, target string) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	var value any
	if target != "" {
		value = target
	}
	return s.annotate(ctx, cluster, map[string]any{topology.AnnotationRebuildRecord: string(raw), topology.AnnotationRebuild: value})
}

// annotate merge-patches the cluster's annotations (a nil value removes one).
func (s *session) annotate(ctx context.Context, cluster string, annotations map[string]any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	_, err = s.client.Resource(clustersGVR).Namespace(s.namespace).Patch(ctx, cluster, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("annotate MemgraphCluster %s/%s: %w", s.namespace, cluster, err)
	}
	return nil
}

// uid is the UID of the named object, "" when there is none.
func (s *session) uid(ctx context.Context, gvr schema.GroupVersionResource, name string) (string, error) {
	u, err := s.client.Resource(gvr).Namespace(s.namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("%s %s/%s: %w", gvr.Resource, s.namespace, name, err)
	}
	return string(u.GetUID()), nil
}

// deleteIf deletes the named object if it is still the one with uid: a claim or pod created
// since, by the StatefulSet controller, is never deleted. The API server enforces the same
// through the precondition.
func (s *session) deleteIf(ctx context.Context, gvr schema.GroupVersionResource, kind, name, uid string) error {
	current, err := s.uid(ctx, gvr, name)
	if err != nil || uid == "" || current != uid {
		return err
	}
	u := types.UID(uid)
	err = s.client.Resource(gvr).Namespace(s.namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &u}})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil
	case err != nil:
		return fmt.Errorf("delete %s %s/%s: %w", kind, s.namespace, name, err)
	}
	fmt.Fprintf(s.out, "%s/%s deleted\n", kind, name)
	return nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var (
	clustersGVR     = v1alpha1.GroupVersion.WithResource(v1alpha1.Resource)
	podsGVR         = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	statefulSetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
)

// session is the plugin's connection to one namespace.
type session struct {
	client    dynamic.Interface
	namespace string
	out       io.Writer
	poll      time.Duration
}

func (s *session) get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	mgc, err := s.client.Resource(clustersGVR).Namespace(s.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("MemgraphCluster %s/%s: %w", s.namespace, name, err)
	}
	return mgc, nil
}

// pods are the cluster's pods, both roles.
func (s *session) pods(ctx context.Context, name string) ([]corev1.Pod, error) {
	list, err := s.client.Resource(podsGVR).Namespace(s.namespace).List(ctx, metav1.ListOptions{
		LabelSelector: metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: topology.PodSelector(name)})})
	if err != nil {
		return nil, fmt.Errorf("pods of %s/%s: %w", s.namespace, name, err)
	}
	pods := make([]corev1.Pod, len(list.Items))
	for i, item := range list.Items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &pods[i]); err != nil {
			return nil, err
		}
	}
	return pods, nil
}

// apply sends the change's merge patch and returns the stored result.
func (s *session) apply(ctx context.Context, c change) (*unstructured.Unstructured, error) {
	mgc, err := s.client.Resource(clustersGVR).Namespace(s.namespace).Patch(ctx, c.Cluster, types.MergePatchType, []byte(c.Patch), metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("patch MemgraphCluster %s/%s: %w", s.namespace, c.Cluster, err)
	}
	return mgc, nil
}

// wait follows the cluster until the change's condition holds for the patched generation (and,
// for a restart, until both StatefulSets have rolled the new template out), printing each new
// phase and condition message as progress.
func (s *session) wait(ctx context.Context, c change, generation int64) error {
	return s.waitFor(ctx, c.Cluster, fmt.Sprintf("%s=%s on %s", c.Wait.Type, c.Wait.Status, c.Cluster),
		func(mgc *unstructured.Unstructured) (bool, string, error) {
			done, progress := s.reached(ctx, mgc, c, generation)
			return done, progress, nil
		})
}

// waitFor polls the cluster until check says done, printing each new line of progress; what
// names what it waits for when it gives up.
func (s *session) waitFor(ctx context.Context, cluster, what string, check func(*unstructured.Unstructured) (bool, string, error)) error {
	last := ""
	for {
		mgc, err := s.get(ctx, cluster)
		if err != nil {
			return err
		}
		done, progress, err := check(mgc)
		if err != nil {
			return err
		}
		if progress != "" && progress != last {
			fmt.Fprintf(s.out, "%s  %s\n", time.Now().Format("15:04:05"), progress)
			last = progress
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gave up waiting for %s: %w (last: %s)", what, ctx.Err(), last)
		case <-time.After(s.poll):
		}
	}
}

// reached says whether mgc shows the change done, and a line of progress.
func (s *session) reached(ctx context.Context, mgc *unstructured.Unstructured, c change, generation int64) (bool, string) {
	var conds []metav1.Condition
	raw, _, _ := unstructured.NestedSlice(mgc.Object, "status", "conditions")
	for _, r := range raw {
		var cond metav1.Condition
		if m, ok := r.(map[string]any); ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond) == nil {
			conds = append(conds, cond)
		}
	}
	phase, _, _ := unstructured.NestedString(mgc.Object, "status", "phase")
	main, _, _ := unstructured.NestedString(mgc.Object, "status", "main")
	cond := meta.FindStatusCondition(conds, string(c.Wait.Type))
	if cond == nil {
		return false, fmt.Sprintf("phase %s: no %s condition yet", dash(phase), c.Wait.Type)
	}
	progress := fmt.Sprintf("phase %s, MAIN %s, %s=%s %s: %s", dash(phase), dash(main), cond.Type, cond.Status, cond.Reason, cond.Message)
	if cond.Status != metav1.ConditionStatus(c.Wait.Status) || cond.ObservedGeneration < generation {
		return false, progress
	}
	if c.Wait.RestartedAt != "" {
		if pending := s.restartPending(ctx, c.Cluster, c.Wait.RestartedAt); pending != "" {
			return false, progress + "; " + pending
		}
	}
	return true, progress
}

// restartPending is "" once both StatefulSets carry restartedAt in their pod template and every
// pod runs that template; otherwise what is still pending.
func (s *session) restartPending(ctx context.Context, cluster, restartedAt string) string {
	for _, set := range []string{topology.CoordinatorSetName(cluster), topology.DataSetName(cluster)} {
		sts, err := s.client.Resource(statefulSetsGVR).Namespace(s.namespace).Get(ctx, set, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		stamp, _, _ := unstructured.NestedString(sts.Object, "spec", "template", "metadata", "annotations", topology.AnnotationRestartedAt)
		replicas, _, _ := unstructured.NestedInt64(sts.Object, "spec", "replicas")
		updated, _, _ := unstructured.NestedInt64(sts.Object, "status", "updatedReplicas")
		current, _, _ := unstructured.NestedString(sts.Object, "status", "currentRevision")
		update, _, _ := unstructured.NestedString(sts.Object, "status", "updateRevision")
		observed, _, _ := unstructured.NestedInt64(sts.Object, "status", "observedGeneration")
		switch {
		case stamp != restartedAt:
			return fmt.Sprintf("StatefulSet %s does not carry the restart yet", set)
		case observed < sts.GetGeneration() || updated < replicas || current != update:
			return fmt.Sprintf("StatefulSet %s: %d of %d pods restarted", set, updated, replicas)
		}
	}
	return ""
}

var listAll = metav1.ListOptions{}

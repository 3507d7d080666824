//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/memgraph-hooks/memgraph-hooks/e2e/podsim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const rolloutTimeout = 4 * time.Minute

// rolloutRecorder watches one cluster's pods while the real StatefulSet controller replaces them:
// the order in which they were deleted (a watch on the Pods), whether the member of each was
// MAIN or the Raft leader in the simulator at that moment and when its process died (podsim's
// OnGone; kwok may replace a pod between two of podsim's polls, so OnGone alone misses some),
// and the most declared pods that were missing or not Ready at once.
type rolloutRecorder struct {
	s        *scenario
	cluster  string
	declared []string // pod names

	mu         sync.Mutex
	gone       []*corev1.Pod // the pods, as they were when deleted, in that order
	deleted    map[types.UID]bool
	violations []string
	ready      map[string]bool // pod name -> exists, Ready and not terminating
	maxDown    int
	downAt     []string // the pods down when maxDown was reached
	stop       func()
}

func (s *scenario) recordRollout(cluster string, coordinators, data int) *rolloutRecorder {
	s.t.Helper()
	net := s.network(cluster)
	r := &rolloutRecorder{s: s, cluster: cluster, ready: map[string]bool{}, deleted: map[types.UID]bool{}}
	for id := 1; id <= coordinators; id++ {
		r.declared = append(r.declared, net.Coordinator(id).Pod)
	}
	for n := 0; n < data; n++ {
		r.declared = append(r.declared, net.DataInstance(n).Pod)
	}
	s.pods.OnGone(r.processGone)
	ctx, cancel := context.WithCancel(context.Background())
	selector := metav1.ListOptions{LabelSelector: topology.LabelInstance + "=" + cluster}
	list, err := testEnv.Client.CoreV1().Pods(s.ns).List(ctx, selector)
	if err != nil {
		cancel()
		s.t.Fatalf("list pods: %v", err)
	}
	for i := range list.Items {
		r.podEvent(watch.Added, &list.Items[i])
	}
	r.maxDown, r.downAt = 0, nil // the baseline is a converged cluster
	selector.ResourceVersion = list.ResourceVersion
	w, err := testEnv.Client.CoreV1().Pods(s.ns).Watch(ctx, selector)
	if err != nil {
		cancel()
		s.t.Fatalf("watch pods: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			r.podEvent(ev.Type, pod)
		}
	}()
	r.stop = func() {
		cancel()
		w.Stop()
		<-done
		s.pods.OnGone(nil)
	}
	s.t.Cleanup(r.stop)
	return r
}

// processGone runs when the simulated process of a pod dies.
func (r *rolloutRecorder) processGone(host string) {
	pod, _, _ := strings.Cut(host, ".")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checkNotMainOrLeader(pod, host, "its process died")
}

// checkNotMainOrLeader records a violation when the member on host is the MAIN or the leader in
// the simulator now: the hook hands both over before it releases their pods.
func (r *rolloutRecorder) checkNotMainOrLeader(pod, host, moment string) {
	for _, c := range r.s.world.Raft().Clusters {
		if c.Leader == 0 || len(c.Members) < 2 {
			continue
		}
		for _, m := range c.Members {
			if m.ID == c.Leader && m.Host == host {
				r.violations = append(r.violations, fmt.Sprintf("%s: %s while coordinator_%d was the Raft leader", pod, moment, m.ID))
			}
		}
		for _, d := range c.Data {
			if d.Name == c.Main && d.Host == host {
				r.violations = append(r.violations, fmt.Sprintf("%s: %s while %s was MAIN", pod, moment, d.Name))
			}
		}
	}
}

func (r *rolloutRecorder) podEvent(typ watch.EventType, pod *corev1.Pod) {
	deleting := typ == watch.Deleted || pod.DeletionTimestamp != nil
	up := !deleting && podReady(pod)
	r.mu.Lock()
	defer r.mu.Unlock()
	if deleting && !r.deleted[pod.UID] {
		r.deleted[pod.UID] = true
		r.gone = append(r.gone, pod)
		r.checkNotMainOrLeader(pod.Name, podsim.PodHost(pod), "deleted")
	}
	r.ready[pod.Name] = up
	var down []string
	for _, name := range r.declared {
		if !r.ready[name] {
			down = append(down, name)
		}
	}
	if len(down) > r.maxDown {
		r.maxDown, r.downAt = len(down), down
	}
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// restart begins a new phase of the recording: the order and the most pods down are counted anew.
func (r *rolloutRecorder) restart() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gone, r.maxDown, r.downAt = nil, 0, nil
}

// check asserts what one rollout must look like: every declared pod replaced once, data
// instances first, each role from its highest ordinal down; no MAIN or leader killed; never two
// pods down at once.
func (r *rolloutRecorder) check(t *testing.T, wantOrder []string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	names, deleted := make([]string, len(r.gone)), make([]string, len(r.gone))
	for i, pod := range r.gone {
		names[i] = pod.Name
		deleted[i] = fmt.Sprintf("%s uid=%s revision=%s node=%q phase=%s ready=%t", pod.Name, pod.UID,
			pod.Labels["controller-revision-hash"], pod.Spec.NodeName, pod.Status.Phase, podReady(pod))
	}
	if diff := cmp.Diff(wantOrder, names); diff != "" {
		t.Errorf("order in which pods were replaced (-want +got):\n%s\nthe pods as they were deleted:\n  %s",
			diff, strings.Join(deleted, "\n  "))
	}
	for _, v := range r.violations {
		t.Error(v)
	}
	if r.maxDown > 1 {
		t.Errorf("%d pods were down at once: %v", r.maxDown, r.downAt)
	}
}

// waitUpdated waits until the cluster is Converged for its current generation, which waits for
// a rollout too, and checks that it then reports Updated and version.
func (s *scenario) waitUpdated(name, version string) *unstructured.Unstructured {
	s.t.Helper()
	u := s.waitConverged(name, rolloutTimeout)
	if st, reason, msg := conditionStatus(u, string(topology.ConditionUpdated)); st != "True" {
		s.t.Fatalf("Converged while Updated=%q %s: %s", st, reason, msg)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "status", "version"); got != version {
		s.t.Fatalf("status.version %q after the rollout, want %q", got, version)
	}
	return u
}

// waitRolloutStarted waits until the cluster reports Updated=False.
func (s *scenario) waitRolloutStarted(name string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := eventually(ctx, 100*time.Millisecond, func() error {
		u, err := s.get(ctx, name)
		if err != nil {
			return err
		}
		if st, reason, _ := conditionStatus(u, string(topology.ConditionUpdated)); st != "False" {
			return fmt.Errorf("Updated=%q %s", st, reason)
		}
		return nil
	})
	if err != nil {
		s.t.Fatalf("the rollout did not start: %v", err)
	}
}

// podUIDs maps the cluster's pods to their UIDs.
func (s *scenario) podUIDs(cluster string) map[string]types.UID {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := testEnv.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: topology.LabelInstance + "=" + cluster})
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, p := range list.Items {
		out[p.Name] = p.UID
	}
	return out
}

// writer commits a transaction on the simulated MAIN every interval until stopped, and counts
// the commits the cluster acknowledged.
type writer struct {
	acked, refused int64
	stop           func()
}

func (s *scenario) startWriter(interval time.Duration) *writer {
	w := &writer{}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := s.world.Commit("memgraph", 1); err != nil {
					w.refused++
				} else {
					w.acked++
				}
			}
		}
	}()
	w.stop = func() { close(done); <-stopped }
	return w
}

// TestRollingUpgrade changes image.tag on a converged 3+3 cluster with MAIN on instance_1 and
// the leader on coordinator_3, with the real StatefulSet controller replacing pods as the hook
// lowers the partitions; then rolls every pod again with memgraph.com/restartedAt.
func TestRollingUpgrade(t *testing.T) {
	s := startScenario(t, "rollout")
	const name = "roll"
	s.create(name, "{dataInstances: 3}")
	mgc := s.waitConverged(name, convergeTimeout)
	s.declaredMembers(mgc, 3, 3)
	oldImage := topology.DefaultImageRepository + ":" + topology.DefaultImageTag
	newImage := topology.DefaultImageRepository + ":3.12.1"
	s.waitUpdated(name, oldImage)
	s.parkMain(name, "instance_1")
	s.asOperator(func(context.Context) error { return s.world.ForceLeader(3) })
	if t.Failed() {
		return
	}

	order := []string{name + "-data-2", name + "-data-1", name + "-data-0",
		name + "-coordinator-3", name + "-coordinator-2", name + "-coordinator-1"}
	rec := s.recordRollout(name, 3, 3)
	before := s.podUIDs(name)
	w := s.startWriter(50 * time.Millisecond)
	t.Log("image.tag 3.12.0 -> 3.12.1")
	s.patchSpec(name, `{"image":{"tag":"3.12.1"}}`)
	mgc = s.waitUpdated(name, newImage)
	w.stop()
	rec.check(t, order)
	s.everyPodReplaced(name, before)
	s.declaredMembers(mgc, 3, 3)
	s.noWriteLost(w)
	s.assertNoMisuse()
	if t.Failed() {
		return
	}
	s.assertNoChurn(2)

	t.Log("memgraph.com/restartedAt rolls every pod the same way")
	rec.restart()
	before = s.podUIDs(name)
	s.annotate(name, topology.AnnotationRestartedAt, time.Now().UTC().Format(time.RFC3339))
	s.waitRolloutStarted(name) // the annotation moves no generation: see the rollout begin first
	mgc = s.waitUpdated(name, newImage)
	rec.check(t, order)
	s.everyPodReplaced(name, before)
	s.declaredMembers(mgc, 3, 3)
	s.assertNoMisuse()
	if !t.Failed() {
		s.assertNoChurn(2)
	}
}

func (s *scenario) everyPodReplaced(cluster string, before map[string]types.UID) {
	s.t.Helper()
	after := s.podUIDs(cluster)
	for pod, uid := range before {
		if after[pod] == uid {
			s.t.Errorf("%s was not replaced", pod)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, set := range []string{topology.CoordinatorSetName(cluster), topology.DataSetName(cluster)} {
		sts, err := testEnv.Client.AppsV1().StatefulSets(s.ns).Get(ctx, set, metav1.GetOptions{})
		if err != nil {
			s.t.Fatal(err)
		}
		list, err := testEnv.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{
			LabelSelector: metav1.FormatLabelSelector(sts.Spec.Selector)})
		if err != nil {
			s.t.Fatal(err)
		}
		for _, p := range list.Items {
			if got := p.Labels["controller-revision-hash"]; got != sts.Status.UpdateRevision {
				s.t.Errorf("%s is at revision %q, its StatefulSet's update revision is %q", p.Name, got, sts.Status.UpdateRevision)
			}
		}
		if p := sts.Spec.UpdateStrategy.RollingUpdate; p == nil || p.Partition == nil || *p.Partition != *sts.Spec.Replicas {
			s.t.Errorf("%s: partition %v after the rollout, want %d (every pod held)", set, p, *sts.Spec.Replicas)
		}
	}
}

// noWriteLost checks that the MAIN after the rollout holds every transaction the cluster
// acknowledged during it.
func (s *scenario) noWriteLost(w *writer) {
	s.t.Helper()
	group := s.raft()
	for _, d := range group.Data {
		if d.Name == group.Main && d.Committed["memgraph"] < w.acked {
			s.t.Errorf("MAIN %s holds %d transactions, %d were acknowledged", d.Name, d.Committed["memgraph"], w.acked)
		}
	}
	s.t.Logf("%d writes acknowledged during the rollout, %d refused while no MAIN was alive", w.acked, w.refused)
}

// annotate sets an annotation on the MemgraphCluster, as `kubectl annotate --overwrite` would.
func (s *scenario) annotate(name, key, value string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	if _, err := mgcClient(s.ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("annotate %s: %v", name, err)
	}
}

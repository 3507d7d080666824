//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/e2e/podsim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const rolloutTimeout = 4 * time.Minute

// rolloutRecorder watches one cluster's pods while the real StatefulSet controller replaces them:
// the order in which they were deleted (a watch on the Pods), whether the member of each was
// MAIN or the Raft leader in the simulator at that moment and when its process died (podsim's
// OnGone; kwok may replace a pod between two of podsim's polls, so OnGone alone misses some),
// which member was MAIN when each was deleted, the most declared pods that were missing or not
// Ready at once, and every Updated message the cluster's status showed (a watch on it).
type rolloutRecorder struct {
	s        *scenario
	cluster  string
	declared []string // pod names

	mu         sync.Mutex
	gone       []*corev1.Pod // the pods, as they were when deleted, in that order
	mainAt     []string      // the MAIN in the simulator when each of gone was deleted
	updated    []string      // the Updated condition's messages, each change in order
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
	selector := metav1.ListOptions{LabelSelector: v1alpha1.LabelInstance + "=" + cluster}
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
	mw, err := mgcClient(s.ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + cluster})
	if err != nil {
		cancel()
		w.Stop()
		s.t.Fatalf("watch %s: %v", cluster, err)
	}
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			r.podEvent(ev.Type, pod)
		}
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		for ev := range mw.ResultChan() {
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				r.statusEvent(u)
			}
		}
	}()
	r.stop = func() {
		cancel()
		w.Stop()
		mw.Stop()
		<-done
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
		r.mainAt = append(r.mainAt, r.main())
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

// main is the MAIN of the scenario's led Raft group in the simulator now ("" when none).
func (r *rolloutRecorder) main() string {
	for _, c := range r.s.world.Raft().Clusters {
		if c.Leader != 0 && len(c.Members) > 1 {
			return c.Main
		}
	}
	return ""
}

// statusEvent records the cluster's Updated message when it changed.
func (r *rolloutRecorder) statusEvent(u *unstructured.Unstructured) {
	_, _, msg := conditionStatus(u, string(v1alpha1.ConditionUpdated))
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.updated); msg != "" && (n == 0 || r.updated[n-1] != msg) {
		r.updated = append(r.updated, msg)
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
	r.gone, r.mainAt, r.updated, r.maxDown, r.downAt = nil, nil, nil, 0, nil
}

// goneNames are the pods deleted so far, in that order.
func (r *rolloutRecorder) goneNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for _, pod := range r.gone {
		names = append(names, pod.Name)
	}
	return names
}

// checkMains asserts which member was MAIN when each data pod was deleted, in deletion order
// ("<pod> under <MAIN>").
func (r *rolloutRecorder) checkMains(t *testing.T, want []string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var got []string
	for i, pod := range r.gone {
		if pod.Labels[v1alpha1.LabelComponent] == topology.RoleData {
			got = append(got, pod.Name+" under "+r.mainAt[i])
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the MAIN when each data pod was deleted (-want +got):\n%s", diff)
	}
}

// upgradeSteps are the numbers of the upgrade steps ("MAIN's pod last: step N of 3") the Updated
// messages named, in the order each first appeared, and the messages.
func (r *rolloutRecorder) upgradeSteps(version string) (steps, messages []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prefix := "upgrade to Memgraph " + version + ", MAIN's pod last: step "
	for _, msg := range r.updated {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			if n, _, _ := strings.Cut(rest, " "); !slices.Contains(steps, n) {
				steps = append(steps, n)
			}
		}
	}
	return steps, slices.Clone(r.updated)
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
	if st, reason, msg := conditionStatus(u, string(v1alpha1.ConditionUpdated)); st != "True" {
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
		if st, reason, _ := conditionStatus(u, string(v1alpha1.ConditionUpdated)); st != "False" {
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
	list, err := testEnv.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelInstance + "=" + cluster})
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

// TestRollingUpgrade upgrades image.tag 3.12.0 -> 3.13.0 on a converged 3+3 cluster with MAIN
// on the middle ordinal (instance_1) and the leader on coordinator_3, with the real StatefulSet
// controller replacing pods as the hook lowers the partitions and podsim running each instance
// at its pod's image tag, so the simulator's version rules apply; then rolls every pod again with
// memgraph.com/restartedAt; then sets the tag back, a downgrade: refused until annotated, then,
// with MAIN at 3.13.0, carried out by hibernation, every pod waking at 3.12.0.
func TestRollingUpgrade(t *testing.T) {
	s := startScenario(t, "rollout")
	const name = "roll"
	s.create(name, "{dataInstances: 3}")
	mgc := s.waitConverged(name, convergeTimeout)
	s.declaredMembers(mgc, 3, 3)
	oldImage := v1alpha1.DefaultImageRepository + ":" + v1alpha1.DefaultImageTag
	newImage := v1alpha1.DefaultImageRepository + ":3.13.0"
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
	mark := s.queryMark()
	w := s.startWriter(50 * time.Millisecond)
	t.Log("image.tag 3.12.0 -> 3.13.0")
	s.patchSpec(name, `{"image":{"tag":"3.13.0"}}`)
	mgc = s.waitUpdated(name, newImage)
	w.stop()
	rec.check(t, order)
	// MAIN's pod last (Memgraph's own upgrade order): MAIN goes from the middle ordinal to the
	// lowest before any data pod is replaced, then to the lowest updated replica before the
	// lowest pod is replaced; never a newer MAIN over an older replica (assertNoMisuse).
	rec.checkMains(t, []string{name + "-data-2 under instance_0", name + "-data-1 under instance_0", name + "-data-0 under instance_1"})
	if got, want := s.promotions(mark), []string{"instance_0", "instance_1"}; !slices.Equal(got, want) {
		t.Errorf("the hook made MAINs %q during the upgrade, want %q", got, want)
	}
	if got, msgs := rec.upgradeSteps("3.13.0"); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Errorf("Updated named the upgrade's steps %q (first appearances), want 1, 2, 3; its messages:\n  %s",
			got, strings.Join(msgs, "\n  "))
	}
	s.everyPodReplaced(name, before)
	s.runAt(name, "3.13.0")
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
	if steps, _ := rec.upgradeSteps("3.13.0"); len(steps) > 0 {
		t.Errorf("a restart at the same version reported upgrade steps %q", steps)
	}
	s.everyPodReplaced(name, before)
	s.declaredMembers(mgc, 3, 3)
	s.assertNoMisuse()
	if t.Failed() {
		return
	}
	s.assertNoChurn(2)

	t.Log("image.tag back to 3.12.0: a downgrade, refused until memgraph.com/allow-downgrade")
	rec.restart()
	s.patchSpec(name, `{"image":{"tag":"3.12.0"}}`)
	s.waitStatus(name, "the downgrade was not refused", time.Minute, func(u *unstructured.Unstructured) error {
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if st, reason, msg := conditionStatus(u, string(v1alpha1.ConditionUpdated)); observed != u.GetGeneration() ||
			st != "False" || reason != string(v1alpha1.ReasonDowngradeRefused) {
			return fmt.Errorf("generation %d observed %d: Updated=%q %s: %s", u.GetGeneration(), observed, st, reason, msg)
		}
		return nil
	})
	for range 2 { // two more syncs of the refused spec
		n := s.mc.Stats().Snapshot().SyncsCompleted
		s.mc.Resync()
		s.waitSyncs(n, 1, 30*time.Second)
	}
	s.partitionsHold(name)
	if gone := rec.goneNames(); len(gone) > 0 {
		t.Errorf("pods replaced while the downgrade was refused: %v", gone)
	}
	s.assertNoMisuse()
	if t.Failed() {
		return
	}
	// Allowed, it still is not rolled while the MAIN runs 3.13.0: the replicas rolled first
	// could not replicate from it. Hibernation carries it out: every pod wakes at 3.12.0.
	s.annotate(name, topology.AnnotationAllowDowngrade, "true")
	s.waitStatus(name, "the allowed downgrade waits for hibernation", time.Minute, func(u *unstructured.Unstructured) error {
		if st, reason, msg := conditionStatus(u, string(v1alpha1.ConditionUpdated)); st != "False" ||
			reason != string(v1alpha1.ReasonDowngradeNeedsHibernation) {
			return fmt.Errorf("Updated=%q %s: %s", st, reason, msg)
		}
		return nil
	})
	s.partitionsHold(name)
	if gone := rec.goneNames(); len(gone) > 0 {
		t.Errorf("pods replaced while the allowed downgrade waited for hibernation: %v", gone)
	}
	t.Log("hibernate and wake: every pod starts at 3.12.0")
	s.kubectl("patch", "mgc", name, "--type=merge", "-p", `{"spec":{"hibernate":true}}`)
	s.kubectl("wait", "--for=condition=Hibernated", "mgc/"+name, "--timeout=180s")
	s.kubectl("patch", "mgc", name, "--type=merge", "-p", `{"spec":{"hibernate":false}}`)
	mgc = s.waitConverged(name, 3*time.Minute)
	if v := statusString(mgc, "version"); !strings.HasSuffix(v, ":3.12.0") {
		t.Errorf("status.version %q after waking from the downgrade, want the 3.12.0 image", v)
	}
	s.assertNoMisuse()
}

// promotions are the members that successful SET INSTANCE … TO MAIN queries since mark made MAIN.
func (s *scenario) promotions(mark int) []string {
	var out []string
	for _, q := range s.writesSince(mark) {
		if rest, ok := strings.CutPrefix(q.Text, "SET INSTANCE "); ok && !q.Failed {
			if member, ok := strings.CutSuffix(rest, " TO MAIN"); ok {
				out = append(out, member)
			}
		}
	}
	return out
}

// runAt checks that podsim runs every member of the 3+3 cluster at version.
func (s *scenario) runAt(cluster, version string) {
	s.t.Helper()
	net := s.network(cluster)
	var hosts []string
	for id := 1; id <= 3; id++ {
		hosts = append(hosts, net.Coordinator(id).Host)
	}
	for n := 0; n < 3; n++ {
		hosts = append(hosts, net.DataInstance(n).Host)
	}
	for _, host := range hosts {
		if got := s.pods.Version(host); got != version {
			s.t.Errorf("%s runs %q, want %q", host, got, version)
		}
	}
}

// everyPodReplaced checks that every pod of before was replaced at its StatefulSet's update
// revision and that the partitions hold every pod again.
func (s *scenario) everyPodReplaced(cluster string, before map[string]types.UID) {
	s.t.Helper()
	after := s.podUIDs(cluster)
	for pod, uid := range before {
		if after[pod] == uid {
			s.t.Errorf("%s was not replaced", pod)
		}
	}
	for _, sts := range s.partitionsHold(cluster) {
		list, err := testEnv.Client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{
			LabelSelector: metav1.FormatLabelSelector(sts.Spec.Selector)})
		if err != nil {
			s.t.Fatal(err)
		}
		for _, p := range list.Items {
			if got := p.Labels["controller-revision-hash"]; got != sts.Status.UpdateRevision {
				s.t.Errorf("%s is at revision %q, its StatefulSet's update revision is %q", p.Name, got, sts.Status.UpdateRevision)
			}
		}
	}
}

// partitionsHold checks that both StatefulSets' partitions hold every pod (no pod released) and
// returns the sets.
func (s *scenario) partitionsHold(cluster string) []*appsv1.StatefulSet {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var sets []*appsv1.StatefulSet
	for _, set := range []string{topology.CoordinatorSetName(cluster), topology.DataSetName(cluster)} {
		sts, err := testEnv.Client.AppsV1().StatefulSets(s.ns).Get(ctx, set, metav1.GetOptions{})
		if err != nil {
			s.t.Fatal(err)
		}
		if p := sts.Spec.UpdateStrategy.RollingUpdate; p == nil || p.Partition == nil || *p.Partition != *sts.Spec.Replicas {
			s.t.Errorf("%s: partition %v, want %d (every pod held)", set, p, *sts.Spec.Replicas)
		}
		sets = append(sets, sts)
	}
	return sets
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

//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// rwWatch polls, every few milliseconds, the -rw Service's selector, the ready endpoints of its
// EndpointSlices, the simulator's query log and Raft's MAIN, and stamps when each first shows
// what a handover should lead to.
type rwWatch struct {
	s       *scenario
	cluster string
	stop    chan struct{}
	done    sync.WaitGroup

	mu                                    sync.Mutex
	start, set, main, selector, endpoints time.Time
	polls                                 int
	elsewhere                             time.Duration // how long -rw's ready endpoints were a pod other than the new MAIN's, after MAIN moved
	elsewhereSince                        time.Time
}

// watchHandover starts watching for MAIN moving to pod newMain: the coordinators' SET of it
// (setText, "" for a failover, which Memgraph runs itself), Raft reporting it MAIN, the -rw
// selector naming its pod, and -rw's endpoints being its pod alone.
func (s *scenario) watchHandover(cluster, newMain, setText string) *rwWatch {
	w := &rwWatch{s: s, cluster: cluster, stop: make(chan struct{}), start: time.Now()}
	ord, _ := topology.ParseDataInstanceName(newMain)
	pod := fmt.Sprintf("%s-%d", topology.DataSetName(cluster), ord)
	mark := s.queryMark()
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			now := time.Now()
			stamp := func(t *time.Time, ok bool) {
				w.mu.Lock()
				defer w.mu.Unlock()
				if ok && t.IsZero() {
					*t = now
				}
			}
			if setText != "" {
				stamp(&w.set, hasQuery(s.world.Queries()[mark:], setText))
			}
			stamp(&w.main, s.currentMain() == newMain)
			sel, eps := rwState(s.ns, cluster)
			stamp(&w.selector, sel == pod)
			stamp(&w.endpoints, slices.Equal(eps, []string{pod}))
			w.mu.Lock()
			w.polls++
			moved := !w.main.IsZero() || !w.set.IsZero()
			wrong := moved && w.endpoints.IsZero() && len(eps) > 0
			switch {
			case wrong && w.elsewhereSince.IsZero():
				w.elsewhereSince = now
			case !wrong && !w.elsewhereSince.IsZero():
				w.elsewhere += now.Sub(w.elsewhereSince)
				w.elsewhereSince = time.Time{}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// finish stops the watch and returns the stamps as offsets from the moment MAIN moved (the SET,
// or Raft's new MAIN for a failover).
func (w *rwWatch) finish(t *testing.T, what string) {
	t.Helper()
	close(w.stop)
	w.done.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	moved := w.set
	if moved.IsZero() {
		moved = w.main
	}
	if moved.IsZero() || w.selector.IsZero() || w.endpoints.IsZero() {
		t.Errorf("%s: MAIN moved at %v, the -rw selector at %v, its endpoints at %v (zero: never seen)", what, moved, w.selector, w.endpoints)
		return
	}
	period := time.Since(w.start) / time.Duration(max(w.polls, 1))
	t.Logf("%s: MAIN moved %s after the start; -rw selector moved %s after that, its endpoints %s after that "+
		"(each ±%s, the poll period); ready endpoints on a pod other than the new MAIN's for %s",
		what, moved.Sub(w.start).Round(time.Millisecond), w.selector.Sub(moved).Round(time.Millisecond),
		w.endpoints.Sub(moved).Round(time.Millisecond), period.Round(100*time.Microsecond), w.elsewhere.Round(time.Millisecond))
}

// currentMain is the MAIN Raft's leader reports, "" when none.
func (s *scenario) currentMain() string {
	for _, c := range s.world.Raft().Clusters {
		if c.Main != "" {
			return c.Main
		}
	}
	return ""
}

// rwState is the pod the -rw Service selects and the pods of its ready endpoints, sorted.
func rwState(ns, cluster string) (selected string, ready []string) {
	svc, ready := serviceState(ns, topology.WriteServiceName(cluster))
	if svc == nil {
		return "", nil
	}
	return svc.Spec.Selector[topology.LabelPodName], ready
}

// serviceState is Service name of ns (nil when it cannot be read) and the pods of its ready
// endpoints, sorted.
func serviceState(ns, name string) (*corev1.Service, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	svc, err := testEnv.Client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil
	}
	list, err := testEnv.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return svc, nil
	}
	var ready []string
	for _, sl := range list.Items {
		for _, ep := range sl.Endpoints {
			if ep.TargetRef != nil && ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				ready = append(ready, ep.TargetRef.Name)
			}
		}
	}
	slices.Sort(ready)
	return svc, ready
}

// TestWriteServiceFollowsTheMain: the -rw Service's endpoints are the MAIN's pod alone, and
// follow MAIN through a planned switchover (spec.preferredMain) and through Memgraph's own
// failover after the MAIN's pod is deleted. It logs each window: from the SET (or Raft's new
// MAIN) to the Service's selector and to its endpoints.
func TestWriteServiceFollowsTheMain(t *testing.T) {
	const name = "rw"
	s := startScenario(t, "write-service")
	s.create(name, "dataInstances: 3")
	mgc := s.waitConverged(name, convergeTimeout)
	s.declaredMembers(mgc, 3, 3)
	first := statusString(mgc, "main")
	s.waitFor(time.Minute, func() error {
		pod := mainPodOf(t, name, mgc)
		if sel, eps := rwState(s.ns, name); sel != pod || !slices.Equal(eps, []string{pod}) {
			return fmt.Errorf("-rw selects %q with ready endpoints %v, want %s alone", sel, eps, pod)
		}
		return nil
	})
	// The EndpointSlice controller publishes a pod's readiness after the pod reports it, so
	// -ro reaches all three data pods within a short wait of the cluster converging.
	s.waitFor(time.Minute, func() error {
		if sel, eps := roState(s.ns, name); len(eps) != 3 || sel {
			return fmt.Errorf("-ro's ready endpoints %v (selects one pod: %t), want all 3 data pods", eps, sel)
		}
		return nil
	})

	target := "instance_2"
	if first == target {
		target = "instance_1"
	}
	t.Logf("switchover from %s to %s", first, target)
	w := s.watchHandover(name, target, "SET INSTANCE "+target+" TO MAIN")
	s.patchSpec(name, fmt.Sprintf(`{"preferredMain":%q}`, target))
	s.waitConverged(name, convergeTimeout)
	s.waitFor(time.Minute, func() error {
		if w.stamped() {
			return nil
		}
		return fmt.Errorf("-rw has not followed the MAIN to %s", target)
	})
	w.finish(t, "switchover")

	t.Log("the MAIN's pod deleted, its node cordoned: Memgraph fails over")
	s.patchSpec(name, `{"preferredMain":null}`)
	s.waitConverged(name, convergeTimeout)
	old := s.raft().Main
	ord, _ := topology.ParseDataInstanceName(old)
	d := s.network(name).DataInstance(ord)
	cordon(t, true)
	t.Cleanup(func() { cordon(t, false) })
	started := time.Now()
	uid := s.deletePod(d.Pod)
	var failedOver string
	s.waitFor(convergeTimeout, func() error {
		if failedOver = s.currentMain(); failedOver == "" || failedOver == old {
			return fmt.Errorf("MAIN %q", failedOver)
		}
		return nil
	})
	t.Logf("Memgraph failed over from %s to %s %s after the pod's deletion", old, failedOver, time.Since(started).Round(time.Millisecond))
	w = s.watchHandover(name, failedOver, "")
	cordon(t, false)
	s.waitPodReplaced(d.Pod, uid, d.Host)
	s.waitFor(convergeTimeout, func() error {
		if w.stamped() {
			return nil
		}
		return fmt.Errorf("-rw has not followed the MAIN to %s", failedOver)
	})
	w.finish(t, "failover (the hook reads the cluster once every pod is Ready again)")
	s.assertNoMisuse()
}

// stamped reports whether the selector and the endpoints have both followed.
func (w *rwWatch) stamped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.selector.IsZero() && !w.endpoints.IsZero()
}

// roState is whether -ro selects a single pod, and the pods of its ready endpoints, sorted.
func roState(ns, cluster string) (single bool, ready []string) {
	svc, ready := serviceState(ns, topology.ReadServiceName(cluster))
	if svc == nil {
		return false, nil
	}
	_, single = svc.Spec.Selector[topology.LabelPodName]
	return single, ready
}

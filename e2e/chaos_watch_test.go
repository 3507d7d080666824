//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const chaosDB = "memgraph"

// group is the soak's led Raft group, false when there is none or several.
func (c *chaos) group() (sim.ClusterSnapshot, bool) {
	var led []sim.ClusterSnapshot
	for _, g := range c.s.world.Raft().Clusters {
		if g.Leader != 0 && len(g.Members) > 1 {
			led = append(led, g)
		}
	}
	if len(led) != 1 {
		return sim.ClusterSnapshot{}, false
	}
	return led[0], true
}

// chaosWatch checks the invariants while the soak runs: every pod deletion (from a watch, so
// none is missed) against who is MAIN and leader at that moment, and the simulator's record of
// refused queries.
type chaosWatch struct {
	c       *chaos
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	broken  []string
	checked atomic.Int64
}

func startChaosWatch(s *scenario, c *chaos) *chaosWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &chaosWatch{c: c, cancel: cancel}
	w.wg.Add(2)
	go func() { defer w.wg.Done(); w.watchPods(ctx, s.ns) }()
	go func() {
		defer w.wg.Done()
		for ctx.Err() == nil {
			if m := s.world.Misuses(); len(m) > 0 {
				w.violate(fmt.Sprintf("the simulator recorded queries Memgraph refuses: %+v", m))
				return
			}
			w.checked.Add(1)
			time.Sleep(200 * time.Millisecond)
		}
	}()
	return w
}

// watchPods follows the namespace's pods, watching again whenever the watch ends (an API server
// restart ends it).
func (w *chaosWatch) watchPods(ctx context.Context, ns string) {
	for ctx.Err() == nil {
		wi, err := testEnv.Client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for ev := range wi.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && (ev.Type == watch.Deleted || pod.DeletionTimestamp != nil) {
				w.podGoing(pod.Name)
			}
		}
		wi.Stop()
	}
}

// podGoing checks a pod on its way out: not the MAIN's or the leader's unless the soak deleted it
// or the cluster hibernates.
func (w *chaosWatch) podGoing(pod string) {
	w.checked.Add(1)
	c := w.c
	c.mu.Lock()
	killedAt, killed := c.killed[pod]
	hibernating := c.hibernated || time.Since(c.hibernateChanged) < time.Minute
	c.mu.Unlock()
	if (killed && time.Since(killedAt) < 30*time.Second) || hibernating {
		return
	}
	g, ok := c.group()
	if !ok {
		return
	}
	if g.Main != "" && pod == dataPodOf(chaosName, g.Main) {
		w.violate(fmt.Sprintf("pod %s of the MAIN %s is going while it is MAIN", pod, g.Main))
	}
	if pod == fmt.Sprintf("%s-%d", topology.CoordinatorSetName(chaosName), g.Leader) {
		w.violate(fmt.Sprintf("pod %s of the leader coordinator_%d is going while it leads", pod, g.Leader))
	}
}

func (w *chaosWatch) violate(what string) {
	w.c.note("INVARIANT BROKEN: %s", what)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.broken = append(w.broken, what)
}

func (w *chaosWatch) samples() int64 { return w.checked.Load() }

func (w *chaosWatch) stop() {
	w.cancel()
	w.wg.Wait()
}

func (w *chaosWatch) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.broken {
		t.Error(b)
	}
}

// checkEnd checks what must hold once the cluster has converged: the MAIN holds every write the
// writer saw acknowledged, every declared pod has its PVCs, and the hook answered no call with a
// 5xx.
func (c *chaos) checkEnd(t *testing.T, acked int64) {
	t.Helper()
	c.s.assertNoMisuse()
	g, ok := c.group()
	if !ok {
		t.Fatal("no single led Raft group after convergence")
	}
	for _, d := range g.Data {
		if d.Name == g.Main && d.Committed[chaosDB] < c.s.world.Acknowledged(chaosDB) {
			t.Errorf("MAIN %s holds %d transactions, %d writes were acknowledged: acknowledged writes lost",
				d.Name, d.Committed[chaosDB], c.s.world.Acknowledged(chaosDB))
		}
	}
	if acked == 0 {
		t.Error("the writer had no write acknowledged: the soak proved nothing about writes")
	}
	c.checkClaims(t)
	for _, call := range c.s.mc.Stats().Snapshot().HookFailures(c.started) {
		if call.Status >= 500 {
			t.Errorf("the hook answered %d: %+v", call.Status, call)
		}
	}
}

// checkClaims checks that each declared pod has its PersistentVolumeClaims.
func (c *chaos) checkClaims(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := testEnv.Client.CoreV1().PersistentVolumeClaims(c.s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, pvc := range list.Items {
		have[pvc.Name] = true
	}
	var pods []string
	for id := 1; id <= c.coordinators; id++ {
		pods = append(pods, fmt.Sprintf("%s-%d", topology.CoordinatorSetName(chaosName), id))
	}
	for ordinal := range c.data {
		pods = append(pods, fmt.Sprintf("%s-%d", topology.DataSetName(chaosName), ordinal))
	}
	for _, pod := range pods {
		for _, volume := range []string{"lib-storage", "log-storage"} {
			if !have[volume+"-"+pod] {
				t.Errorf("PVC %s-%s of declared pod %s is missing (have %s)", volume, pod, pod, strings.Join(slices.Sorted(maps.Keys(have)), ", "))
			}
		}
	}
}

// chaosWriter writes to whatever MAIN the simulator has, every 20 ms, as a client would.
type chaosWriter struct {
	cancel       context.CancelFunc
	done         chan struct{}
	acked, error atomic.Int64
}

func startChaosWriter(s *scenario) *chaosWriter {
	ctx, cancel := context.WithCancel(context.Background())
	w := &chaosWriter{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			if err := s.world.Write(chaosDB); err != nil {
				w.error.Add(1)
			} else {
				w.acked.Add(1)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return w
}

func (w *chaosWriter) stop() (acked, failed int64) {
	w.cancel()
	<-w.done
	return w.acked.Load(), w.error.Load()
}

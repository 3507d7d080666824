package planner

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// A whole rollout, sync after sync, against a model of the StatefulSet controller and of the
// coordinators: every placement of MAIN and of the leader, and both ways Raft may pick a
// successor. The model controller replaces, per set, the highest pod at or above the partition
// that is not at the update revision, only while no pod of the set is down (maxUnavailable 1), and
// a replaced pod is back (Ready, up, caught up) one sync later.

type walkPod struct {
	updated, down bool
}

type walk struct {
	t            *testing.T
	data, coords []walkPod
	main, leader int // data index; coordinator index (id - 1)
	// successor picks the new leader after a yield among the other coordinators.
	successor func(others []int) int
	replaced  []string
	moves     int // MAIN handovers
	now       time.Time
	// upgrade: the old revision runs Memgraph 3.12.0 and the new one 3.13.0 (else the images
	// carry no version and no version rule applies).
	upgrade bool
}

// image is the image of a pod at the old or the new revision.
func (w *walk) image(updated bool) string {
	switch {
	case !w.upgrade && updated:
		return revNew
	case !w.upgrade:
		return revOld
	case updated:
		return mg313
	}
	return mg312
}

func (w *walk) input() RolloutInput {
	rolloutSet := func(pods []walkPod) RolloutSet {
		s := RolloutSet{Exists: true, UpdateRevision: revNew, CurrentRevision: revOld,
			Generation: 2, ObservedGeneration: 2, Span: int32(len(pods))}
		all := true
		for i, p := range pods {
			rev := revOld
			if p.updated {
				rev = revNew
			}
			all = all && p.updated && !p.down
			s.Pods = append(s.Pods, RolloutPod{Index: i, Revision: rev, Ready: !p.down, Created: metav1.NewTime(w.now), Image: w.image(p.updated)})
		}
		if all {
			s.CurrentRevision = revNew
		}
		return s
	}
	o := &Observed{Leader: coordName(w.leader + 1)}
	for i, p := range w.coords {
		row := coord(i+1, memgraph.RoleFollower)
		if i == w.leader {
			row.Role = memgraph.RoleLeader
		}
		if p.down {
			row.Health = memgraph.HealthDown
		}
		o.Instances = append(o.Instances, row)
	}
	behind := map[string]int64{}
	for i, p := range w.data {
		row := replica(i)
		switch {
		case p.down:
			row = downRow(i)
		case i == w.main:
			row = mainRow(i)
		}
		o.Instances = append(o.Instances, row)
		if !p.down {
			behind[dataName(i)] = 0
		}
	}
	o.Lag = lag(10, behind)
	*o = reported(*o)
	in := rolloutIn(rolloutSet(w.coords), rolloutSet(w.data), o)
	in.Now = metav1.NewTime(w.now)
	in.Image = w.image(true)
	return in
}

// sync runs one PlanRollout and applies what it asks for, then lets the model controller act.
func (w *walk) sync() RolloutStep {
	step := PlanRollout(w.input())
	for _, cmd := range step.Commands() {
		switch c := cmd.(type) {
		case Handover:
			w.checkVersions(c)
			w.main, _ = ParseDataIndex(c.To)
			w.moves++
		case YieldLeadership:
			var others []int
			for i := range w.coords {
				if i != w.leader && !w.coords[i].down {
					others = append(others, i)
				}
			}
			w.leader = w.successor(others)
		}
	}
	// Replaced pods come back, then the controller replaces at most one more per set.
	for _, pods := range [][]walkPod{w.data, w.coords} {
		for i := range pods {
			pods[i].down = false
		}
	}
	// A single data instance has no survivor to take MAIN: it alone is replaced in place.
	w.control("data", w.data, step.Partitions.DataInstances, func(i int) bool { return i == w.main && len(w.data) > 1 })
	w.control("coordinator", w.coords, step.Partitions.Coordinators, func(i int) bool { return i == w.leader })
	w.now = w.now.Add(time.Second)
	return step
}

// checkVersions: an upgrade never makes a MAIN newer than another data pod that runs, the old
// MAIN excepted when its pod is the only one left to replace.
func (w *walk) checkVersions(h Handover) {
	to, _ := ParseDataIndex(h.To)
	from, _ := ParseDataIndex(h.From)
	if !w.upgrade || !w.data[to].updated {
		return
	}
	for i, p := range w.data {
		lastOld := i == from && slices.IndexFunc(w.data, func(q walkPod) bool { return !q.updated }) == from &&
			slices.IndexFunc(w.data[from+1:], func(q walkPod) bool { return !q.updated }) < 0
		if i != to && !p.updated && !p.down && !lastOld {
			w.t.Fatalf("%s: a newer MAIN while instance_%d runs the older version (replaced so far %v)", h, i, w.replaced)
		}
	}
}

func (w *walk) control(role string, pods []walkPod, partition int32, special func(int) bool) {
	for i := len(pods) - 1; i >= int(partition); i-- {
		if pods[i].updated {
			continue
		}
		if special(i) {
			w.t.Fatalf("the %s pod %d was released while it is MAIN or leader (replaced so far %v)", role, i, w.replaced)
		}
		pods[i] = walkPod{updated: true, down: true}
		w.replaced = append(w.replaced, fmt.Sprintf("%s-%d", role, i))
		return
	}
}

// ParseDataIndex is the index of instance_<n> for the walk (data ordinals start at 0).
func ParseDataIndex(name string) (int, bool) {
	var n int
	_, err := fmt.Sscanf(name, "instance_%d", &n)
	return n, err == nil
}

func TestRolloutWalksEveryPlacementSafely(t *testing.T) {
	successors := map[string]func([]int) int{
		"lowest":  func(o []int) int { return slices.Min(o) },
		"highest": func(o []int) int { return slices.Max(o) },
	}
	for _, upgrade := range []bool{false, true} {
		for _, dataCount := range []int{1, 3} {
			for main := 0; main < dataCount; main++ {
				for leader := 0; leader < 3; leader++ {
					for succName, succ := range successors {
						name := fmt.Sprintf("upgrade %v, %d data, MAIN instance_%d, leader coordinator_%d, successor %s", upgrade,
							dataCount, main, leader+1, succName)
						t.Run(name, func(t *testing.T) {
							w := &walk{t: t, data: make([]walkPod, dataCount), coords: make([]walkPod, 3),
								main: main, leader: leader, successor: succ, now: rolloutStart, upgrade: upgrade}
							for n := 0; ; n++ {
								if n > 40 {
									t.Fatalf("not done after %d syncs; replaced %v", n, w.replaced)
								}
								down := 0
								for _, p := range append(append([]walkPod{}, w.data...), w.coords...) {
									if p.down {
										down++
									}
								}
								if down > 1 {
									t.Fatalf("%d pods down at once; replaced %v", down, w.replaced)
								}
								if step := w.sync(); step.Done() {
									break
								}
							}
							var want []string
							for i := dataCount - 1; i >= 0; i-- {
								want = append(want, fmt.Sprintf("data-%d", i))
							}
							want = append(want, "coordinator-2", "coordinator-1", "coordinator-0")
							if diff := cmp.Diff(want, w.replaced); diff != "" {
								t.Errorf("replacement order (-want +got):\n%s", diff)
							}
							// MAIN moves once, onto a replaced pod; starting on the highest ordinal it must
							// move before any pod is replaced, and once more later. An upgrade moves it
							// to the lowest ordinal first (unless it is there), then onto a replaced pod.
							maxMoves := 1
							if main == dataCount-1 && dataCount > 1 || upgrade && main > 0 {
								maxMoves = 2
							}
							if dataCount == 1 {
								maxMoves = 0
							}
							if w.moves > maxMoves {
								t.Errorf("MAIN moved %d times, want at most %d", w.moves, maxMoves)
							}
						})
					}
				}
			}
		}
	}
}

package planner_test

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The workloads FuzzPlan's observations come with: both StatefulSets at any point of a rollout
// (or of none), their pods at any revision, Ready or not, terminating or missing, created
// before or after the step timeout. Choice 0 is a settled set whose pods all run its update
// revision, so an input that ends before them is a cluster at rest.

const (
	revUpdate     = "rev-update"  // status.updateRevision
	revCurrent    = "rev-current" // status.currentRevision while rolling
	revSuperseded = "rev-gone"    // a revision a rollback left behind
	// The spec's image, and the versions old pods run: mostly older (an upgrade), now and then
	// newer (a downgrade), before 3.9 (a migration), or of unknown version.
	fuzzImage   = "memgraph/memgraph:3.13.0"
	imageOlder  = "memgraph/memgraph:3.12.0"
	imageNewer  = "memgraph/memgraph:3.14.0"
	imagePre39  = "memgraph/memgraph:3.8.0"
	imageCustom = "memgraph/memgraph:latest"
)

var fuzzNow = metav1.NewTime(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))

func workloads(r *byteReader, declared, span topology.Replicas) *planner.Workloads {
	return &planner.Workloads{
		Coordinators: rolloutSet(r, max(declared.Coordinators, span.Coordinators), span.Coordinators),
		Data:         rolloutSet(r, max(declared.DataInstances, span.DataInstances), span.DataInstances),
		Now:          fuzzNow,
		StepTimeout:  metav1.Duration{Duration: 10 * time.Minute},
		Image:        fuzzImage,
	}
}

// rolloutSet has pods at indices below size, and now and then one past it (a pod a scale-down
// has not removed yet); Span is, as the hook derives it, the larger of the cached replicas and
// one past the highest pod.
func rolloutSet(r *byteReader, size, cached int32) planner.RolloutSet {
	if r.next(10) == 9 {
		return planner.RolloutSet{Span: cached}
	}
	s := planner.RolloutSet{Exists: true, UpdateRevision: revUpdate, CurrentRevision: revUpdate,
		Generation: 4, ObservedGeneration: 4, Span: cached}
	switch r.next(8) {
	case 1, 2, 3:
		s.CurrentRevision = revCurrent // rolling
	case 4:
		s.TemplateChanging = true
	case 5:
		s.ObservedGeneration = 3 // the controller has not seen the latest generation
	case 6:
		s.TemplateGeneration, s.Generation, s.ObservedGeneration = 4, 5, 4 // only the partition moved
	case 7:
		s.UpdateRevision = pick(r, "", revCurrent) // unknown, or a rollback to the current revision
	}
	n := size
	if r.next(4) == 3 {
		n++
	}
	for i := range n {
		pod, ok := rolloutPod(r, int(i), s.UpdateRevision)
		if ok {
			s.Pods = append(s.Pods, pod)
			s.Span = max(s.Span, i+1)
		}
	}
	return s
}

func rolloutPod(r *byteReader, index int, update string) (planner.RolloutPod, bool) {
	pod := planner.RolloutPod{Index: index, Revision: update, Ready: true, Image: fuzzImage,
		Created: metav1.NewTime(fuzzNow.Add(-pick(r, time.Minute, 30*time.Minute)))}
	switch r.next(13) {
	case 1, 2:
		pod.Revision, pod.Image = revCurrent, imageOlder
	case 3:
		pod.Revision, pod.Image, pod.Ready = revCurrent, imageOlder, false
	case 4:
		pod.Ready = false
	case 5:
		pod.Terminating = true
		pod.Revision = pick(r, revCurrent, update)
	case 6:
		pod.Revision, pod.Image, pod.Ready = revSuperseded, "memgraph:broken", r.next(2) == 0
	case 7:
		pod.Revision = ""
	case 8, 9:
		return pod, false
	case 10:
		pod.Revision, pod.Image = revCurrent, imageNewer
	case 11:
		pod.Revision, pod.Image = revCurrent, imagePre39
	case 12:
		pod.Revision, pod.Image = revCurrent, imageCustom
	}
	return pod, true
}

// The rollout seeds' choices: restPrefix is the converged seed's up to the workloads (3+2, every
// member present, lag caught up) with the leader coordinator_<leader+1> and MAIN instance_<main>;
// a set follows as settledSet or rollingSet.
func restPrefix(leader, main byte) []byte {
	b := make([]byte, 50)
	b[5], b[23] = leader, main
	return b
}

func settledSet(pods int) []byte { return make([]byte, 3+2*pods) }

// rollingSet: pods by index, 'n' Ready at the update revision, 'o' Ready at the current one.
func rollingSet(pods string) []byte {
	b := []byte{0, 1, 0}
	for _, p := range pods {
		b = append(b, 0, map[rune]byte{'n': 0, 'o': 1}[p])
	}
	return b
}

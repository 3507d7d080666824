package planner

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Rollout fixtures describe the cluster "mg" of the planner fixtures in the middle of a rollout
// from revision revOld (image imageOld) to revNew (imageNew). A role's pods are written as one
// character each, index 0 first:
//
//	o  at the old revision, Ready          n  at the new revision, Ready
//	x  at the old revision, not Ready      y  at the new revision, not Ready
//	t  at the old revision, terminating    -  missing (not created yet)
//
// Every pod was created at rolloutStart, and the sync runs a minute later unless a case says
// otherwise; spec.rollout.stepTimeout is the default 10 minutes.
//
// The two images run the same Memgraph version (a mirror of the same release): these fixtures
// roll any pod-template change, to which no version rule applies. Upgrades, downgrades and the
// 3.9 boundary have their own (rollout_versions_test.go).

const (
	revOld   = "mg-data-5c6d7f"
	revNew   = "mg-data-7f8e9a"
	imageOld = "docker.io/memgraph/memgraph:3.12.0"
	imageNew = "registry.example/mirror/memgraph:3.12.0"
)

var (
	rolloutStart = time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	stepTimeout  = 10 * time.Minute
)

// set is a StatefulSet rolling from revOld to revNew (the controller has not completed the
// update) with the pods described by states; Span counts the pods' indices.
func set(states string, opts ...func(*RolloutSet)) RolloutSet {
	s := RolloutSet{
		Exists: true, UpdateRevision: revNew, CurrentRevision: revOld,
		Generation: 4, ObservedGeneration: 4, Span: int32(len(states)),
	}
	for i, st := range states {
		pod := RolloutPod{Index: i, Created: metav1.NewTime(rolloutStart), Revision: revOld, Image: imageOld}
		switch st {
		case '-':
			continue
		case 'n', 'y':
			pod.Revision, pod.Image = revNew, imageNew
		case 't':
			pod.Terminating = true
		}
		pod.Ready = st == 'o' || st == 'n'
		s.Pods = append(s.Pods, pod)
	}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// settled: the StatefulSet controller completed the update (currentRevision = updateRevision).
func settled(s *RolloutSet) { s.CurrentRevision = s.UpdateRevision }

// changing: the children returned this sync change the pod template.
func changing(s *RolloutSet) { s.TemplateChanging = true }

// unobserved: the controller has not observed the generation the template arrived with.
func unobserved(s *RolloutSet) { s.ObservedGeneration = s.Generation - 1 }

// partitionMoved: the latest generation changed only the partition (or the replicas): the
// template arrived a generation earlier, which the controller observed.
func partitionMoved(s *RolloutSet) {
	s.TemplateGeneration, s.Generation, s.ObservedGeneration = s.Generation, s.Generation+1, s.Generation
}

// reverted: the spec went back to revOld: the update revision is revOld again, which the
// controller also still reports as current, and the pods already at revNew are outdated.
func reverted(s *RolloutSet) { s.UpdateRevision, s.CurrentRevision = revOld, revOld }

// podRevision puts pod index i at another revision.
func podRevision(i int, revision string) func(*RolloutSet) {
	return func(s *RolloutSet) {
		for k := range s.Pods {
			if s.Pods[k].Index == i {
				s.Pods[k].Revision = revision
			}
		}
	}
}

// createdAt moves pod index i's creation.
func createdAt(i int, at time.Time) func(*RolloutSet) {
	return func(s *RolloutSet) {
		for k := range s.Pods {
			if s.Pods[k].Index == i {
				s.Pods[k].Created = metav1.NewTime(at)
			}
		}
	}
}

// clusterView is the leader's SHOW INSTANCES: coordinators 1..n led by leader, data instances 0..m-1
// up, MAIN at mainAt (-1: none), every replica caught up on database memgraph.
func clusterView(n, leader, m, mainAt int, edits ...func(*Observed)) *Observed {
	o := &Observed{Leader: coordName(leader)}
	o.Instances = coords(n, leader)
	behind := map[string]int64{}
	for i := 0; i < m; i++ {
		if i == mainAt {
			o.Instances = append(o.Instances, mainRow(i))
		} else {
			o.Instances = append(o.Instances, replica(i))
		}
		behind[dataName(i)] = 0
	}
	o.Lag = lag(42, behind)
	for _, e := range edits {
		e(o)
	}
	*o = reported(*o)
	return o
}

// behindBy makes instance n lag on database memgraph.
func behindBy(n int, txns int64) func(*Observed) {
	return func(o *Observed) {
		for i := range o.Lag {
			if o.Lag[i].Instance == dataName(n) {
				o.Lag[i].Databases["memgraph"] = memgraph.DatabaseLag{CommittedTxns: 42 - txns, TxnsBehindMain: txns}
			}
		}
	}
}

// rowHealth sets a member's health in the leader's view.
func rowHealth(name, health string) func(*Observed) {
	return func(o *Observed) {
		for i := range o.Instances {
			if o.Instances[i].Name == name {
				o.Instances[i].Health = health
			}
		}
	}
}

// rolloutIn is the input of a sync for these sets and this view that declares and returns as
// many members as each set has pods.
func rolloutIn(coordinators, data RolloutSet, o *Observed) RolloutInput {
	dc, dd := coordinators.Span, data.Span
	return RolloutInput{
		Declared: declared(dc, dd, dc, dd),
		Replicas: replicas(dc, dd),
		Workloads: Workloads{
			Coordinators: coordinators,
			Data:         data,
			Now:          metav1.NewTime(rolloutStart.Add(time.Minute)),
			StepTimeout:  metav1.Duration{Duration: stepTimeout},
			Image:        imageNew,
		},
		Cluster: o,
	}
}

// declaring overrides the declared counts and the returned replicas of an input.
func declaring(in RolloutInput, coordinators, data int32, returned topology.Replicas) RolloutInput {
	in.Declared = declared(coordinators, data, in.Coordinators.Span, in.Data.Span)
	in.Replicas = returned
	return in
}

func at(in RolloutInput, now time.Time) RolloutInput {
	in.Now = metav1.NewTime(now)
	return in
}

func partitions(coordinators, data int32) topology.Partitions {
	return topology.Partitions{Coordinators: coordinators, DataInstances: data}
}

// rowRole sets a member's role in the leader's view.
func rowRole(name, role string) func(*Observed) {
	return func(o *Observed) {
		for i := range o.Instances {
			if o.Instances[i].Name == name {
				o.Instances[i].Role = role
			}
		}
	}
}

package topology

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// Named pods, each as the kubelet or the scheduler reports it.

func readyPod(name string) PodObservation {
	return PodObservation{Name: name, Ready: true, Scheduled: PodCondition{Status: corev1.ConditionTrue},
		Containers: []ContainerObservation{{Name: "memgraph"}}}
}

// licenseMissing: the Secret the license env names does not exist.
func licenseMissing(name string) PodObservation {
	return PodObservation{Name: name, Scheduled: PodCondition{Status: corev1.ConditionTrue},
		Containers: []ContainerObservation{{Name: "memgraph", WaitingReason: "CreateContainerConfigError",
			WaitingMessage: `secret "memgraph-secrets" not found`}}}
}

func imagePullBackOff(name string) PodObservation {
	return PodObservation{Name: name, Scheduled: PodCondition{Status: corev1.ConditionTrue},
		Containers: []ContainerObservation{{Name: "memgraph", WaitingReason: "ImagePullBackOff",
			WaitingMessage: `Back-off pulling image "memgraph/memgraph:3.99.0"`}}}
}

func errImagePull(name string) PodObservation {
	return PodObservation{Name: name, Scheduled: PodCondition{Status: corev1.ConditionTrue},
		Containers: []ContainerObservation{{Name: "memgraph", WaitingReason: "ErrImagePull",
			WaitingMessage: `rpc error: code = NotFound desc = failed to pull and unpack image "memgraph/memgraph:3.99.0"`}}}
}

func crashLooping(name string) PodObservation {
	return PodObservation{Name: name, Scheduled: PodCondition{Status: corev1.ConditionTrue},
		Containers: []ContainerObservation{{Name: "memgraph", WaitingReason: "CrashLoopBackOff", RestartCount: 7,
			WaitingMessage: "back-off 5m0s restarting failed container=memgraph pod=" + name + "_default"}}}
}

// pvcPending: the scheduler cannot place the pod because its volume claim is not bound.
func pvcPending(name string) PodObservation {
	return PodObservation{Name: name, Scheduled: PodCondition{Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."}}
}

// starting: a pod on its way up, which is no problem.
func starting(name string) PodObservation {
	return PodObservation{Name: name, Scheduled: PodCondition{Status: corev1.ConditionTrue},
		Containers: []ContainerObservation{{Name: "memgraph", WaitingReason: "ContainerCreating"}}}
}

func TestPodProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		pods []PodObservation
		want []PodProblem
	}{
		{name: "no pods"},
		{name: "ready and starting pods have no problem", pods: []PodObservation{readyPod("mg-data-0"), starting("mg-data-1"), {Name: "mg-data-2"}}},
		{name: "a missing license Secret", pods: []PodObservation{licenseMissing("mg-data-0")}, want: []PodProblem{
			{Pod: "mg-data-0", Container: "memgraph", Reason: "CreateContainerConfigError", Message: `secret "memgraph-secrets" not found`},
		}},
		{name: "image pull back-off", pods: []PodObservation{imagePullBackOff("mg-coordinator-1")}, want: []PodProblem{
			{Pod: "mg-coordinator-1", Container: "memgraph", Reason: "ImagePullBackOff", Message: `Back-off pulling image "memgraph/memgraph:3.99.0"`},
		}},
		{name: "image pull error", pods: []PodObservation{errImagePull("mg-coordinator-1")}, want: []PodProblem{
			{Pod: "mg-coordinator-1", Container: "memgraph", Reason: "ErrImagePull",
				Message: `rpc error: code = NotFound desc = failed to pull and unpack image "memgraph/memgraph:3.99.0"`},
		}},
		{name: "a crash loop says how often it restarted", pods: []PodObservation{crashLooping("mg-data-1")}, want: []PodProblem{
			{Pod: "mg-data-1", Container: "memgraph", Reason: "CrashLoopBackOff",
				Message: "restarted 7 times: back-off 5m0s restarting failed container=memgraph pod=mg-data-1_default"},
		}},
		{name: "an unbound volume claim leaves the pod unschedulable", pods: []PodObservation{pvcPending("mg-data-2")}, want: []PodProblem{
			{Pod: "mg-data-2", Reason: "Unschedulable", Message: pvcPending("").Scheduled.Message},
		}},
		{name: "a Ready pod whose container restarted is no problem", pods: []PodObservation{func() PodObservation {
			p := crashLooping("mg-data-0")
			p.Ready = true
			return p
		}()}},
		{name: "sorted by pod, the pod's own problem before its containers'",
			pods: []PodObservation{crashLooping("mg-data-1"), licenseMissing("mg-coordinator-3"), func() PodObservation {
				p := pvcPending("mg-data-0")
				p.Containers = []ContainerObservation{{Name: "memgraph", WaitingReason: "ErrImagePull", WaitingMessage: "not found"}}
				return p
			}(), readyPod("mg-coordinator-1")},
			want: []PodProblem{
				{Pod: "mg-coordinator-3", Container: "memgraph", Reason: "CreateContainerConfigError", Message: `secret "memgraph-secrets" not found`},
				{Pod: "mg-data-0", Reason: "Unschedulable", Message: pvcPending("").Scheduled.Message},
				{Pod: "mg-data-0", Container: "memgraph", Reason: "ErrImagePull", Message: "not found"},
				{Pod: "mg-data-1", Container: "memgraph", Reason: "CrashLoopBackOff",
					Message: "restarted 7 times: back-off 5m0s restarting failed container=memgraph pod=mg-data-1_default"},
			}},
		{name: "a long message is bounded in runes", pods: []PodObservation{{Name: "mg-data-0",
			Containers: []ContainerObservation{{Name: "memgraph", WaitingReason: "CreateContainerError", WaitingMessage: strings.Repeat("ü", 500)}}}},
			want: []PodProblem{{Pod: "mg-data-0", Container: "memgraph", Reason: "CreateContainerError",
				Message: strings.Repeat("ü", MaxProblemMessage-1) + "…"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PodProblems(tc.pods)); diff != "" {
				t.Errorf("PodProblems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodProblemString(t *testing.T) {
	for _, tc := range []struct {
		problem PodProblem
		want    string
	}{
		{PodProblem{Pod: "mg-data-0", Container: "memgraph", Reason: "CreateContainerConfigError", Message: `secret "memgraph-secrets" not found`},
			`pod mg-data-0 container memgraph: CreateContainerConfigError: secret "memgraph-secrets" not found`},
		{PodProblem{Pod: "mg-data-2", Reason: "Unschedulable", Message: "0/3 nodes are available"},
			"pod mg-data-2: Unschedulable: 0/3 nodes are available"},
		{PodProblem{Pod: "mg-data-2", Container: "memgraph", Reason: "ImagePullBackOff"}, "pod mg-data-2 container memgraph: ImagePullBackOff"},
	} {
		if got := tc.problem.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

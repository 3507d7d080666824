package topology

import (
	"cmp"
	"slices"
	"strconv"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// PodObservation is what PodProblems reads of one Pod's status.
// +kubebuilder:object:generate=false
type PodObservation struct {
	Name  string
	Ready bool // condition Ready is True
	// Scheduled is the PodScheduled condition; zero when the Pod has none yet.
	Scheduled PodCondition
	// Containers are the init containers' and the containers' statuses.
	Containers []ContainerObservation
}

// PodCondition is one condition of a Pod's status.
// +kubebuilder:object:generate=false
type PodCondition struct {
	Status  corev1.ConditionStatus
	Reason  string
	Message string
}

// ContainerObservation is what PodProblems reads of one container's status.
// +kubebuilder:object:generate=false
type ContainerObservation struct {
	Name string
	// WaitingReason and WaitingMessage are state.waiting's; empty unless the container waits.
	WaitingReason  string
	WaitingMessage string
	RestartCount   int32
}

// PodProblem is why a Pod cannot start: a container waiting for a reason that does not resolve
// by itself (Container names it), or the Pod unschedulable (Container is empty).
// +kubebuilder:object:generate=false
type PodProblem struct {
	Pod       string
	Container string
	Reason    string
	// Message is the kubelet's or the scheduler's own, at most MaxProblemMessage runes.
	Message string
}

// The reasons PodProblems reports: a container's state.waiting.reason, or the PodScheduled
// condition's reason.
const (
	ProblemCreateContainerConfigError = "CreateContainerConfigError" // e.g. a Secret or key it names is missing
	ProblemCreateContainerError       = "CreateContainerError"
	ProblemInvalidImageName           = "InvalidImageName"
	ProblemErrImagePull               = "ErrImagePull"
	ProblemImagePullBackOff           = "ImagePullBackOff"
	ProblemCrashLoopBackOff           = "CrashLoopBackOff"
	// ProblemUnschedulable covers a PersistentVolumeClaim that cannot be bound: the scheduler's
	// message says so.
	ProblemUnschedulable = "Unschedulable"
)

// stuckWaiting are the waiting reasons that keep a container from starting until something
// changes (a Secret, an image, the container's own crash); ContainerCreating and PodInitializing
// resolve by themselves and are no problem.
var stuckWaiting = []string{
	ProblemCreateContainerConfigError, ProblemCreateContainerError, ProblemInvalidImageName,
	ProblemErrImagePull, ProblemImagePullBackOff, ProblemCrashLoopBackOff,
}

// MaxProblemMessage bounds a PodProblem's message, in runes.
const MaxProblemMessage = 200

// PodProblems names why pods cannot start: each container waiting in one of stuckWaiting's
// reasons, with its message (and, in CrashLoopBackOff, how often it restarted), and each Pod
// whose PodScheduled condition is False for Unschedulable, with the scheduler's message. A Ready
// Pod has no problem. Sorted by pod, then container (the Pod's own problem first), then reason.
func PodProblems(pods []PodObservation) []PodProblem {
	var problems []PodProblem
	for _, p := range pods {
		if p.Ready {
			continue
		}
		if p.Scheduled.Status == corev1.ConditionFalse && p.Scheduled.Reason == ProblemUnschedulable {
			problems = append(problems, PodProblem{Pod: p.Name, Reason: ProblemUnschedulable, Message: boundRunes(p.Scheduled.Message)})
		}
		for _, c := range p.Containers {
			if !slices.Contains(stuckWaiting, c.WaitingReason) {
				continue
			}
			problems = append(problems, PodProblem{Pod: p.Name, Container: c.Name, Reason: c.WaitingReason, Message: waitingMessage(c)})
		}
	}
	slices.SortFunc(problems, func(a, b PodProblem) int {
		return cmp.Or(cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Container, b.Container),
			cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Message, b.Message))
	})
	return problems
}

// waitingMessage is the container's waiting message, with its restart count in CrashLoopBackOff.
func waitingMessage(c ContainerObservation) string {
	msg := c.WaitingMessage
	if c.WaitingReason == ProblemCrashLoopBackOff {
		msg = "restarted " + strconv.Itoa(int(c.RestartCount)) + " times: " + msg
	}
	return boundRunes(msg)
}

// String is the problem as a status message shows it, e.g. "pod mg-data-1 container memgraph:
// CreateContainerConfigError: secret \"memgraph-secrets\" not found".
func (p PodProblem) String() string {
	s := "pod " + p.Pod
	if p.Container != "" {
		s += " container " + p.Container
	}
	s += ": " + p.Reason
	if p.Message != "" {
		s += ": " + p.Message
	}
	return s
}

// boundRunes cuts s to MaxProblemMessage runes, the last of them "…".
func boundRunes(s string) string {
	if utf8.RuneCountInString(s) <= MaxProblemMessage {
		return s
	}
	runes := []rune(s)
	return string(runes[:MaxProblemMessage-1]) + "…"
}

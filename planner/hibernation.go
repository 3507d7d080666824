package planner

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Hibernation (spec.hibernate) stops every pod without unregistering anyone and without losing a
// volume, and waking brings the cluster back as it was. Like everything else it is re-derived on
// every pass from what the request shows (the pods, the data StatefulSet) and, while a data
// instance still runs, one SHOW INSTANCES; nothing is remembered between passes.
//
//   - Order: the data replicas first, then the MAIN, then the coordinators. Stopping the MAIN
//     while a replica runs would make the coordinators fail over to it; stopping it last leaves
//     them no candidate, so Raft keeps it as MAIN. A StatefulSet sheds its highest ordinals, so
//     to keep the MAIN's pod while every other one goes, the data StatefulSet's
//     spec.ordinals.start is moved to the MAIN's ordinal with one replica (the "window"); then
//     the replicas go to 0 with the window kept, then the coordinators go to 0.
//   - The window stays on the hibernated StatefulSet: it is the record, in an observed child,
//     of which instance was MAIN. Waking (spec.hibernate false, the window still there) starts
//     the coordinators and that one pod first, and releases the replicas once the leader sees it
//     up (whatever role Raft gives it), or once its pod has had its startup probe's whole
//     budget: the replicas starting first could make the coordinators fail over to one of them,
//     and the MAIN's last writes, which no replica has, would be lost. Without a window (no MAIN
//     was up when the cluster hibernated) everything starts at once and Memgraph's failover
//     picks the MAIN.
//   - No Bolt write while hibernating or waking, and no Bolt at all once no data pod is left or
//     while none has come back: there is nobody to answer. Registrations and the MAIN live on in
//     the coordinators' Raft logs; after waking, the ordinary diff re-registers only what is
//     missing.
//   - Volumes: the StatefulSets keep their claims whatever storage.retentionPolicy says while
//     hibernate is set (topology renders Retain).
//   - A rollout in progress when hibernation is asked for is finished first (HibernationPending),
//     so that no pod wakes at another revision than the others; see HibernationRollout.
//   - A coordinator scale-down still retiring members when hibernation is asked for is finished
//     first (HibernationPending): stopping its retiring members with the others could bring fewer
//     than a Raft majority back on waking. Admission refuses any coordinator change while
//     hibernated, and in the update that sets or clears hibernate.

// PodState is one pod as the request shows it.
type PodState struct {
	Ready   bool        // condition Ready is True and it is not being deleted
	Created metav1.Time // metadata.creationTimestamp; zero when unknown
}

// HibernationInput is what PlanHibernation looks at.
type HibernationInput struct {
	Declared  topology.Declared
	Hibernate bool // spec.hibernate
	// DataPods and CoordinatorPods are the pods that exist, in any state, by ordinal (a
	// coordinator's by id).
	DataPods, CoordinatorPods map[int]PodState
	// Window is the data StatefulSet's spec.ordinals.start when it has one; nil otherwise.
	Window *int32
	// Span are the replica counts the StatefulSets have or had (see the hook's workloads);
	// Returned are their spec.replicas alone (what the hook returned last).
	Span, Returned topology.Replicas
	// RolloutPending is the Updated condition's message while a rollout is not done, "" when
	// it is: hibernation does not begin in the middle of one.
	RolloutPending string
	// View is the SHOW INSTANCES a ready leader answered (discovery's view), when NeedsView said
	// so and it could be read; ViewProblem says why none could be, when one was tried.
	View        *View
	ViewProblem string
	// Now and StartupBudget decide when a waking MAIN is no longer waited for: its pod's
	// startup probe budget (failureThreshold × periodSeconds) after the pod was created.
	Now           metav1.Time
	StartupBudget metav1.Duration
}

// HibernationStep is what one pass does about hibernation.
type HibernationStep struct {
	// InCharge: the pass is hibernating or waking: it returns Replicas and Window, plans and
	// writes nothing. Otherwise the ordinary pass runs (and renders no window).
	InCharge bool
	// NeedsView: the step depends on which instance is MAIN; read SHOW INSTANCES and ask again
	// with View (or ViewProblem) set.
	NeedsView bool
	Replicas  topology.Replicas
	Window    *int32 // the data StatefulSet's spec.ordinals.start to render; nil for none
	Phase     v1alpha1.Phase
	// Hibernated is the Hibernated condition.
	Hibernated Condition
}

// HibernationAsleepOrWaking: the cluster is asked to hibernate, or still carries the window of
// one that did (it is waking). Otherwise PlanHibernation reads nothing but these two inputs, so a
// running cluster's pass need not gather the rest.
func HibernationAsleepOrWaking(hibernate bool, window *int32) bool {
	return hibernate || window != nil
}

// PlanHibernation decides the pass's part in hibernating or waking; see the rules above.
func PlanHibernation(in HibernationInput) HibernationStep {
	switch {
	case !HibernationAsleepOrWaking(in.Hibernate, in.Window):
		return running()
	case !in.Hibernate:
		return planWaking(in)
	case len(in.Declared.RetiringCoordinators) > 0:
		return HibernationStep{Phase: v1alpha1.PhaseHibernating, Hibernated: isFalse(v1alpha1.ReasonHibernationPending,
			"waiting for the coordinator scale-down to retire %s before hibernating: stopping retiring members with the others "+
				"could bring fewer than a Raft majority back on waking", listNames(topology.Names(in.Declared.RetiringCoordinators)))}
	case in.RolloutPending != "" && !hibernationBegan(in):
		return HibernationStep{Phase: v1alpha1.PhaseHibernating, Hibernated: isFalse(v1alpha1.ReasonHibernationPending,
			"waiting for the rollout to finish before hibernating, so that every pod stops and wakes at one revision: %s", in.RolloutPending)}
	case len(in.DataPods) > 0:
		return stopData(in)
	case len(in.CoordinatorPods) > 0:
		return hibernating(in.Window, topology.Replicas{}, "the data instances are stopped; stopping the coordinators, which keep "+
			"every registration and the MAIN in their Raft logs")
	}
	return HibernationStep{InCharge: true, Window: in.Window, Phase: v1alpha1.PhaseHibernated,
		Hibernated: isTrue(v1alpha1.ReasonHibernated, "no pod runs; every volume, registration and the MAIN%s are kept; "+
			"set spec.hibernate to false to wake the cluster", mainNote(in.Window))}
}

// hibernationBegan: a hibernating pass already returned fewer pods than declared (or the window).
func hibernationBegan(in HibernationInput) bool {
	return in.Window != nil || in.Returned.DataInstances < int32(len(in.Declared.DataInstances)) ||
		in.Returned.Coordinators < int32(len(in.Declared.Coordinators))
}

// HibernationRollout is the rollout's part in a pass hibernation is in charge of: no Bolt step,
// the Updated condition as PlanRollout reports it without a view of the cluster, and partitions
// that replace no running pod while pods are stopping (the rendered replica counts), and 0 once
// none runs and on waking, so that every pod starts at the pod template the spec declares — a
// change made while hibernated takes effect on waking, all pods at one revision, with nothing
// left to roll. Hibernation does not begin during a rollout (RolloutPending).
func HibernationRollout(step HibernationStep, in RolloutInput) RolloutStep {
	r := PlanRollout(in)
	r.Handover, r.Yield = nil, false
	r.Partitions = topology.Partitions{}
	if step.Phase == v1alpha1.PhaseHibernating {
		r.Partitions = topology.Partitions{Coordinators: step.Replicas.Coordinators, DataInstances: step.Replicas.DataInstances}
	}
	return r
}

func mainNote(window *int32) string {
	if window == nil {
		return ""
	}
	return " (" + topology.DataInstanceName(int(*window)) + ")"
}

func hibernating(window *int32, r topology.Replicas, format string, args ...any) HibernationStep {
	return HibernationStep{InCharge: true, Replicas: r, Window: window, Phase: v1alpha1.PhaseHibernating,
		Hibernated: isFalse(v1alpha1.ReasonHibernating, format, args...)}
}

// stopData stops the data replicas, then the MAIN, keeping the coordinators as they are.
func stopData(in HibernationInput) HibernationStep {
	coordinators := in.Span.Coordinators
	if in.View == nil && in.ViewProblem == "" && anyReady(in.CoordinatorPods) {
		return HibernationStep{InCharge: true, NeedsView: true}
	}
	main := ""
	if in.View != nil {
		main = observeMain(index(Observe(in.View.Instances, nil, in.Span))).name
	}
	if ordinal, ok := topology.ParseDataInstanceName(main); ok {
		if _, running := in.DataPods[ordinal]; running {
			return stopAround(in, int32(ordinal), coordinators)
		}
	}
	switch {
	case in.Window != nil:
		// Hibernation began with a MAIN in the window: go on from there (its pod may be going
		// already, so the leader no longer shows it as MAIN).
		return stopAround(in, *in.Window, coordinators)
	case in.View != nil:
		return hibernating(nil, topology.Replicas{Coordinators: coordinators},
			"no MAIN is up: stopping every data instance at once (%s); Memgraph's failover picks the MAIN when the cluster wakes",
			listNames(podNames(in.DataPods)))
	case len(in.CoordinatorPods) == 0:
		return hibernating(nil, topology.Replicas{Coordinators: coordinators},
			"no coordinator is left to tell the MAIN (or to fail over): stopping every data instance at once (%s)",
			listNames(podNames(in.DataPods)))
	}
	why := in.ViewProblem
	if why == "" {
		why = "no coordinator pod is Ready"
	}
	return hibernating(nil, topology.Replicas{Coordinators: coordinators, DataInstances: in.Span.DataInstances},
		"waiting to read which instance is MAIN before stopping the data instances: %s", why)
}

// stopAround keeps only the MAIN's pod while others run, then stops it.
func stopAround(in HibernationInput, main int32, coordinators int32) HibernationStep {
	window := &main
	name := topology.DataInstanceName(int(main))
	var others []int
	for ordinal := range in.DataPods {
		if ordinal != int(main) {
			others = append(others, ordinal)
		}
	}
	if len(others) > 0 {
		return hibernating(window, topology.Replicas{Coordinators: coordinators, DataInstances: 1},
			"stopping the data replicas first (%s); MAIN %s stays up until they are gone",
			listNames(instanceNames(others)), name)
	}
	return hibernating(window, topology.Replicas{Coordinators: coordinators},
		"the replicas are stopped; stopping MAIN %s, which the coordinators keep as MAIN", name)
}

// planWaking starts the coordinators and the window's pod (the MAIN when the cluster hibernated)
// and hands back to the ordinary pass once the leader sees that instance up, once another
// instance serves as MAIN, or once the pod has had its startup budget.
func planWaking(in HibernationInput) HibernationStep {
	w := int(*in.Window)
	name := topology.DataInstanceName(w)
	pod, exists := in.DataPods[w]
	if in.View == nil && in.ViewProblem == "" && exists && pod.Ready && anyReady(in.CoordinatorPods) {
		return HibernationStep{InCharge: true, NeedsView: true}
	}
	if in.View != nil {
		for _, row := range in.View.Instances {
			switch {
			case row.IsCoordinator() || row.Health != memgraph.HealthUp:
			case row.Name == name, row.Role == memgraph.RoleMain:
				return awake(fmt.Sprintf("%s is up; the replicas are starting", row.Name))
			}
		}
	}
	if exists && !pod.Created.IsZero() && in.StartupBudget.Duration > 0 && in.Now.Sub(pod.Created.Time) >= in.StartupBudget.Duration {
		return awake(fmt.Sprintf("%s did not come back within its startup budget of %s: the replicas are starting and "+
			"Memgraph's failover picks the MAIN", name, in.StartupBudget.Duration))
	}
	waiting := "the leader does not see it up yet"
	switch {
	case !exists || !pod.Ready:
		waiting = "its pod is not Ready yet"
	case in.ViewProblem != "":
		waiting = in.ViewProblem
	}
	return HibernationStep{InCharge: true, Window: in.Window, Phase: v1alpha1.PhaseWaking,
		Replicas: topology.Replicas{Coordinators: Hold(in.Declared, in.Span).Coordinators, DataInstances: 1},
		Hibernated: isFalse(v1alpha1.ReasonWaking, "waking: the coordinators and %s, the MAIN when the cluster hibernated, "+
			"start before the replicas, so that the coordinators cannot fail over to a replica that lacks its last writes; %s",
			name, waiting)}
}

// running is the step of a cluster that neither hibernates nor wakes.
func running() HibernationStep {
	return HibernationStep{Phase: v1alpha1.PhaseRunning,
		Hibernated: isFalse(v1alpha1.ReasonAwake, "spec.hibernate is not set: the cluster runs")}
}

func awake(msg string) HibernationStep {
	return HibernationStep{Phase: v1alpha1.PhaseRunning, Hibernated: isFalse(v1alpha1.ReasonAwake, "awake: %s", msg)}
}

func anyReady(pods map[int]PodState) bool {
	for _, p := range pods {
		if p.Ready {
			return true
		}
	}
	return false
}

func podNames(pods map[int]PodState) []string {
	var ordinals []int
	for o := range pods {
		ordinals = append(ordinals, o)
	}
	return instanceNames(ordinals)
}

func instanceNames(ordinals []int) []string {
	slices.Sort(ordinals)
	names := make([]string, len(ordinals))
	for i, o := range ordinals {
		names[i] = topology.DataInstanceName(o)
	}
	return names
}

// hibernationVerdict is Ready, Converged and the resync delay of a pass hibernation is in
// charge of. Ready is the view's when one was read and shows a MAIN.
func (o Outcome) hibernationVerdict() Verdicts {
	h := o.Hibernation
	reason := h.Hibernated.Reason
	v := Verdicts{ResyncAfterSeconds: ResyncWaiting}
	if h.Phase == v1alpha1.PhaseHibernated {
		v.Converged = isTrue(v1alpha1.ReasonHibernated, "hibernated as declared: both StatefulSets at 0 replicas, every volume kept")
		v.Ready = isFalse(v1alpha1.ReasonHibernated, "hibernated: no pod runs; set spec.hibernate to false to wake the cluster")
		v.ResyncAfterSeconds = ResyncConverged
		return v
	}
	v.Converged = Condition{metav1.ConditionFalse, reason, h.Hibernated.Message}
	v.Ready = v.Converged
	if o.Progress.Main != "" {
		v.Ready = isTrue(v1alpha1.ReasonMainElected, "%s is MAIN; %s leads the coordinators", o.Progress.Main, o.Latest.Leader)
	}
	return v
}

// HibernationRolloutPending is HibernationInput.RolloutPending for a pass: the rollout's message
// while hibernation is asked for and a rollout of the returned replica counts is not done, ""
// otherwise (no rollout is planned for a cluster that stays awake), and "" for an allowed
// downgrade, which a running cluster may not roll (downgradeUnderNewerMain), or a rollout
// held for the very hibernation (intra-cluster TLS turned on or off).
func HibernationRolloutPending(d topology.Declared, hibernate bool, returned topology.Replicas, w Workloads) string {
	if !hibernate {
		return ""
	}
	return RolloutHoldingHibernation(PlanRollout(RolloutInput{Declared: d, Replicas: Hold(d, returned), Workloads: w}), w)
}

// RolloutHoldingHibernation is the message of a rollout (planned without a view) that
// hibernation must wait for, "" when none: a rollout not in progress, an allowed downgrade (what
// hibernation carries out: all pods wake at the older version) and a rollout held for the very
// hibernation do not hold it.
func RolloutHoldingHibernation(rollout RolloutStep, w Workloads) string {
	if !rollout.InProgress() || rollout.WaitsForHibernation() || w.Downgrading() {
		return ""
	}
	return rollout.Message
}

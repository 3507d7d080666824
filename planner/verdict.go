package planner

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Outcome is what one sync pass found and did, one field per stage (a stage that ended the pass
// leaves the later ones zero). The hook fills it; Verdict ranks it into the status conditions.
type Outcome struct {
	Declared topology.Declared

	// The gates before any Bolt query: spec.tls cannot be honoured; declared pods not Ready.
	TLSProblem  string
	WaitingPods []string
	// ClusterTLSProblem is what is wrong with the intra-cluster TLS Secret: Converged says so
	// (TLSCertificateMismatch) whatever else the pass did, for no stage waits on it.
	ClusterTLSProblem string

	// What the pass observed of the pods and Secrets: every pod of the cluster by name, whether
	// it is Ready (HealthInput.PodReady); why pods cannot start (topology.PodProblems); the
	// Secrets the spec names that do not exist (topology.MissingSecrets); where pods run.
	PodReady       map[string]bool
	Problems       []topology.PodProblem
	MissingSecrets []topology.MissingSecret
	// PodNodes is each scheduled pod's node (spec.nodeName), by pod name: HighlyAvailable's input.
	PodNodes map[string]string
	// MainBudgetHeld is the pod the observed <cluster>-main PodDisruptionBudget selects ("" for
	// none): the pod <cluster>-data leaves out (topology.RenderMainBudget). Converged waits until it
	// is the MAIN's (BudgetsSettled), so a converged cluster's next sync writes no child.
	MainBudgetHeld string

	// Discovery is leader discovery's result; zero when the budget ran out before any
	// coordinator was asked.
	Discovery Discovery
	// LeaderErr: reading the leader's own table, or its replication lag, failed.
	LeaderErr error
	// LeaderNotReady names the leader that answered its local Raft copy (LeaderNotReady).
	LeaderNotReady string

	// Plan is the plan the pass stands on: made on the leader's own view, or on the follower's
	// view that settled the pass (SettlesPass). Zero when the pass ended before one.
	Plan Plan
	// Replicas are the replica counts the hook returns: the plan's, or Hold while none stands.
	Replicas  topology.Replicas
	DryRun    bool
	Execution Execution
	// Sent are the Bolt writes the pass sent, in order, each query as Memgraph received it and
	// how it ended (status.operations).
	Sent []v1alpha1.OperationRecord

	// Latest is the latest SHOW INSTANCES a ready leader answered: the discovery view, the
	// leader's own, or the one read after the steps ran; while declared pods are not Ready, the
	// one read through the Ready coordinators (a read, no write follows). Progress is what a plan
	// made on it reports (Plan.Progress unless the steps ran).
	Latest   View
	Progress Progress

	// AtDeclaredSize: both StatefulSets are at the declared size and their controller caught up.
	AtDeclaredSize bool

	// MainReplicas is the MAIN's SHOW REPLICAS as the pass read it for the catch-up proofs; nil
	// when it did not.
	MainReplicas *MainReplicas
	// ReplicaRecords are status.replicas: read from the MAIN's SHOW REPLICAS in this pass
	// (ReplicaRecords), or carried forward (CarryReplicaRecords).
	ReplicaRecords []v1alpha1.ReplicaStatus

	// Restore is the restore of spec.bootstrap.fromBackup as the restore stage found it (nil when
	// it did not look: nothing to restore, or no longer held).
	Restore *v1alpha1.RestoreStatus

	// Paused: the parent carries memgraph.com/paused; the pass returned every child as observed,
	// planned on one read and wrote nothing.
	Paused bool
	// Hibernation is the pass's hibernation step; when it is in charge, the stages after the
	// gates did not run.
	Hibernation HibernationStep
	// Drain is the drain stage's step (PlanDrain): zero when no node that runs the MAIN or the
	// Raft leader is cordoned, or when the stage did not run.
	Drain DrainStep
	// Settings is the settings stage's (SettingsOutcome): zero when it did not run.
	Settings SettingsOutcome
	// Rotation is the certificate rotation stage's last step (PlanRotation): zero when it did
	// not run.
	Rotation RotationStep
	// Rollout is the rollout's step: the plan's, or one planned without a view of the cluster
	// when the pass ended before a plan stood. Its partitions are the ones the hook returns.
	Rollout RolloutStep
}

// Condition is one status condition as the verdict decides it.
type Condition struct {
	Status  metav1.ConditionStatus
	Reason  v1alpha1.ConditionReason
	Message string
}

// Verdicts are the conditions, the phase and when Metacontroller should sync again.
type Verdicts struct {
	Ready, Converged, Updated, Paused, Hibernated Condition
	Phase                                         v1alpha1.Phase
	ResyncAfterSeconds                            float64
}

// Resync delays (seconds) by situation: short while anything is pending, long when converged, so
// a registration a pod loses (fresh volume, wiped state) is re-issued without any watch event.
const (
	ResyncBudgetExhausted = 1
	ResyncProgressing     = 2
	ResyncWaiting         = 5
	ResyncConverged       = 30
)

// Verdict ranks what blocks the cluster into Ready and Converged: the earliest stage that stopped
// the pass speaks for both; past discovery, Ready tells whether a MAIN is elected and Converged
// names the first blocker in this order: a leader read that failed, a step that failed or did
// not finish, half-joined coordinators, a retiring MAIN without a caught-up survivor, a yield,
// retirement, the budget, pending registrations, a dry run, bolt_servers to update, a rebuild
// (memgraph.com/rebuild), a drain the hook acts or waits on, a rollout not done, a preferred MAIN
// not able to take over yet, StatefulSets not yet at the declared size, the data PodDisruptionBudget
// not yet following the MAIN's (BudgetsSettled). What the steps changed is
// judged on Now, what the plan set out to do on Plan. Updated is the rollout's own verdict,
// whatever stopped the pass.
//
// Hibernating and waking passes are judged by their step instead (Hibernated, and Converged True
// once hibernated as declared), and a paused pass keeps a Converged that holds but otherwise says
// that it is paused and what it would do.
func Verdict(o Outcome) Verdicts {
	var v Verdicts
	if o.Hibernation.InCharge {
		v = o.hibernationVerdict()
	} else {
		v = o.readyAndConverged()
	}
	if o.ClusterTLSProblem != "" && v.Converged.Reason != v1alpha1.ReasonTLSConfigInvalid &&
		v.Converged.Reason != v1alpha1.ReasonSecretMissing { // a missing Secret is named as such first
		v.Converged = isFalse(v1alpha1.ReasonTLSCertificateMismatch, "%s", o.ClusterTLSProblem)
	}
	if o.Rotation.Rotating() && v.Converged.Status == metav1.ConditionTrue {
		v.Converged = isFalse(v1alpha1.ReasonCertificateRotating, "%s", o.Rotation.Message)
		v.ResyncAfterSeconds = min(v.ResyncAfterSeconds, ResyncProgressing)
	}
	v.Updated = o.updated()
	v.Phase, v.Hibernated = o.Hibernation.Phase, o.Hibernation.Hibernated
	if v.Hibernated.Reason == "" {
		v.Phase, v.Hibernated = running().Phase, running().Hibernated
	}
	v.Paused = isFalse(v1alpha1.ReasonReconciling, "the hook reconciles the cluster; annotate it %s=true to pause", topology.AnnotationPaused)
	if o.Paused {
		v.Paused = isTrue(v1alpha1.ReasonPaused, "annotation %s: the hook returns every child as observed and sends no Bolt write; "+
			"remove the annotation to resume", topology.AnnotationPaused)
		v.Phase, v.ResyncAfterSeconds = v1alpha1.PhasePaused, ResyncWaiting
		if v.Converged.Status != metav1.ConditionTrue {
			v.Converged = isFalse(v1alpha1.ReasonPaused, "paused (%s), so nothing converges: %s", topology.AnnotationPaused, v.Converged.Message)
		}
	}
	return v
}

func (o Outcome) updated() Condition {
	status := metav1.ConditionFalse
	if o.Rollout.Done() {
		status = metav1.ConditionTrue
	}
	msg := o.Rollout.Message
	if note := StrictSyncNote(o.Declared); note != "" && o.Rollout.InProgress() {
		msg += "; " + note
	}
	return Condition{Status: status, Reason: o.Rollout.Reason, Message: bound(msg)}
}

// readyAndConverged is the gates' and the stages' verdict (gatedVerdicts), with Ready read from
// the leader's table whenever one was read (servesWrites): a pod that is not Ready stops the
// writes, not the reading, and says nothing about the MAIN unless it is the MAIN's.
func (o Outcome) readyAndConverged() Verdicts {
	v := o.gatedVerdicts()
	v.Ready = o.servesWrites(v.Ready)
	return v
}

// servesWrites is Ready on the latest table a ready leader answered (ServesWrites): when the
// pass stopped at a gate (a missing Secret, spec.tls, pods not Ready) the table says whether a
// MAIN serves writes; past the gates every declared pod is Ready, and only the leader reporting
// the MAIN's health down overrules the stages' verdict.
func (o Outcome) servesWrites(ready Condition) Condition {
	if _, leadership := ReadLeadership(o.Latest.Instances); leadership != LeaderReady {
		return ready
	}
	if o.gated() {
		return ServesWrites(o.Declared, o.Latest.Instances, o.PodReady)
	}
	if m, ok := findMain(o.Latest.Instances); ok && m.Health != memgraph.HealthUp {
		return ServesWrites(o.Declared, o.Latest.Instances, o.PodReady)
	}
	return ready
}

// gated reports whether the pass stopped at a gate before any Bolt write could be planned.
func (o Outcome) gated() bool {
	return len(o.MissingSecrets) > 0 || o.TLSProblem != "" || len(o.WaitingPods) > 0
}

func (o Outcome) gatedVerdicts() Verdicts {
	switch {
	case len(o.MissingSecrets) > 0:
		// First: the pods that mount it cannot start, so it is why they are not Ready.
		c, _ := SecretMissing(o.MissingSecrets)
		return both(c, ResyncWaiting)
	case o.TLSProblem != "":
		// Checked before the pods: a missing or unusable Secret is usually why they are not Ready.
		return both(isFalse(v1alpha1.ReasonTLSConfigInvalid, "%s", o.TLSProblem), ResyncWaiting)
	case len(o.WaitingPods) > 0:
		return both(isFalse(v1alpha1.ReasonWorkloadsNotReady, "waiting for %s to be Ready: %s%s",
			describeCount(len(o.WaitingPods), "pod"), listNames(o.WaitingPods), problemsNote(o.Problems)), ResyncWaiting)
	case o.Discovery.Asked == 0:
		return both(isFalse(v1alpha1.ReasonRegistrationInProgress,
			"the sync budget ran out before the coordinators were asked; continuing on the next sync"), ResyncBudgetExhausted)
	case !o.Discovery.Found() && !o.Discovery.Reachable:
		return both(isFalse(v1alpha1.ReasonCoordinatorUnreachable, "no coordinator answered SHOW INSTANCES: %s",
			listNames(o.Discovery.Problems)), ResyncWaiting)
	case !o.Discovery.Found() && o.Discovery.NotReady != "":
		return both(notReady(o.Discovery.NotReady), ResyncProgressing)
	case !o.Discovery.Found():
		return both(isFalse(v1alpha1.ReasonNoCoordinatorLeader, "coordinators answer but none names a leader: %s",
			listNames(o.Discovery.Problems)), ResyncWaiting)
	case o.LeaderNotReady != "":
		return both(notReady(o.LeaderNotReady), ResyncProgressing)
	}
	converged, resync := o.converged()
	return Verdicts{Ready: o.ready(), Converged: converged, ResyncAfterSeconds: resync}
}

// problemsNote names why pods cannot start, for a message that lists pods not Ready.
func problemsNote(problems []topology.PodProblem) string {
	if len(problems) == 0 {
		return ""
	}
	parts := make([]string, len(problems))
	for i, p := range problems {
		parts[i] = p.String()
	}
	return "; " + strings.Join(parts, "; ")
}

func both(c Condition, resync float64) Verdicts {
	return Verdicts{Ready: c, Converged: c, ResyncAfterSeconds: resync}
}

// notReady: a leader that has not finished reconciling answers its local Raft copy with every
// health unknown and refuses every write; that is no leader yet, not news about instances.
func notReady(leader string) Condition {
	return isFalse(v1alpha1.ReasonNoCoordinatorLeader, "%s leads but is not ready yet (it is reconciling after an election or a "+
		"FORCE RESET and reports every health unknown); nothing is planned until it is", leader)
}

func (o Outcome) ready() Condition {
	switch {
	case o.LeaderErr != nil:
		return isFalse(v1alpha1.ReasonCoordinatorUnreachable, "leader %s: %s", o.Discovery.View.Leader, Explain(o.LeaderErr))
	case o.Progress.Main != "":
		return isTrue(v1alpha1.ReasonMainElected, "%s is MAIN; %s leads the coordinators", o.Progress.Main, o.Latest.Leader)
	case o.Plan.Progress.PromotionWaits != "":
		return isFalse(v1alpha1.ReasonNoMainElected, "%s; %s leads the coordinators", o.Plan.Progress.PromotionWaits, o.Latest.Leader)
	}
	return isFalse(v1alpha1.ReasonNoMainElected, "no data instance is MAIN; %s leads the coordinators", o.Latest.Leader)
}

func (o Outcome) converged() (Condition, float64) {
	planned, now, stop := o.Plan.Progress, o.Progress, o.Execution.Stopped
	switch {
	case o.LeaderErr != nil:
		return isFalse(v1alpha1.ReasonCoordinatorUnreachable, "leader %s: %s", o.Discovery.View.Leader, Explain(o.LeaderErr)), ResyncWaiting
	case stop != nil && stop.Verdict == StepFailed:
		var halfJoined *HalfJoinedError
		if errors.As(stop.Err, &halfJoined) {
			return halfJoinedCondition([]string{halfJoined.Coordinator}), ResyncWaiting
		}
		return isFalse(v1alpha1.ReasonRegistrationFailed, "%s failed: %s", stop.Query, Explain(stop.Err)), ResyncWaiting
	case stop != nil && stop.Verdict == StepInProgress:
		return isFalse(v1alpha1.ReasonFailoverInProgress, "%s is still running on %s: the leader is settling the MAIN (Memgraph "+
			"promotes the most up-to-date replica); re-observing on the next sync", stop.Query, o.Latest.Leader), ResyncProgressing
	case stop != nil:
		return isFalse(v1alpha1.ReasonLeadershipTransferInProgress, "%s did not run: %s; finding the leader again on the next sync",
			stop.Query, Explain(stop.Err)), ResyncProgressing
	case len(now.HalfJoined) > 0:
		return halfJoinedCondition(now.HalfJoined), ResyncWaiting
	case planned.NoCaughtUpSurvivor != "":
		return isFalse(v1alpha1.ReasonNoCaughtUpSurvivor, "MAIN %s is retiring and stays MAIN until a survivor can take over: %s",
			planned.Main, planned.NoCaughtUpSurvivor), ResyncWaiting
	case planned.YieldPending || now.YieldPending:
		return isFalse(v1alpha1.ReasonLeadershipTransferInProgress, "%s is retiring and yields leadership; waiting for a new leader",
			o.Discovery.View.Leader), ResyncProgressing
	case len(now.RetiringCoordinators)+len(now.RetiringDataInstances) > 0:
		return isFalse(v1alpha1.ReasonRetirementInProgress, "retiring %s",
			listNames(append(append([]string{}, now.RetiringCoordinators...), now.RetiringDataInstances...))), ResyncProgressing
	case len(o.Declared.RetiringCoordinators)+len(o.Declared.RetiringDataInstances) > 0:
		// A StatefulSet is still above its declared count, though no member of it is registered.
		retiring := append(topology.Names(o.Declared.RetiringCoordinators), topology.Names(o.Declared.RetiringDataInstances)...)
		return isFalse(v1alpha1.ReasonRetirementInProgress, "unregistered %s; waiting for their pods to go", listNames(retiring)), ResyncProgressing
	case o.Execution.BudgetExhausted:
		return isFalse(v1alpha1.ReasonRegistrationInProgress, "the sync budget ran out after %d of %d steps; continuing on the next sync",
			len(o.Execution.Ran), len(o.Plan.Commands)), ResyncBudgetExhausted
	case planned.RegistrationHeld != "":
		return isFalse(v1alpha1.ReasonRegistrationInProgress, "%s", planned.RegistrationHeld), ResyncWaiting
	case len(now.PendingCoordinators)+len(now.PendingDataInstances) > 0:
		return isFalse(v1alpha1.ReasonRegistrationInProgress, "registering %s",
			listNames(append(append([]string{}, now.PendingCoordinators...), now.PendingDataInstances...))), ResyncProgressing
	case o.DryRun && len(o.Plan.Commands) > 0:
		return isFalse(v1alpha1.ReasonRegistrationInProgress, "dry run: %d planned steps not executed", len(o.Plan.Commands)), ResyncProgressing
	case len(now.AddressUpdates) > 0:
		return isFalse(v1alpha1.ReasonRegistrationInProgress, "updating the bolt_server clients are given: %s",
			listNames(describeUpdates(now.AddressUpdates))), ResyncProgressing
	case o.Rebuild().Declared():
		r := o.Rebuild()
		resync := float64(ResyncWaiting)
		if r.Phase == v1alpha1.RebuildUnregistering {
			resync = ResyncProgressing
		}
		return isFalse(v1alpha1.ReasonRebuildInProgress, "%s", r.Message), resync
	case o.Drain.Verdict != DrainNone:
		resync := float64(ResyncWaiting)
		if o.Drain.Verdict == DrainAct {
			resync = ResyncProgressing
		}
		return isFalse(v1alpha1.ReasonDrainPending, "%s", o.Drain.Message), resync
	case o.Rollout.InProgress():
		// A pod template not rolled out is not what the spec declares: Converged waits for the
		// upgrade too, with the rollout's own words.
		resync := float64(ResyncProgressing)
		if o.Rollout.Reason != v1alpha1.ReasonRolloutInProgress {
			resync = ResyncWaiting
		}
		return Condition{metav1.ConditionFalse, o.Rollout.Reason, bound(o.Rollout.Message)}, resync
	case planned.SwitchoverPending != "":
		// Lag shrinks without any watch event: look again soon.
		return isFalse(v1alpha1.ReasonSwitchoverPending, "%s", planned.SwitchoverPending), ResyncWaiting
	case !o.AtDeclaredSize:
		return isFalse(v1alpha1.ReasonWorkloadsNotReady, "StatefulSets are not yet at %d coordinators and %d data instances",
			len(o.Declared.Coordinators), len(o.Declared.DataInstances)), ResyncWaiting
	case !o.BudgetsSettled():
		return isFalse(v1alpha1.ReasonDisruptionBudgetMoving, "%s", o.budgetMove()), ResyncProgressing
	}
	return isTrue(v1alpha1.ReasonAllInstancesRegistered, "%s and %s registered%s%s",
		describeCount(len(o.Declared.Coordinators), "coordinator"),
		describeCount(len(o.Declared.DataInstances), "data instance"), preferredNote(o.Declared, now), driftNote(now.Drift)+windowNote(o.Rollout)), ResyncConverged
}

// windowNote says that a hook release's pod template change waits for a maintenance window: the
// cluster is as the spec declares it, and Updated says what waits.
func windowNote(r RolloutStep) string {
	if !r.WaitsForWindow() {
		return ""
	}
	return "; a hook release's pod template change waits for a maintenance window (see Updated)"
}

// describeUpdates renders each address update as "instance_0 x → y".
func describeUpdates(updates []AddressUpdate) []string {
	out := make([]string, len(updates))
	for i, u := range updates {
		out[i] = fmt.Sprintf("%s %s → %s", u.Name, u.From, u.To)
	}
	return out
}

// preferredNote says that the preferred MAIN was reached.
func preferredNote(d topology.Declared, now Progress) string {
	if d.PreferredMain == "" || now.Main != d.PreferredMain {
		return ""
	}
	return "; " + now.Main + " is MAIN, as spec.preferredMain asks"
}

// halfJoinedCondition names Raft members the leader's application log lacks: a human has to
// act, and must know why the hook will not.
func halfJoinedCondition(names []string) Condition {
	verb := "is a Raft member"
	if len(names) > 1 {
		verb = "are Raft members"
	}
	return isFalse(v1alpha1.ReasonCoordinatorHalfJoined, "%s %s without a bolt_server (half-joined: ADD COORDINATOR timed out and "+
		"the join completed later). The hook will not remove it: removing a half-joined member would stop the leader "+
		"process. Memgraph refuses to add it again (its id exists); it is registered once it leads (the hook then adds it "+
		"as itself)", listNames(names), verb)
}

// driftNote tells of registrations whose addresses differ from the declared ones: the hook
// does not rewrite them (see the package doc), so a human should know.
func driftNote(drift []Drift) string {
	if len(drift) == 0 {
		return ""
	}
	var parts []string
	for _, d := range drift {
		parts = append(parts, fmt.Sprintf("%s %s is %q, declared %q", d.Name, d.Field, d.Observed, d.Declared))
	}
	return "; registered with other addresses than declared (not rewritten): " + listNames(parts)
}

// MaxMessage bounds a condition message; lists inside it are bounded by maxListed.
const (
	MaxMessage = 512
	maxListed  = 5
)

func isTrue(reason v1alpha1.ConditionReason, format string, args ...any) Condition {
	return Condition{metav1.ConditionTrue, reason, bound(fmt.Sprintf(format, args...))}
}

func isFalse(reason v1alpha1.ConditionReason, format string, args ...any) Condition {
	return Condition{metav1.ConditionFalse, reason, bound(fmt.Sprintf(format, args...))}
}

// listNames renders at most maxListed names, then how many more there are.
func listNames(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}

func bound(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	cut := MaxMessage - len("…")
	for cut > 0 && !isRuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func describeCount(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

package planner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// KindSetCoordinatorSetting is the kind of SetCoordinatorSetting.
const KindSetCoordinatorSetting CommandKind = "SET COORDINATOR SETTING"

// SetCoordinatorSetting sets one coordinator setting to its declared value, on the leader. It is
// idempotent: Memgraph stores the value, whatever it was.
type SetCoordinatorSetting struct{ Name, Value string }

func (s SetCoordinatorSetting) String() string {
	return memgraph.SetCoordinatorSettingQuery(s.Name, s.Value)
}
func (SetCoordinatorSetting) Kind() CommandKind { return KindSetCoordinatorSetting }
func (SetCoordinatorSetting) command()          {}
func (s SetCoordinatorSetting) Send(ctx context.Context, c memgraph.Client) error {
	return c.SetCoordinatorSetting(ctx, s.Name, s.Value)
}

// SettingsDeclared: the spec declares at least one coordinator setting, so a pass reads SHOW
// COORDINATOR SETTINGS. Without one it never does: a converged cluster costs one query per sync.
func SettingsDeclared(d topology.Declared) bool { return len(d.Settings.List()) > 0 }

// SettingsStep is the settings stage's plan: the declared settings the leader already shows as
// declared, and a SET COORDINATOR SETTING for every other one, in SHOW COORDINATOR SETTINGS'
// order.
type SettingsStep struct {
	Agreed   []v1alpha1.Setting
	Commands []Command
	// Drift lists each declared setting the leader shows otherwise, as "name: shown → declared"
	// ("not shown" when the leader does not list it).
	Drift []string
}

// PlanSettings compares the declared settings with the leader's SHOW COORDINATOR SETTINGS. A
// setting Memgraph shows that the spec does not declare is left as it is; one the spec declares
// that Memgraph does not show (a Memgraph without it) is set all the same, and Memgraph's refusal
// says why. Values are compared as Memgraph normalises them: booleans case-insensitively (it
// lower-cases them), numbers as written (it shows them in decimal, as List writes them).
func PlanSettings(declared v1alpha1.CoordinatorSettings, shown []memgraph.Setting) SettingsStep {
	var step SettingsStep
	for _, want := range declared.List() {
		i := slices.IndexFunc(shown, func(s memgraph.Setting) bool { return s.Name == want.Name })
		if i >= 0 && strings.EqualFold(shown[i].Value, want.Value) {
			step.Agreed = append(step.Agreed, want)
			continue
		}
		seen := "not shown"
		if i >= 0 {
			seen = fmt.Sprintf("%q", shown[i].Value)
		}
		step.Drift = append(step.Drift, fmt.Sprintf("%s: %s → %q", want.Name, seen, want.Value))
		step.Commands = append(step.Commands, SetCoordinatorSetting{Name: want.Name, Value: want.Value})
	}
	return step
}

// SettingsDriftMessage is status.lastOperation's message for a pass that set coordinator
// settings: what the leader showed and what it was set to.
func SettingsDriftMessage(step SettingsStep) string {
	return bound("coordinator settings put back as declared: " + strings.Join(step.Drift, "; "))
}

// SettingsOutcome is what the settings stage did in a pass.
type SettingsOutcome struct {
	// Ran: the stage read the leader's settings (or tried to: ReadErr).
	Ran     bool
	ReadErr error
	Step    SettingsStep
	// Execution is the SETs it ran (none on a dry run).
	Execution Execution
}

// Applied are the declared settings the leader holds as declared after the stage: those it
// showed so, and those whose SET succeeded. nil when the stage did not read them.
func (s SettingsOutcome) Applied() *v1alpha1.CoordinatorSettings {
	if !s.Ran || s.ReadErr != nil {
		return nil
	}
	applied := slices.Clone(s.Step.Agreed)
	for _, cmd := range s.Step.Commands {
		if slices.Contains(s.Execution.Ran, cmd.String()) {
			set := cmd.(SetCoordinatorSetting)
			applied = append(applied, v1alpha1.Setting{Name: set.Name, Value: set.Value})
		}
	}
	return v1alpha1.SettingsOf(applied)
}

// SettingsCondition is the CoordinatorSettings condition, present only when the spec declares a
// setting: False with SettingWithheld, naming each field, when it declares one the hook never
// sends (topology.Declared.WithheldSettings; the others are still kept), else True once the
// leader holds every declared value, False with SettingRefused and Memgraph's own message when it
// refused a SET, Unknown while the stage has not read them.
func SettingsCondition(d topology.Declared, s SettingsOutcome) (Condition, bool) {
	if w := d.WithheldSettings; len(w) > 0 {
		fields, why := make([]string, len(w)), make([]string, len(w))
		for i, v := range w {
			fields[i], why[i] = v.Field, v.Message
		}
		verb := " is"
		if len(w) > 1 {
			verb = " are"
		}
		return Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonSettingWithheld,
			Message: bound(strings.Join(fields, " and ") + verb + " not sent to the coordinators: " + strings.Join(why, "; "))}, true
	}
	if !SettingsDeclared(d) {
		return Condition{}, false
	}
	switch stop := s.Execution.Stopped; {
	case !s.Ran:
		return Condition{Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonSettingsPending,
			Message: "the coordinator settings are read and set once the cluster is converged"}, true
	case s.ReadErr != nil:
		return Condition{Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonSettingsPending,
			Message: bound("SHOW COORDINATOR SETTINGS on the leader failed: " + Explain(s.ReadErr))}, true
	case stop != nil && stop.Verdict == StepFailed:
		return Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonSettingRefused,
			Message: bound(fmt.Sprintf("%s: %s", stop.Query, Explain(stop.Err)))}, true
	case len(s.Execution.Ran) < len(s.Step.Commands):
		return Condition{Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonSettingsPending,
			Message: bound("setting " + strings.Join(s.Step.Drift, "; "))}, true
	}
	return Condition{Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonSettingsApplied,
		Message: "the leader holds every declared coordinator setting"}, true
}

// FailoverGapCondition is the AutomaticFailover condition, present only when the spec leaves the
// coordinators no failover candidate for some MAIN: with sync_failover_only true (Memgraph's
// default) only SYNC and STRICT_SYNC replicas are candidates (coordinator_instance.cpp
// GetInstanceForFailover), so with fewer than two such data instances a MAIN that dies is not
// replaced by itself while every replica is Async.
func FailoverGapCondition(d topology.Declared) (Condition, bool) {
	if len(d.DataInstances) < 2 || !d.Settings.SyncFailoverOnlyEffective() {
		return Condition{}, false
	}
	var candidates []string
	for _, di := range d.DataInstances {
		if di.Mode != v1alpha1.ReplicationAsync {
			candidates = append(candidates, di.Name)
		}
	}
	if len(candidates) >= 2 {
		return Condition{}, false
	}
	msg := "every data instance is Async and sync_failover_only is true: "
	if len(candidates) == 1 {
		msg = fmt.Sprintf("only %s is not Async and sync_failover_only is true: while %s is MAIN, ", candidates[0], candidates[0])
	}
	return Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonAutomaticFailoverGap,
		Message: msg + "the coordinators have no failover candidate, so a MAIN that fails is not replaced automatically " +
			"(SET INSTANCE … TO MAIN by hand); set coordinatorSettings.syncFailoverOnly: false to let Async replicas " +
			"take over (they may miss the MAIN's last writes), or make replicas Sync"}, true
}

// StrictSyncNote is what a rollout says when StrictSync instances restart: the MAIN commits a
// write only once every STRICT_SYNC replica confirms it, so writes pause while each restarts.
// "" when no declared data instance is StrictSync.
func StrictSyncNote(d topology.Declared) string {
	for _, di := range d.DataInstances {
		if di.Mode == v1alpha1.ReplicationStrictSync {
			return "writes pause while each StrictSync data instance restarts: the MAIN commits only once every STRICT_SYNC replica confirms"
		}
	}
	return ""
}

// settings is the settings stage, for a converged pass whose other stages wrote nothing; what it
// finds is the outcome's Settings (not its Execution: a refused setting is the
// CoordinatorSettings condition's, not a failed registration of Converged): SHOW COORDINATOR
// SETTINGS on the leader of the latest view, then, unless a dry run, SET COORDINATOR SETTING for
// each declared setting it shows otherwise (PlanSettings). A spec that declares no setting costs
// no query. A SET on a coordinator that is no longer leader fails as a Raft write and waits.
func (p *pass) settings() flow {
	if !SettingsDeclared(p.d) {
		return goOn
	}
	view := p.out.Latest
	if view.Leader == "" {
		view = p.out.Discovery.View
	}
	leader, err := LeaderOf(p.d, view)
	if err != nil {
		p.out.Settings = SettingsOutcome{Ran: true, ReadErr: err}
		return goOn
	}
	got, ok := p.read(Read{What: ReadSettings, From: leader.BoltServer})
	if !ok {
		return waiting
	}
	if got.Err != nil {
		p.out.Settings = SettingsOutcome{Ran: true, ReadErr: fmt.Errorf("%s: %w", leader.Name, got.Err)}
		return goOn
	}
	p.out.Settings = SettingsOutcome{Ran: true, Step: PlanSettings(p.d.Settings, got.Settings)}
	if p.in.DryRun || len(p.out.Settings.Step.Commands) == 0 {
		return goOn
	}
	var f flow
	p.out.Settings.Execution, f = p.execute(leader.BoltServer, p.out.Settings.Step.Commands, p.planGuard)
	return f
}

package users

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// ConditionReady is a MemgraphUser's one condition: the user is in force as declared.
const ConditionReady = "Ready"

// answer is the hook's answer for verdict v: the status — what was read of the user (state, nil
// when it was not read), the records carried forward (appliedPasswordVersion; mainDatabase,
// main when the pass set it, else the one recorded) and the Ready condition, whose
// lastTransitionTime is the prior one while its status stays — and the generated Secret.
func (p *pass) answer(v planner.UserVerdict, state *planner.UserState, main string) userResponse {
	prior := p.u.Status
	st := v1alpha1.MemgraphUserStatus{ObservedGeneration: p.u.Generation, Phase: v.Phase, Username: p.spec.Username,
		Secret: p.creds.secret, AppliedPasswordVersion: prior.AppliedPasswordVersion, MainDatabase: prior.MainDatabase,
		Conditions: prior.Conditions}
	if st.Secret == "" {
		st.Secret = p.u.PasswordSecretName()
	}
	if main != "" {
		st.MainDatabase = main
	}
	if state != nil && state.Exists {
		in := planner.UserInForce(*state)
		st.Roles, st.Privileges, st.Databases = in.Roles, in.Privileges, in.Databases
	}
	status := metav1.ConditionFalse
	if v.Ready() {
		status = metav1.ConditionTrue
	}
	now := metav1.NewTime(p.ctl.cfg.Now().UTC().Truncate(time.Second))
	st.Conditions = append([]metav1.Condition(nil), st.Conditions...)
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionReady, Status: status, Reason: v.Reason,
		Message: v.Message, ObservedGeneration: p.u.Generation, LastTransitionTime: now})
	out := userResponse{Status: st, ResyncAfterSeconds: v.Resync.Seconds()}
	if p.creds.child != nil {
		out.Children = []any{p.creds.child}
	}
	return out
}

// meta is the Ready condition among conditions (zero when absent).
func meta(conditions []metav1.Condition) metav1.Condition {
	if c := apimeta.FindStatusCondition(conditions, ConditionReady); c != nil {
		return *c
	}
	return metav1.Condition{}
}

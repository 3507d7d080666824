package users

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// ConditionReady is a MemgraphUser's one condition: the user is in force as declared.
const ConditionReady = "Ready"

// answer is the hook's answer for the pass's end: the planner's status, with the Ready
// condition of its verdict, whose lastTransitionTime is the prior one while its status stays —
// and the generated Secret.
func (p *pass) answer(done planner.UserDone) userResponse {
	v, st := done.Verdict, done.Status
	status := metav1.ConditionFalse
	if v.Ready() {
		status = metav1.ConditionTrue
	}
	now := metav1.NewTime(p.ctl.cfg.Now().UTC().Truncate(time.Second))
	st.Conditions = append([]metav1.Condition(nil), p.u.Status.Conditions...)
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionReady, Status: status, Reason: v.Reason,
		Message: v.Message, ObservedGeneration: p.u.Generation, LastTransitionTime: now})
	out := userResponse{Status: st, ResyncAfterSeconds: v.Resync.Seconds(), Finalized: done.Finalized, Plan: done.Plan, Children: []any{}}
	if p.creds.child != nil {
		out.Children = []any{p.creds.child}
	}
	return out
}

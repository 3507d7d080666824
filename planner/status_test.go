package planner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

func TestConditionsKeepTransitionTimeWhileStatusHolds(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 6, 1, 12, 0, 0, 500, time.UTC)
	previous := []metav1.Condition{
		{Type: "Unrelated", Status: metav1.ConditionTrue, LastTransitionTime: earlier},
		{Type: string(v1alpha1.ConditionReady), Status: metav1.ConditionTrue, LastTransitionTime: earlier},
		{Type: string(v1alpha1.ConditionConverged), Status: metav1.ConditionTrue, LastTransitionTime: earlier},
	}
	ready := Condition{Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonMainElected, Message: "instance_0 is MAIN"}
	converged := Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonRegistrationInProgress, Message: "registering instance_2"}
	got := []metav1.Condition{
		RenderCondition(previous, v1alpha1.ConditionReady, ready, 7, now),
		RenderCondition(previous, v1alpha1.ConditionConverged, converged, 7, now),
	}
	want := []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: "MainElected", Message: "instance_0 is MAIN",
			ObservedGeneration: 7, LastTransitionTime: earlier},
		{Type: "Converged", Status: metav1.ConditionFalse, Reason: "RegistrationInProgress", Message: "registering instance_2",
			ObservedGeneration: 7, LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if previous[2].Status != metav1.ConditionTrue {
		t.Error("rendering changed the prior status it read")
	}
}

// A prior condition without a transition time (a status written by hand) is no transition to
// keep: the condition starts now, never with a null time the API server would refuse.
func TestConditionWithoutPriorTransitionTimeStartsNow(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	previous := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}
	got := RenderCondition(previous, v1alpha1.ConditionReady, Condition{Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonMainElected}, 1, now)
	if !got.LastTransitionTime.Time.Equal(now) {
		t.Errorf("lastTransitionTime %v, want %v", got.LastTransitionTime, now)
	}
}

package hooks

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConditionsKeepTransitionTimeWhileStatusHolds(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 6, 1, 12, 0, 0, 500, time.UTC)
	previous := []metav1.Condition{
		{Type: ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: earlier},
		{Type: ConditionConverged, Status: metav1.ConditionTrue, LastTransitionTime: earlier},
	}
	got := conditions(previous, 7, now,
		isTrue(ReasonMainElected, "instance_0 is MAIN"),
		isFalse(ReasonRegistrationInProgress, "registering %s", "instance_2"))
	want := []metav1.Condition{
		{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonMainElected, Message: "instance_0 is MAIN",
			ObservedGeneration: 7, LastTransitionTime: earlier},
		{Type: ConditionConverged, Status: metav1.ConditionFalse, Reason: ReasonRegistrationInProgress, Message: "registering instance_2",
			ObservedGeneration: 7, LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}

func TestMessagesAreBounded(t *testing.T) {
	var names []string
	for i := 0; i < 40; i++ {
		names = append(names, "instance_"+strings.Repeat("9", i))
	}
	if got, want := listNames(names[:3]), "instance_, instance_9, instance_99"; got != want {
		t.Errorf("listNames(3) = %q, want %q", got, want)
	}
	if got := listNames(names); !strings.HasSuffix(got, "and 35 more") {
		t.Errorf("listNames(40) = %q, want it to end with the count left out", got)
	}
	long := isFalse(ReasonRegistrationFailed, "%s", strings.Repeat("é", 1000))
	if len(long.message) > maxMessage || !utf8.ValidString(long.message) || !strings.HasSuffix(long.message, "…") {
		t.Errorf("bounded message: %d bytes, valid UTF-8 %v", len(long.message), utf8.ValidString(long.message))
	}
}

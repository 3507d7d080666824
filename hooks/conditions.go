package hooks

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and their stable reasons.
const (
	ConditionReady     = "Ready"
	ConditionConverged = "Converged"

	ReasonWorkloadsNotReady            = "WorkloadsNotReady"
	ReasonCoordinatorUnreachable       = "CoordinatorUnreachable"
	ReasonNoCoordinatorLeader          = "NoCoordinatorLeader"
	ReasonRegistrationInProgress       = "RegistrationInProgress"
	ReasonRegistrationFailed           = "RegistrationFailed"
	ReasonAllInstancesRegistered       = "AllInstancesRegistered"
	ReasonMainElected                  = "MainElected"
	ReasonNoMainElected                = "NoMainElected"
	ReasonRetirementInProgress         = "RetirementInProgress"
	ReasonLeadershipTransferInProgress = "LeadershipTransferInProgress"
	ReasonNoCaughtUpSurvivor           = "NoCaughtUpSurvivor"
	ReasonTLSConfigInvalid             = "TLSConfigInvalid"
	ReasonCoordinatorHalfJoined        = "CoordinatorHalfJoined"
	ReasonFailoverInProgress           = "FailoverInProgress"
)

// maxMessage bounds a condition message; lists inside it are bounded by maxListed.
const (
	maxMessage = 512
	maxListed  = 5
)

type verdict struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

func isTrue(reason, format string, args ...any) verdict {
	return verdict{metav1.ConditionTrue, reason, bound(fmt.Sprintf(format, args...))}
}

func isFalse(reason, format string, args ...any) verdict {
	return verdict{metav1.ConditionFalse, reason, bound(fmt.Sprintf(format, args...))}
}

// conditions renders Ready and Converged. lastTransitionTime is carried over from the parent's
// current conditions while a condition's status is unchanged, so a steady cluster's status
// never changes (each status write would trigger another sync).
func conditions(previous []metav1.Condition, generation int64, now time.Time, ready, converged verdict) []metav1.Condition {
	render := func(typ string, v verdict) metav1.Condition {
		c := metav1.Condition{
			Type:               typ,
			Status:             v.status,
			Reason:             v.reason,
			Message:            v.message,
			ObservedGeneration: generation,
			LastTransitionTime: metav1.NewTime(now.UTC().Truncate(time.Second)),
		}
		for _, p := range previous {
			if p.Type == typ && p.Status == v.status && !p.LastTransitionTime.IsZero() {
				c.LastTransitionTime = p.LastTransitionTime
			}
		}
		return c
	}
	return []metav1.Condition{render(ConditionReady, ready), render(ConditionConverged, converged)}
}

// listNames renders at most maxListed names, then how many more there are.
func listNames(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}

func bound(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage - len("…")
	for cut > 0 && !isRuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

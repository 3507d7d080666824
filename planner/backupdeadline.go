package planner

import (
	"fmt"
	"time"
)

// A backup's deadline (status.deadline) is its creation plus spec.timeout; nothing of it
// outlives the deadline. Until then what holds it is tried again, each time a little later;
// past it the backup fails, DeadlineExceeded, saying what held it.

// JobGrace is how long past its deadline a Running backup is still polled: the agent ends the
// job at the deadline, and its end reaches the hook within a poll or two. A Running backup whose
// agent has not answered by then fails.
const JobGrace = time.Minute

// Pending polls: the first after PendingPollMin, then a tenth of the backup's age, at most
// PendingPollMax, and never past the deadline.
const (
	PendingPollMin = 10 * time.Second
	PendingPollMax = 5 * time.Minute
)

// PendingResync is when a backup created at created that waits (or whose agent did not answer)
// is looked at again: backing off with its age, and exactly at its deadline when that comes
// first, so that it fails on time.
func PendingResync(created, deadline, now time.Time) time.Duration {
	wait := min(max(now.Sub(created)/10, PendingPollMin), PendingPollMax)
	if left := deadline.Sub(now); left < wait {
		wait = max(left, time.Second)
	}
	return wait
}

// Expired reports whether a backup that has not completed is past its deadline at now.
func Expired(deadline, now time.Time) bool { return !deadline.IsZero() && !now.Before(deadline) }

// NotStarted is the failure of a backup past its deadline that never started: what it waited
// for last, in its words.
func NotStarted(timeout time.Duration, deadline time.Time, held Wait) Wait {
	msg := fmt.Sprintf("the backup did not start within its timeout of %v (deadline %s)", timeout, deadline.UTC().Format(time.RFC3339))
	if held.Reason != "" {
		msg += "; it waited for: " + held.Reason + ": " + held.Message
	}
	return Wait{ReasonDeadlineExceeded, msg}
}

// Overdue is the failure of a Running backup whose agent did not report the job's end within
// JobGrace of its deadline; lastError is what asking it last gave.
func Overdue(deadline time.Time, lastError string) Wait {
	msg := fmt.Sprintf("the backup did not complete by its deadline %s, and its agent did not report the job's end within %v of it",
		deadline.UTC().Format(time.RFC3339), JobGrace)
	if lastError != "" {
		msg += ": " + lastError
	}
	return Wait{ReasonDeadlineExceeded, msg}
}

// JobLost is what becomes of a Running backup whose agent no longer knows its job: the agent
// restarted (its pod was replaced or killed; jobs live in its memory), and what the job had not
// uploaded is lost. Before the deadline the backup is taken again from its start (retry, a
// Pending wait); at or past it, it fails, saying what was lost.
func JobLost(deadline, now time.Time, lost string) (w Wait, retry bool) {
	if Expired(deadline, now) {
		return Wait{ReasonDeadlineExceeded, fmt.Sprintf("the backup did not complete by its deadline %s: %s",
			deadline.UTC().Format(time.RFC3339), lost)}, false
	}
	return Wait{ReasonAgentRestarted, lost + "; the backup is taken again from its start, until its deadline " +
		deadline.UTC().Format(time.RFC3339)}, true
}

package planner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// A MemgraphScheduledBackup's decision: from the time, the schedule and the backups that exist
// (its children), which backups must exist, which go, and when to look again. Two calls with the
// same input agree, whatever the hook was doing before: a backup's name is its scheduled time.

// ScheduleInput is what the schedule decision reads.
type ScheduleInput struct {
	Name     string // the MemgraphScheduledBackup's
	Now      time.Time
	Schedule string // cron, five fields or a descriptor, UTC
	Suspend  bool
	Keep     int
	// MaxAge drops completed runs scheduled longer ago (0: age drops nothing).
	MaxAge time.Duration
	// Created is when the MemgraphScheduledBackup was created: no run is due before it.
	Created time.Time
	// Backups are its children as observed.
	Backups []ScheduledRun
}

// ScheduledRun is one MemgraphBackup a schedule created: its name, the scheduled time it stands
// for and its phase ("" until its own hook has set one); once done, when it ended, and for a
// failed one its reason and error.
type ScheduledRun struct {
	Name          string
	ScheduledAt   time.Time
	Phase         v1alpha1.BackupPhase
	CompletedAt   time.Time
	Reason, Error string
}

// ScheduleDecision is what the schedule must do now.
type ScheduleDecision struct {
	// Create is the run to create now, if one is due.
	Create *ScheduledRun
	// Keep are the existing runs that stay, newest first; Drop those to delete (beyond keep).
	Keep []ScheduledRun
	Drop []ScheduledRun
	// Next is when the next run is due (zero while suspended or when the schedule is invalid);
	// ResyncAfter is how long until then (zero: no need to look again before something changes).
	Next        time.Time
	ResyncAfter time.Duration
	// Invalid says why the schedule does not parse; nothing is created then.
	Invalid string
	// Interval is the longest time between two consecutive scheduled times (ScheduleInterval);
	// zero when the schedule is invalid.
	Interval time.Duration
	// LastCompleted is the newest run that completed, LastEnded the newest that completed or
	// failed (by scheduled time); nil when there is none.
	LastCompleted, LastEnded *ScheduledRun
}

// ScheduledBackupName is the name of the run of schedule scheduled at: the schedule's name and
// the scheduled time in Unix seconds, so that two calls agree. Two scheduled times of a schedule
// are at least a second apart (cron's resolution; an @every delay is whole seconds, at least
// one), so two runs never share a name.
func ScheduledBackupName(schedule string, at time.Time) string {
	return schedule + "-" + strconv.FormatInt(at.Unix(), 10)
}

// ParseSchedule parses a cron schedule in UTC: five fields or a descriptor (@daily, @every 6h).
// A time-zone prefix (TZ= or CRON_TZ=) is refused: schedules are UTC.
func ParseSchedule(spec string) (cron.Schedule, error) {
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, fmt.Errorf("schedule %q names a time zone: schedules are in UTC; remove the %s prefix", spec, strings.SplitN(spec, "=", 2)[0]+"=")
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("schedule %q does not parse: %v; use five fields in UTC (minute hour day-of-month month day-of-week), such as \"0 3 * * *\", or a descriptor such as @daily or @every 6h", spec, err)
	}
	return s, nil
}

// DecideSchedule is the schedule decision. At most one run is created per call, for the latest
// scheduled time that is due and newer than every existing run (missed runs are caught up once,
// not one by one), and none while a run of the schedule is still Pending or Running or while
// suspended. Retention (retain) drops only completed runs, oldest first, beyond Keep or older
// than MaxAge, never the newest completed one; a Failed run counts for nothing: it goes once a
// newer run completed, and at most Keep of them stay (the newest, so that failures are seen); a
// run not done is never dropped.
func DecideSchedule(in ScheduleInput) ScheduleDecision {
	runs := newestFirst(in.Backups)
	d := ScheduleDecision{}
	d.Keep, d.Drop = retain(runs, in.Keep, in.MaxAge, in.Now)
	d.LastCompleted, d.LastEnded = lastRuns(runs)
	sched, err := ParseSchedule(in.Schedule)
	if err != nil {
		d.Invalid = err.Error()
		return d
	}
	d.Interval = ScheduleInterval(sched, in.Now)
	if in.Suspend {
		return d
	}
	now := in.Now.UTC()
	newest := in.Created.UTC()
	if len(runs) > 0 && runs[0].ScheduledAt.After(newest) {
		newest = runs[0].ScheduledAt.UTC() // a run from the future (clock skew) counts as the newest
	}
	if due, ok := latestDue(sched, newest, now); ok && !anyRunning(runs) {
		run := ScheduledRun{Name: ScheduledBackupName(in.Name, due), ScheduledAt: due}
		d.Create = &run
		newest = due
	}
	d.Next = nextDue(sched, newest, now)
	d.ResyncAfter = d.Next.Sub(now)
	return d
}

// latestDue is the latest scheduled time in (after, now], if any. Whether a scheduled time lies
// in (s, now] only turns from yes to no as s grows, so it is found by bisecting s over whole
// seconds (cron's resolution): a few dozen Next calls however long the gap. An @every schedule
// counts whole intervals from after.
func latestDue(sched cron.Schedule, after, now time.Time) (time.Time, bool) {
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		// @every runs on a grid from the newest run (or the creation), not from whenever asked.
		n := now.Sub(after) / every.Delay
		return after.Add(n * every.Delay), n >= 1
	}
	lo, hi := after.Unix(), now.Unix()
	dueAfter := func(s int64) bool {
		n := sched.Next(time.Unix(s, 0).UTC())
		return !n.IsZero() && !n.After(now)
	}
	if lo >= hi || !dueAfter(lo) {
		return time.Time{}, false
	}
	for hi-lo > 1 { // invariant: dueAfter(lo), and hi is past the last scheduled time
		mid := lo + (hi-lo)/2
		if dueAfter(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return sched.Next(time.Unix(lo, 0).UTC()), true
}

// nextDue is the first scheduled time after now, on the grid of newest for an @every schedule.
func nextDue(sched cron.Schedule, newest, now time.Time) time.Time {
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		if newest.After(now) {
			return newest.Add(every.Delay)
		}
		return newest.Add((now.Sub(newest)/every.Delay + 1) * every.Delay)
	}
	return sched.Next(maxTime(now, newest))
}

// retain splits runs (newest first) into those kept and those dropped at now: a completed run
// beyond keep, or scheduled more than maxAge (when set) before now, goes, unless it is the newest
// completed one.
func retain(runs []ScheduledRun, keep int, maxAge time.Duration, now time.Time) (kept, dropped []ScheduledRun) {
	completed, failed := 0, 0
	for _, r := range runs {
		switch {
		case !r.Phase.Done():
			kept = append(kept, r)
		case r.Phase == v1alpha1.BackupCompleted:
			completed++
			tooOld := maxAge > 0 && now.Sub(r.ScheduledAt) > maxAge
			if completed == 1 || (completed <= keep && !tooOld) {
				kept = append(kept, r)
			} else {
				dropped = append(dropped, r)
			}
		case completed > 0 || failed >= keep: // Failed, and a newer run completed or enough failures shown
			dropped = append(dropped, r)
		default:
			failed++
			kept = append(kept, r)
		}
	}
	return kept, dropped
}

// lastRuns are, of runs (newest first), the newest completed and the newest done.
func lastRuns(runs []ScheduledRun) (completed, ended *ScheduledRun) {
	for i := range runs {
		r := runs[i]
		if completed == nil && r.Phase == v1alpha1.BackupCompleted {
			completed = &r
		}
		if ended == nil && r.Phase.Done() {
			ended = &r
		}
	}
	return completed, ended
}

// intervalRuns is how many consecutive scheduled times ScheduleInterval looks at: enough to see
// a weekday schedule's weekend and a monthly one's shortest and longest month.
const intervalRuns = 64

// ScheduleInterval is the longest time between two consecutive scheduled times of sched from
// now on, among the next intervalRuns: an @every schedule's delay; a weekday-only schedule's
// weekend. A backup missing for twice this long means backups stopped.
func ScheduleInterval(sched cron.Schedule, now time.Time) time.Duration {
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		return every.Delay
	}
	var longest time.Duration
	prev := sched.Next(now)
	for range intervalRuns {
		next := sched.Next(prev)
		if next.IsZero() || prev.IsZero() {
			break
		}
		longest = max(longest, next.Sub(prev))
		prev = next
	}
	return longest
}

func anyRunning(runs []ScheduledRun) bool {
	for _, r := range runs {
		if !r.Phase.Done() {
			return true
		}
	}
	return false
}

// newestFirst sorts a copy of runs by scheduled time, newest first (by name among equals).
func newestFirst(runs []ScheduledRun) []ScheduledRun {
	out := append([]ScheduledRun(nil), runs...)
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].ScheduledAt.Equal(out[j].ScheduledAt) {
			return out[i].ScheduledAt.After(out[j].ScheduledAt)
		}
		return out[i].Name > out[j].Name
	})
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

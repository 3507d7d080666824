package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// at is a time on the fixtures' day, 2026-12-06, UTC.
func clockAt(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2026-12-06 "+hhmm)
	if err != nil {
		panic(err)
	}
	return t
}

func run(hhmm string, phase v1alpha1.BackupPhase) ScheduledRun {
	return ScheduledRun{Name: ScheduledBackupName("nightly", clockAt(hhmm)), ScheduledAt: clockAt(hhmm), Phase: phase}
}

func newRun(hhmm string) *ScheduledRun {
	r := run(hhmm, "")
	return &r
}

const (
	runCompleted = v1alpha1.BackupCompleted
	runFailed    = v1alpha1.BackupFailed
	runRunning   = v1alpha1.BackupRunning
	runPending   = v1alpha1.BackupPending
)

func TestDecideSchedule(t *testing.T) {
	hourly := ScheduleInput{Name: "nightly", Schedule: "0 * * * *", Keep: 2, Created: clockAt("00:30")}
	for _, tc := range []struct {
		name string
		edit func(in *ScheduleInput)
		want ScheduleDecision
	}{
		{"before the first scheduled time nothing is due", func(in *ScheduleInput) { in.Now = clockAt("00:59") },
			ScheduleDecision{Next: clockAt("01:00"), ResyncAfter: time.Minute}},
		{"a due run is created, named by its scheduled time", func(in *ScheduleInput) { in.Now = clockAt("01:00") },
			ScheduleDecision{Create: newRun("01:00"), Next: clockAt("02:00"), ResyncAfter: time.Hour}},
		{"no run is due before the schedule was created", func(in *ScheduleInput) {
			in.Created, in.Now = clockAt("01:00"), clockAt("01:00")
		}, ScheduleDecision{Next: clockAt("02:00"), ResyncAfter: time.Hour}},
		{"the run that exists is not created again", func(in *ScheduleInput) {
			in.Now, in.Backups = clockAt("01:20"), []ScheduledRun{run("01:00", runCompleted)}
		}, ScheduleDecision{Keep: []ScheduledRun{run("01:00", runCompleted)}, Next: clockAt("02:00"), ResyncAfter: 40 * time.Minute}},
		{"missed runs are caught up once, with the latest due time, not in a burst", func(in *ScheduleInput) {
			in.Now, in.Backups = clockAt("05:10"), []ScheduledRun{run("01:00", runCompleted)}
		}, ScheduleDecision{Create: newRun("05:00"), Keep: []ScheduledRun{run("01:00", runCompleted)},
			Next: clockAt("06:00"), ResyncAfter: 50 * time.Minute}},
		{"nothing is created while a run of the schedule is not done", func(in *ScheduleInput) {
			in.Now, in.Backups = clockAt("02:05"), []ScheduledRun{run("01:00", runRunning)}
		}, ScheduleDecision{Keep: []ScheduledRun{run("01:00", runRunning)}, Next: clockAt("03:00"), ResyncAfter: 55 * time.Minute}},
		{"suspended: nothing is created and nothing is due", func(in *ScheduleInput) {
			in.Now, in.Suspend, in.Backups = clockAt("05:10"), true, []ScheduledRun{run("01:00", runCompleted)}
		}, ScheduleDecision{Keep: []ScheduledRun{run("01:00", runCompleted)}}},
		{"clock skew: a run from the future counts as the newest and none is created", func(in *ScheduleInput) {
			in.Now, in.Backups = clockAt("02:30"), []ScheduledRun{run("03:00", runPending), run("01:00", runCompleted)}
		}, ScheduleDecision{Keep: []ScheduledRun{run("03:00", runPending), run("01:00", runCompleted)},
			Next: clockAt("04:00"), ResyncAfter: 90 * time.Minute}},
		{"keep: the newest runCompleted runs stay, older ones go", func(in *ScheduleInput) {
			in.Now = clockAt("04:10")
			in.Backups = []ScheduledRun{run("01:00", runCompleted), run("04:00", runCompleted), run("02:00", runCompleted), run("03:00", runCompleted)}
		}, ScheduleDecision{Keep: []ScheduledRun{run("04:00", runCompleted), run("03:00", runCompleted)},
			Drop: []ScheduledRun{run("02:00", runCompleted), run("01:00", runCompleted)}, Next: clockAt("05:00"), ResyncAfter: 50 * time.Minute}},
		{"keep never drops a runRunning run, which does not count", func(in *ScheduleInput) {
			in.Now = clockAt("04:10")
			in.Backups = []ScheduledRun{run("04:00", runRunning), run("03:00", runCompleted), run("02:00", runCompleted), run("01:00", runCompleted)}
		}, ScheduleDecision{Keep: []ScheduledRun{run("04:00", runRunning), run("03:00", runCompleted), run("02:00", runCompleted)},
			Drop: []ScheduledRun{run("01:00", runCompleted)}, Next: clockAt("05:00"), ResyncAfter: 50 * time.Minute}},
		{"a runFailed run does not count toward keep and goes once a newer one runCompleted", func(in *ScheduleInput) {
			in.Now = clockAt("04:10")
			in.Backups = []ScheduledRun{run("04:00", runFailed), run("03:00", runCompleted), run("02:00", runFailed), run("01:00", runCompleted)}
		}, ScheduleDecision{Keep: []ScheduledRun{run("04:00", runFailed), run("03:00", runCompleted), run("01:00", runCompleted)},
			Drop: []ScheduledRun{run("02:00", runFailed)}, Next: clockAt("05:00"), ResyncAfter: 50 * time.Minute}},
		{"failures without a runCompleted run: the newest keep of them stay", func(in *ScheduleInput) {
			in.Now = clockAt("03:10")
			in.Backups = []ScheduledRun{run("01:00", runFailed), run("02:00", runFailed), run("03:00", runFailed)}
		}, ScheduleDecision{Keep: []ScheduledRun{run("03:00", runFailed), run("02:00", runFailed)},
			Drop: []ScheduledRun{run("01:00", runFailed)}, Next: clockAt("04:00"), ResyncAfter: 50 * time.Minute}},
		{"a descriptor", func(in *ScheduleInput) { in.Schedule, in.Now = "@every 15m", clockAt("00:50") },
			ScheduleDecision{Create: newRun("00:45"), Next: clockAt("01:00"), ResyncAfter: 10 * time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := hourly
			tc.edit(&in)
			got := DecideSchedule(in)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), ignoreOutcome); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideScheduleRefusesWhatDoesNotParse(t *testing.T) {
	for spec, want := range map[string]string{
		"0 3 * *":                       "does not parse",
		"61 * * * *":                    "does not parse",
		"CRON_TZ=Europe/Rome 0 3 * * *": "schedules are in UTC",
	} {
		in := ScheduleInput{Name: "nightly", Schedule: spec, Keep: 2, Now: clockAt("05:00"), Backups: []ScheduledRun{run("01:00", runCompleted)}}
		got := DecideSchedule(in)
		if !strings.Contains(got.Invalid, want) || got.Create != nil || !got.Next.IsZero() {
			t.Errorf("%q: %+v, want Invalid containing %q and nothing scheduled", spec, got, want)
		}
		if diff := cmp.Diff([]ScheduledRun{run("01:00", runCompleted)}, got.Keep); diff != "" {
			t.Errorf("%q: an invalid schedule still keeps its runs (-want +got):\n%s", spec, diff)
		}
	}
}

// A year of missed minutes is caught up by one run, found in a few dozen steps.
func TestLatestDueAfterALongGap(t *testing.T) {
	in := ScheduleInput{Name: "m", Schedule: "* * * * *", Keep: 1, Created: clockAt("00:00").AddDate(-1, 0, 0), Now: clockAt("12:34").Add(30 * time.Second)}
	got := DecideSchedule(in)
	if got.Create == nil || !got.Create.ScheduledAt.Equal(clockAt("12:34")) {
		t.Fatalf("Create %+v, want the run of 12:34", got.Create)
	}
}

// ignoreOutcome leaves out of a comparison what DecideSchedule reports beside the decision: the
// interval and the last runs, which tests of their own check.
var ignoreOutcome = cmpopts.IgnoreFields(ScheduleDecision{}, "Interval", "LastCompleted", "LastEnded")

// Two calls with the same input agree on the name, which is the scheduled time in Unix seconds.
func TestScheduledBackupName(t *testing.T) {
	if got, want := ScheduledBackupName("nightly", clockAt("01:00")), "nightly-1796518800"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
}

// Every run of an @every 30s schedule, two a minute, has a name of its own, and a second call at
// the same time names the run it created the same.
func TestRunNamesNeverCollide(t *testing.T) {
	in := ScheduleInput{Name: "fast", Schedule: "@every 30s", Keep: 1000, Created: clockAt("01:00")}
	seen := map[string]time.Time{}
	for i := 1; i <= 10; i++ {
		in.Now = clockAt("01:00").Add(time.Duration(i)*30*time.Second + time.Second)
		d := DecideSchedule(in)
		if d.Create == nil {
			t.Fatalf("call %d at %s created nothing", i, in.Now)
		}
		if again := DecideSchedule(in); again.Create == nil || again.Create.Name != d.Create.Name {
			t.Fatalf("a second call at %s named the run %v, the first %q", in.Now, again.Create, d.Create.Name)
		}
		if at, dup := seen[d.Create.Name]; dup {
			t.Fatalf("runs of %s and %s are both named %q", at, d.Create.ScheduledAt, d.Create.Name)
		}
		seen[d.Create.Name] = d.Create.ScheduledAt
		done := *d.Create
		done.Phase = runCompleted
		in.Backups = append(in.Backups, done)
	}
}

// maxAge drops completed runs scheduled longer ago, oldest first, beside keep; never the newest
// completed run, however old, and never a run not done.
func TestRetentionByAge(t *testing.T) {
	for _, tc := range []struct {
		name          string
		keepN         int
		maxAge        time.Duration
		now           string
		runs          []ScheduledRun
		kept, dropped []ScheduledRun
	}{
		{"runs older than maxAge go", 10, 2 * time.Hour, "04:10",
			[]ScheduledRun{run("04:00", runCompleted), run("03:00", runCompleted), run("02:00", runCompleted), run("01:00", runCompleted)},
			[]ScheduledRun{run("04:00", runCompleted), run("03:00", runCompleted)},
			[]ScheduledRun{run("02:00", runCompleted), run("01:00", runCompleted)}},
		{"keep drops what maxAge spares", 1, 24 * time.Hour, "04:10",
			[]ScheduledRun{run("04:00", runCompleted), run("03:00", runCompleted)},
			[]ScheduledRun{run("04:00", runCompleted)}, []ScheduledRun{run("03:00", runCompleted)}},
		{"the newest completed run stays, however old", 10, time.Hour, "23:00",
			[]ScheduledRun{run("04:00", runFailed), run("03:00", runCompleted), run("02:00", runCompleted)},
			[]ScheduledRun{run("04:00", runFailed), run("03:00", runCompleted)}, []ScheduledRun{run("02:00", runCompleted)}},
		{"a run not done is never dropped by age", 10, time.Hour, "23:00",
			[]ScheduledRun{run("05:00", runRunning), run("04:00", runPending), run("03:00", runCompleted)},
			[]ScheduledRun{run("05:00", runRunning), run("04:00", runPending), run("03:00", runCompleted)}, nil},
		{"no maxAge: age drops nothing", 10, 0, "23:00",
			[]ScheduledRun{run("03:00", runCompleted), run("02:00", runCompleted)},
			[]ScheduledRun{run("03:00", runCompleted), run("02:00", runCompleted)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := ScheduleInput{Name: "nightly", Schedule: "0 * * * *", Keep: tc.keepN, MaxAge: tc.maxAge, Created: clockAt("00:00"),
				Now: clockAt(tc.now), Backups: tc.runs, Suspend: true}
			got := DecideSchedule(in)
			if diff := cmp.Diff(tc.kept, got.Keep, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.dropped, got.Drop, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
		})
	}
}

// The newest completed run and the newest run that ended, by scheduled time.
func TestLastRuns(t *testing.T) {
	in := ScheduleInput{Name: "nightly", Schedule: "0 * * * *", Keep: 10, Created: clockAt("00:00"), Now: clockAt("05:10"), Suspend: true,
		Backups: []ScheduledRun{run("01:00", runCompleted), run("04:00", runRunning), run("03:00", runFailed), run("02:00", runCompleted)}}
	d := DecideSchedule(in)
	if d.LastCompleted == nil || d.LastCompleted.Name != run("02:00", "").Name || d.LastEnded == nil || d.LastEnded.Name != run("03:00", "").Name {
		t.Errorf("last completed %+v, last ended %+v; want 02:00's and 03:00's", d.LastCompleted, d.LastEnded)
	}
	in.Backups = []ScheduledRun{run("04:00", runRunning)}
	if d := DecideSchedule(in); d.LastCompleted != nil || d.LastEnded != nil {
		t.Errorf("with no run done: %+v, %+v", d.LastCompleted, d.LastEnded)
	}
}

// The longest time between consecutive scheduled times: a weekday schedule's weekend, a monthly
// schedule's longest month, an @every schedule's delay.
func TestScheduleInterval(t *testing.T) {
	for spec, want := range map[string]time.Duration{
		"0 * * * *":   time.Hour,
		"0 3 * * *":   24 * time.Hour,
		"0 3 * * 1-5": 72 * time.Hour,
		"0 3 1 * *":   31 * 24 * time.Hour,
		"@every 6h":   6 * time.Hour,
		"@daily":      24 * time.Hour,
	} {
		sched, err := ParseSchedule(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := ScheduleInterval(sched, clockAt("05:00")); got != want {
			t.Errorf("%s: %v, want %v", spec, got, want)
		}
	}
}

package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// at is a time on the fixtures' day, 2026-12-06, UTC.
func clockAt(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2026-12-06 "+hhmm)
	if err != nil {
		panic(err)
	}
	return t
}

func run(hhmm string, phase topology.BackupPhase) ScheduledRun {
	return ScheduledRun{Name: ScheduledBackupName("nightly", clockAt(hhmm)), ScheduledAt: clockAt(hhmm), Phase: phase}
}

func newRun(hhmm string) *ScheduledRun {
	r := run(hhmm, "")
	return &r
}

const (
	runCompleted = topology.BackupCompleted
	runFailed    = topology.BackupFailed
	runRunning   = topology.BackupRunning
	runPending   = topology.BackupPending
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
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
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

// Two calls with the same input agree on the name, which is the scheduled time in Unix minutes.
func TestScheduledBackupName(t *testing.T) {
	if got, want := ScheduledBackupName("nightly", clockAt("01:00")), "nightly-29941980"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
}

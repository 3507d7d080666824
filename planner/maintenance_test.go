package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// utc is a time in UTC written as "2006-01-02 15:04".
func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

// Saturdays at 02:00 for 4h (2026-01-03 is a Saturday), and nightly at 23:00 for 3h, which crosses
// midnight.
var (
	saturdays = topology.Window{Schedule: "0 2 * * 6", Duration: 4 * time.Hour}
	nightly   = topology.Window{Schedule: "0 23 * * *", Duration: 3 * time.Hour}
)

func TestMaintenanceAt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		windows []topology.Window
		now     time.Time
		want    Maintenance
	}{
		{"no window declared: a hook release's change rolls at once", nil, utc("2026-01-01 12:00"),
			Maintenance{}},
		{"closed: the next start is named", []topology.Window{saturdays}, utc("2026-01-01 12:00"),
			Maintenance{Declared: true, Next: utc("2026-01-03 02:00")}},
		{"open at its very start", []topology.Window{saturdays}, utc("2026-01-03 02:00"),
			Maintenance{Declared: true, Open: true}},
		{"open inside", []topology.Window{saturdays}, utc("2026-01-03 05:59"),
			Maintenance{Declared: true, Open: true}},
		{"closed at its end: the next is a week later", []topology.Window{saturdays}, utc("2026-01-03 06:00"),
			Maintenance{Declared: true, Next: utc("2026-01-10 02:00")}},
		{"a window crossing midnight is open after it", []topology.Window{nightly}, utc("2026-01-02 01:30"),
			Maintenance{Declared: true, Open: true}},
		{"and before it", []topology.Window{nightly}, utc("2026-01-01 23:30"),
			Maintenance{Declared: true, Open: true}},
		{"and closed once it ends the next day", []topology.Window{nightly}, utc("2026-01-02 02:00"),
			Maintenance{Declared: true, Next: utc("2026-01-02 23:00")}},
		{"several windows: closed, the earliest next start", []topology.Window{saturdays, nightly}, utc("2026-01-02 12:00"),
			Maintenance{Declared: true, Next: utc("2026-01-02 23:00")}},
		{"several windows: open when any is", []topology.Window{nightly, saturdays}, utc("2026-01-03 04:00"),
			Maintenance{Declared: true, Open: true}},
		{"a time with another zone is read in UTC", []topology.Window{saturdays},
			utc("2026-01-03 02:30").In(time.FixedZone("UTC+5", 5*3600)), Maintenance{Declared: true, Open: true}},
		{"a schedule that never fires never opens", []topology.Window{{Schedule: "0 0 30 2 *", Duration: time.Hour}}, utc("2026-01-01 12:00"),
			Maintenance{Declared: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MaintenanceAt(tc.windows, tc.now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("MaintenanceAt (-want +got):\n%s", diff)
			}
			if may := got.MayRoll(); may != (!tc.want.Declared || tc.want.Open) {
				t.Errorf("MayRoll = %v", may)
			}
		})
	}
}

// A window whose schedule does not parse never opens; the others still do, and the message says
// which one is broken and why.
func TestMaintenanceWithABrokenSchedule(t *testing.T) {
	broken := topology.Window{Schedule: "0 25 * * *", Duration: time.Hour}
	m := MaintenanceAt([]topology.Window{broken, saturdays}, utc("2026-01-01 12:00"))
	if m.Open || !m.Next.Equal(utc("2026-01-03 02:00")) || !strings.Contains(m.Invalid, "spec.maintenanceWindows[0]") {
		t.Errorf("MaintenanceAt = %+v", m)
	}
	for _, want := range []string{"at 2026-01-03T02:00:00Z", "spec.maintenanceWindows[0]", "0 25 * * *", "kubectl memgraph restart"} {
		if msg := m.waiting(); !strings.Contains(msg, want) {
			t.Errorf("waiting() = %q, want it to name %q", msg, want)
		}
	}
	only := MaintenanceAt([]topology.Window{broken}, utc("2026-01-01 12:00"))
	if only.MayRoll() || !strings.Contains(only.waiting(), "no window's schedule parses") {
		t.Errorf("only a broken window: MayRoll %v, %q", only.MayRoll(), only.waiting())
	}
}

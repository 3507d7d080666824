package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Maintenance windows. A pod-template change that a release of the hook brings (not the spec:
// NextTemplateRecord tells them apart) rolls only while one of spec.maintenanceWindows is open;
// without windows it rolls at once, like any other change. A window opens at each time of its
// cron schedule (UTC) and stays open for its duration, the start included and the end not.

// Maintenance is what the windows say at one time.
type Maintenance struct {
	// Declared: the spec declares at least one window.
	Declared bool
	// Open: a window is open now.
	Open bool
	// Next is the start of the next window when none is open (zero when no window parses).
	Next time.Time
	// Invalid says which windows' schedules do not parse, and why ("" when all do): they never
	// open.
	Invalid string
}

// MaintenanceAt is the windows' state at now.
func MaintenanceAt(windows []topology.Window, now time.Time) Maintenance {
	m := Maintenance{Declared: len(windows) > 0}
	now = now.UTC() // the schedules are in UTC
	var invalid []string
	for i, w := range windows {
		schedule, err := ParseSchedule(w.Schedule)
		if err != nil {
			invalid = append(invalid, fmt.Sprintf("spec.maintenanceWindows[%d]: %v", i, err))
			continue
		}
		// The window that opened last before now, if any, opened after now-duration.
		// (Next is zero for a schedule that never fires, such as February 30th.)
		if start := schedule.Next(now.Add(-w.Duration)); !start.IsZero() && !start.After(now) {
			m.Open = true
		}
		if next := schedule.Next(now); !next.IsZero() && (m.Next.IsZero() || next.Before(m.Next)) {
			m.Next = next
		}
	}
	m.Invalid = strings.Join(invalid, "; ")
	if m.Open {
		m.Next = time.Time{}
	}
	return m
}

// MayRoll answers the one question the rollout asks of the windows: may a pod-template change
// that a hook release brought roll now? Yes while a window is open, or when none is declared.
func (m Maintenance) MayRoll() bool { return !m.Declared || m.Open }

// heldForWindow is the one place a decision asks the windows: a set whose next record is
// record (NextTemplateRecord) waits with its rollout — a hook release's change alone — until a
// window lets it roll.
func (w *Workloads) heldForWindow(record topology.TemplateRecord) bool {
	return record.HookChange && !w.Maintenance.MayRoll()
}

// waiting says what a hook release's change waits for, for the Updated condition.
func (m Maintenance) waiting() string {
	msg := "the pod template change of a hook release waits for a maintenance window (spec.maintenanceWindows)"
	switch {
	case !m.Next.IsZero():
		at, _ := m.Next.MarshalText()
		msg = fmt.Sprintf("the pod template change of a hook release waits for the next maintenance window, at %s (spec.maintenanceWindows)", at)
	case m.Invalid != "":
		msg += ", and no window's schedule parses"
	}
	if m.Invalid != "" {
		msg += "; " + m.Invalid
	}
	return msg + "; a restart (kubectl memgraph restart) applies it now"
}

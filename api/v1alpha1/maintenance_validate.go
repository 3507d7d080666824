package v1alpha1

import (
	"fmt"
	"strings"
	"time"
)

// The admission twins of spec.maintenanceWindows' rules.

const (
	MsgWindowSchedule = "maintenanceWindows[].schedule must be a cron schedule of five fields in UTC (minute hour day-of-month month day-of-week), such as \"0 2 * * 6\" for Saturdays at 02:00"
	MsgWindowDuration = "maintenanceWindows[].duration must be a duration from 1m to 168h written in hours, minutes and seconds, such as 4h or 1h30m: how long each window stays open"
)

// OpenFor is how long each opening of the window lasts: its duration, which admission has checked
// (zero for one that skipped it).
func (w MaintenanceWindow) OpenFor() time.Duration {
	seconds, _ := stepTimeoutSeconds(w.Duration)
	return time.Duration(seconds) * time.Second
}

// cronFields counts the schedule's fields as the rule does: the non-empty parts between spaces.
func cronFields(schedule string) int {
	n := 0
	for _, f := range strings.Split(schedule, " ") {
		if f != "" {
			n++
		}
	}
	return n
}

// validateWindows is the twin of the windows' rules: five fields, and the stepTimeout's shape and
// range of duration. Whether the five fields parse as cron is the planner's to say
// (planner.MaintenanceAt): an unparsable window never opens, and Updated says why.
func validateWindows(vs *violations, windows []MaintenanceWindow) {
	for i, w := range windows {
		vs.add(cronFields(w.Schedule) != 5,
			fmt.Sprintf("spec.maintenanceWindows[%d].schedule", i), MsgWindowSchedule)
		_, ok := stepTimeoutSeconds(w.Duration)
		vs.add(!ok, fmt.Sprintf("spec.maintenanceWindows[%d].duration", i), MsgWindowDuration)
	}
}

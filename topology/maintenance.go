package topology

import (
	"fmt"
	"strings"
	"time"
)

// Maintenance windows (spec.maintenanceWindows): when a pod-template change that a release of
// the hook brings may roll the pods. Whether one is open at a time is the planner's
// (planner.MaintenanceAt); this file holds the spec's shape and its admission twins.

const (
	MsgWindowSchedule = "maintenanceWindows[].schedule must be a cron schedule of five fields in UTC (minute hour day-of-month month day-of-week), such as \"0 2 * * 6\" for Saturdays at 02:00"
	MsgWindowDuration = "maintenanceWindows[].duration must be a duration from 1m to 168h written in hours, minutes and seconds, such as 4h or 1h30m: how long each window stays open"
)

// Window is one admitted maintenance window: its cron schedule (five fields, UTC) and how long
// each window stays open.
// +kubebuilder:object:generate=false
type Window struct {
	Schedule string
	Duration time.Duration
}

// MaintenanceWindows are the spec's windows, in order; none when the spec declares none.
func (c *Cluster) MaintenanceWindows() []Window {
	out := make([]Window, 0, len(c.mc.Spec.MaintenanceWindows))
	for _, w := range c.mc.Spec.MaintenanceWindows {
		seconds, _ := stepTimeoutSeconds(w.Duration) // admitted: the window rule's range
		out = append(out, Window{Schedule: w.Schedule, Duration: time.Duration(seconds) * time.Second})
	}
	return out
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

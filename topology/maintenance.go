package topology

import (
	"time"
)

// Maintenance windows (spec.maintenanceWindows): when a pod-template change that a release of
// the hook brings may roll the pods. Whether one is open at a time is the planner's
// (planner.MaintenanceAt); this file gives the planner the admitted windows.

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
		out = append(out, Window{Schedule: w.Schedule, Duration: w.OpenFor()})
	}
	return out
}

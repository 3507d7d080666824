package sim

import (
	"fmt"
	"slices"
	"time"
)

// Change is one change in what the simulated Memgraph reports, as the World made it: a process
// stopping or starting, a Raft leadership won or lost, a leader becoming ready, a MAIN set or
// cleared. Every health, role and leader that SHOW INSTANCES, SHOW REPLICATION LAG and SHOW
// REPLICAS report follows from these (a health turns down instance_down_timeout_sec after the
// stop the log holds).
type Change struct {
	At   time.Time
	Host string // the process, or for a Raft group's change the host of its first member
	What string
}

func (c Change) String() string {
	return fmt.Sprintf("%s %s %s", c.At.Format("15:04:05.000"), c.Host, c.What)
}

// Changes returns every change the World made up to now, oldest first, each at the simulated
// instant it happened (timed ones, such as a failover, are applied first).
func (w *World) Changes() []Change {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	return slices.Clone(w.changes)
}

// changed records a change of host's process. Caller holds w.mu.
func (w *World) changed(host, what string) {
	w.changes = append(w.changes, Change{At: w.cur, Host: host, What: what})
}

// clusterChanged records a change of Raft group c, under its first member's host. Caller holds
// w.mu.
func (w *World) clusterChanged(c *cluster, what string) {
	host := ""
	if len(c.members) > 0 {
		host = c.members[0].host
	}
	w.changed(host, what)
}

package sim

import (
	"fmt"
	"time"
)

// The two coordinator settings that time the leader's health checks, and what Memgraph v3.12.0
// does with a 0 in them. SET COORDINATOR SETTING takes 0 for both (any uint32,
// coordinator_instance.cpp 1081–1149):
//
//   - instance_health_check_frequency_sec 0: the leader that commits it stops health-checking
//     (its schedulers get a zero interval, which waits forever: utils/scheduler.cpp 46–49,
//     131–135), so it never fails over and its view of each instance's health stays as it was;
//     every coordinator that afterwards starts a health check aborts on MG_ASSERT(frequency >
//     0) (replication_instance_client.cpp 60–66): a leader reconciling registered data
//     instances after its election or FORCE RESET CLUSTER STATE (coordinator_instance.cpp
//     133–147, 437–482), and the leader that registers an instance (732–828). The value stays in
//     the Raft log, so each coordinator elected after a restart aborts again: the coordinators
//     crash-loop until their Raft data is wiped. Setting it back to a positive value on that
//     leader, before it loses the leadership, mends the Raft log for the next leader but does
//     not wake its own checks: the scheduler thread waits on, as SetInterval notifies no one
//     (scheduler.cpp 46–55, 164–175).
//   - instance_down_timeout_sec 0: an instance is down as soon as it stops answering
//     (replication_instance_connector.cpp 36–40), which the health model gives by itself.
//
// Both are recorded as misuses when committed: no careful client sends them.
const (
	settingHealthCheckFrequency = "instance_health_check_frequency_sec"
	settingDownTimeout          = "instance_down_timeout_sec"
)

// frozenChecks is the leader's view of its data instances when its health checks stopped: each
// one's health and when it last answered.
type frozenChecks struct {
	healthy map[string]bool
	heard   map[string]time.Time
}

// settingCommitted applies a committed coordinator setting's effect on the leader's health
// checks, and records a 0 in either timing as a misuse. Caller holds w.mu.
func (w *World) settingCommitted(c *cluster, op *coordOp, name, stored string) {
	switch {
	case name == settingHealthCheckFrequency && stored == "0":
		w.misuse(op.host, op.query, MisuseZeroHealthCheckFrequency, "SET COORDINATOR SETTING instance_health_check_frequency_sec to 0: "+
			"the leader stops health-checking and every coordinator that leads the registered instances afterwards aborts")
		if c.frozen == nil {
			c.frozen = w.freezeChecks(c)
		}
	case name == settingDownTimeout && stored == "0":
		w.misuse(op.host, op.query, MisuseZeroDownTimeout, "SET COORDINATOR SETTING instance_down_timeout_sec to 0: "+
			"an instance is down on the first health check it misses")
	}
}

func (w *World) freezeChecks(c *cluster) *frozenChecks {
	f := &frozenChecks{healthy: map[string]bool{}, heard: map[string]time.Time{}}
	for _, e := range c.data {
		f.healthy[e.name], f.heard[e.name] = w.dataHealthy(c, e), w.dataLastHeard(c, e)
	}
	return f
}

// startsNoHealthCheck: the Raft log holds a health-check frequency of 0, so a coordinator that
// starts a health check aborts.
func startsNoHealthCheck(c *cluster) bool { return c.settings[settingHealthCheckFrequency] == "0" }

// abortOnHealthCheck is the leader process aborting as it starts a health check with a frequency
// of 0 (the MG_ASSERT): the listener is torn down without waiting for its connections, and an
// election follows, a majority permitting. It reports whether the leader aborted. Caller holds
// w.mu.
func (w *World) abortOnHealthCheck(c *cluster) bool {
	leader := w.leaderInstance(c)
	if leader == nil || !startsNoHealthCheck(c) {
		return false
	}
	w.exitProcess(leader)
	return true
}

// msgHealthCheckAbort never reaches a client (the process is gone before it answers); it is what
// the simulator records for the query during which the leader aborted.
var msgHealthCheckAbort = fmt.Sprintf("sim: the leader aborted: Assertion 'instance_health_check_frequency_sec_ > std::chrono::seconds(0)' failed with message: 'Health check frequency must be greater than 0' (%s is 0 in the Raft log)", settingHealthCheckFrequency)

package planner

import "github.com/memgraph-hooks/memgraph-hooks/memgraph"

// Leadership is what one SHOW INSTANCES answer says about the Raft leader.
type Leadership int

const (
	// NoLeader: no row reports role leader (the coordinator knows no leader; its view is its
	// own Raft copy with every health unknown).
	NoLeader Leadership = iota
	// LeaderNotReady: a leader is named, but its own row's health is unknown: it was just
	// elected, or runs FORCE RESET CLUSTER STATE, and has not finished reconciling. Such a
	// table is the leader's local Raft copy (every health unknown, data roles from Raft); its
	// writes answer "leader couldn't be found" and SHOW REPLICATION LAG answers no rows. It is
	// no evidence that any instance is down or unregistered: there is no leader yet.
	LeaderNotReady
	// LeaderReady: the leader answers with its own table (its row is up).
	LeaderReady
)

// ReadLeadership names the leader of one SHOW INSTANCES answer and whether it is ready. A ready
// leader always reports itself up (its own last response is 0 ms old); a not-ready one reports
// every health unknown.
func ReadLeadership(rows []memgraph.Instance) (leader string, state Leadership) {
	for _, r := range rows {
		if r.IsCoordinator() && r.Role == memgraph.RoleLeader {
			if r.Health == memgraph.HealthUnknown {
				return r.Name, LeaderNotReady
			}
			return r.Name, LeaderReady
		}
	}
	return "", NoLeader
}

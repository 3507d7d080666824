package sim

import (
	"maps"
	"slices"
)

// MisuseKind names a protocol misuse a correct client never commits.
type MisuseKind string

const (
	MisuseSecondMain          MisuseKind = "second-main"
	MisuseUnregisterAliveMain MisuseKind = "unregister-alive-main"
	MisuseRemoveLeader        MisuseKind = "remove-leader"
	MisuseQueryInTransaction  MisuseKind = "coordinator-query-in-transaction"
	MisuseSelfAddWrongAddress MisuseKind = "self-add-wrong-address"
	// MisuseRemoveHalfJoined: REMOVE COORDINATOR of a member the leader's application log does
	// not hold (listed with an empty bolt_server). Memgraph's leader exits; so does the
	// simulator's.
	MisuseRemoveHalfJoined MisuseKind = "remove-half-joined-coordinator"
	// MisuseNewerMainOlderReplica: a client made a MAIN (SET INSTANCE … TO MAIN) while an alive
	// registered data instance runs an older known version, or a data instance was (re)started
	// at a version older than its cluster's alive MAIN (or, as MAIN, newer than an alive
	// replica): the older replica cannot read the MAIN's replication messages (versions.go).
	// A failover the coordinators chose themselves breaks replication the same way but is not
	// recorded.
	MisuseNewerMainOlderReplica MisuseKind = "newer-main-older-replica"
	// MisusePromoteBehind: a handover (SET INSTANCE … TO MAIN right after DEMOTE INSTANCE of
	// the MAIN) made a MAIN of an instance that holds fewer transactions on some database than
	// the MAIN it replaces: the cluster follows the new MAIN and the demoted one is reset to it,
	// so what only the old MAIN had is lost. A handover target must be proven caught up, and a
	// lag of 0 is no proof (a recovering replica shows it).
	MisusePromoteBehind MisuseKind = "promote-behind"
	// MisuseZeroHealthCheckFrequency: SET COORDINATOR SETTING committed
	// instance_health_check_frequency_sec 0, which Memgraph 3.12 takes and then crash-loops every
	// coordinator on (healthcheck.go).
	MisuseZeroHealthCheckFrequency MisuseKind = "zero-health-check-frequency"
	// MisuseZeroDownTimeout: SET COORDINATOR SETTING committed instance_down_timeout_sec 0, which
	// counts an instance down on the first health check it misses.
	MisuseZeroDownTimeout MisuseKind = "zero-instance-down-timeout"
)

// Misuse is one query (or restart) that a careful client should never have sent (or made).
// Host is the instance the client sent it to (the restarted instance, with an empty Query, for
// a restart); Description does not depend on time.
type Misuse struct {
	Kind        MisuseKind
	Host        string
	Query       string
	Description string
}

func (w *World) misuse(host, query string, kind MisuseKind, desc string) {
	w.misuses = append(w.misuses, Misuse{Kind: kind, Host: host, Query: query, Description: desc})
}

// Misuses returns every misuse recorded so far, oldest first.
func (w *World) Misuses() []Misuse {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.misuses)
}

// Queries returns every query any instance received, in arrival order.
func (w *World) Queries() []Query {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.queries)
}

// QueryLog returns the queries host received, in order.
func (w *World) QueryLog(host string) []Query {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Query
	for _, q := range w.queries {
		if q.Host == host {
			out = append(out, q)
		}
	}
	return out
}

// ResetLog forgets the query log (not the misuses).
func (w *World) ResetLog() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queries = nil
}

// RaftSnapshot is the replicated state of every Raft group in the world.
type RaftSnapshot struct {
	Clusters []ClusterSnapshot
}

// ClusterSnapshot is one Raft group. Leader is 0 when there is none.
type ClusterSnapshot struct {
	Members  []MemberSnapshot // Raft configuration order
	Leader   int
	Ready    bool           // the leader finished reconciling (answers writes and its own table)
	Quorum   bool           // a majority of the members is alive
	Data     []DataSnapshot // registration order
	Main     string         // MAIN in Raft ("" when none), alive or not
	Settings map[string]string
}

// MemberSnapshot is a coordinator in a Raft configuration.
type MemberSnapshot struct {
	ID                int
	Host              string
	BoltServer        string
	CoordinatorServer string
	ManagementServer  string
	Added             bool // in the leader's application log (false: a fresh self entry, or half-joined)
	Alive             bool
}

// DataSnapshot is a registered data instance with the instance's own state.
type DataSnapshot struct {
	Name              string
	Host              string // "" when no started instance has its management server
	BoltServer        string
	ManagementServer  string
	ReplicationServer string
	Mode              string // "sync", "async" or "strict_sync"
	Role              string // "main" or "replica" in Raft
	Health            string // "up" or "down": the process itself (SHOW INSTANCES lags behind it)
	Committed         map[string]int64
}

// Raft returns a copy of every cluster some coordinator process belongs to, oldest first.
func (w *World) Raft() RaftSnapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	var snap RaftSnapshot
	for _, c := range w.clusters() {
		cs := ClusterSnapshot{Leader: c.leader, Ready: c.leader != 0 && c.ready, Quorum: w.hasQuorum(c), Main: c.main,
			Settings: maps.Clone(c.settings)}
		for _, m := range c.members {
			cs.Members = append(cs.Members, MemberSnapshot{ID: m.id, Host: m.host, BoltServer: m.bolt,
				CoordinatorServer: m.coordServer, ManagementServer: m.mgmt, Added: m.added, Alive: w.memberAlive(c, m)})
		}
		for _, e := range c.data {
			ds := DataSnapshot{Name: e.name, BoltServer: e.bolt, ManagementServer: e.mgmt, ReplicationServer: e.repl,
				Mode: e.mode, Role: "replica", Health: "down"}
			if c.main == e.name {
				ds.Role = "main"
			}
			if in := w.dataInstance(e); in != nil {
				ds.Host, ds.Committed = in.host, maps.Clone(in.txns)
				if in.alive {
					ds.Health = "up"
				}
			}
			cs.Data = append(cs.Data, ds)
		}
		snap.Clusters = append(snap.Clusters, cs)
	}
	return snap
}

// Running reports whether the process at host runs (false once killed, removed, crashed or
// exited, as a coordinator that learnt no leader in CoordinatorInitTimeout does).
func (w *World) Running(host string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	in, ok := w.instances[host]
	return ok && in.alive
}

// Leader returns the leader of the largest cluster (ties: the oldest); ok is false when it
// has none or there are no coordinators.
func (w *World) Leader() (id int, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	var best *cluster
	for _, c := range w.clusters() {
		if best == nil || len(c.members) > len(best.members) {
			best = c
		}
	}
	if best == nil || best.leader == 0 {
		return 0, false
	}
	return best.leader, true
}

// Committed is what every database of the data instance at host holds: its committed
// transactions, by database (nil for no such data instance).
func (w *World) Committed(host string) map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	in, ok := w.instances[host]
	if !ok || in.coord {
		return nil
	}
	return maps.Clone(in.txns)
}

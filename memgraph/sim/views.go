package sim

import (
	"fmt"
	"slices"
)

// leaderView is ShowInstancesAsLeader: coordinators (Raft configuration order), then data
// instances (registration order). Health follows liveness at once (no instance_down_timeout).
func (w *World) leaderView(c *cluster) [][]any {
	var rows [][]any
	for _, m := range c.members {
		health, ms := "down", w.downMs(m.host)
		if w.memberAlive(c, m) {
			health, ms = "up", 0
		}
		role := "follower"
		if m.id == c.leader {
			role = "leader"
		}
		rows = append(rows, []any{coordName(m.id), m.bolt, m.coordServer, m.mgmt, health, role, ms})
	}
	for _, e := range c.data {
		health, role, ms := "down", "unknown", int64(0)
		if in := w.dataInstance(e); in != nil && in.alive {
			health, role = "up", "replica"
			if c.main == e.name {
				role = "main"
			}
		} else if in != nil {
			ms = w.downMs(in.host)
		}
		rows = append(rows, []any{e.name, e.bolt, "", e.mgmt, health, role, ms})
	}
	return rows
}

// followerView is ShowInstancesStatusAsFollower, used when no leader is known: every health
// is unknown, no coordinator is leader, data roles come from Raft.
func (w *World) followerView(c *cluster) [][]any {
	var rows [][]any
	for _, m := range c.members {
		rows = append(rows, []any{coordName(m.id), m.bolt, m.coordServer, m.mgmt, "unknown", "follower", int64(0)})
	}
	for _, e := range c.data {
		role := "replica"
		if c.main == e.name {
			role = "main"
		}
		rows = append(rows, []any{e.name, e.bolt, "", e.mgmt, "unknown", role, int64(0)})
	}
	return rows
}

func (w *World) downMs(host string) int64 {
	in, ok := w.instances[host]
	if !ok || in.downSince.IsZero() {
		return 0
	}
	return max(w.now().Sub(in.downSince).Milliseconds(), 0)
}

func coordName(id int) string { return fmt.Sprintf("coordinator_%d", id) }

// selfRow is SHOW INSTANCE: the coordinator the client is connected to.
func (w *World) selfRow(in *instance) []any {
	c := in.cluster
	bolt := ""
	if m := c.member(in.cspec.ID); m != nil {
		bolt = m.bolt
	}
	role := "follower"
	if c.leader == in.cspec.ID {
		role = "leader"
	}
	return []any{coordName(in.cspec.ID), bolt, in.coordAddr(), in.mgmtAddr(), role}
}

// lagRows is SHOW REPLICATION LAG: one row per registered instance including the MAIN, none
// when the MAIN is absent or dead. Databases are the MAIN's.
func (w *World) lagRows(c *cluster) [][]any {
	me := c.entry(c.main)
	if me == nil {
		return nil
	}
	main := w.dataInstance(me)
	if main == nil || !main.alive {
		return nil
	}
	dbs := make([]string, 0, len(main.txns))
	for db := range main.txns {
		dbs = append(dbs, db)
	}
	slices.Sort(dbs)
	var rows [][]any
	for _, e := range c.data {
		var txns map[string]int64
		if in := w.dataInstance(e); in != nil {
			txns = in.txns
		}
		info := map[string]any{}
		for _, db := range dbs {
			info[db] = map[string]any{"num_committed_txns": txns[db], "num_txns_behind_main": main.txns[db] - txns[db]}
		}
		rows = append(rows, []any{e.name, info})
	}
	return rows
}

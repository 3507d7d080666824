package sim

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// leaderView is ShowInstancesAsLeader, the ready leader's table: coordinators (Raft
// configuration order), then data instances (registration order), healthy per the leader's
// failure detectors (see World's Time section).
func (w *World) leaderView(c *cluster) [][]any {
	rows := make([][]any, 0, len(c.members)+len(c.data))
	for _, m := range c.members {
		health, ms := "down", msSince(w.cur, w.memberLastSeen(c, m))
		if w.memberAlive(c, m) {
			health, ms = "up", 0
		} else if w.memberHealthy(c, m) {
			health = "up"
		}
		role := "follower"
		if m.id == c.leader {
			role = "leader"
		}
		rows = append(rows, []any{w.cell(coordName(m.id)), w.cell(m.bolt), w.cell(m.coordServer), w.cell(m.mgmt), health, role, ms})
	}
	for _, e := range c.data {
		health, role, ms := "down", "unknown", msSince(w.cur, w.dataLastHeard(c, e))
		if w.dataHealthy(c, e) {
			health, role = "up", "replica"
			if c.main == e.name {
				role = "main"
			}
		}
		rows = append(rows, []any{w.cell(e.name), w.cell(e.bolt), "", w.cell(e.mgmt), health, role, ms})
	}
	return rows
}

// cell is s boxed for a row, the same box for the same text (World.cells).
func (w *World) cell(s string) any {
	if v, ok := w.cells[s]; ok {
		return v
	}
	if w.cells == nil {
		w.cells = map[string]any{}
	}
	var v any = s
	w.cells[s] = v
	return v
}

// localView is ShowInstancesStatusAsFollower: what a coordinator answers from its own Raft copy
// when no ready leader serves the table (no leader known, or the leader itself is not ready).
// Every health is unknown; the known leader, if any, is role leader; data roles come from Raft.
func (w *World) localView(c *cluster) [][]any {
	var rows [][]any
	for _, m := range c.members {
		role := "follower"
		if m.id == c.leader {
			role = "leader"
		}
		rows = append(rows, []any{coordName(m.id), m.bolt, m.coordServer, m.mgmt, "unknown", role, int64(0)})
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

func coordName(id int) string { return "coordinator_" + strconv.Itoa(id) }

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

// lagRows is SHOW REPLICATION LAG on a ready leader: the MAIN's row and those of the replicas
// registered on it, sorted by instance name; none when there is no MAIN or its process does not
// answer. Databases are the MAIN's. A replica's num_committed_txns is the MAIN's cached count for
// it, advance-only and not reset when the replica loses its data, and num_txns_behind_main the
// MAIN's count minus that (Memgraph v3.12.0 src/replication_handler/replication_handler.cpp
// 423–460): a wiped replica still recovering shows 0 behind.
func (w *World) lagRows(c *cluster) [][]any {
	main := w.mainOf(c)
	if main == nil {
		return nil
	}
	dbs := slices.Sorted(maps.Keys(main.txns))
	entries := slices.Clone(c.data)
	slices.SortFunc(entries, func(a, b *dataEntry) int { return strings.Compare(a.name, b.name) })
	var rows [][]any
	for _, e := range entries {
		info := map[string]any{}
		for _, db := range dbs {
			n := main.txns[db]
			if e.name != c.main {
				n = cached(main, e.name, db)
			}
			info[db] = map[string]any{"num_committed_txns": n, "num_txns_behind_main": main.txns[db] - n}
		}
		rows = append(rows, []any{e.name, info})
	}
	return rows
}

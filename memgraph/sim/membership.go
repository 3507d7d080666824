package sim

import (
	"fmt"
	"time"
)

// addCoordinator is ADD COORDINATOR on the leader (CoordinatorInstance::AddCoordinatorInstance).
// The id check reads the application log for the leader itself and NuRaft's configuration for
// anyone else, so a half-joined member's id "already exists"; the endpoint checks read NuRaft's
// configuration too.
func (w *World) addCoordinator(c *cluster, leader *instance, op *coordOp) ([]map[string]any, string) {
	id, cfg := int(op.id), op.cfg
	if m := c.member(id); m != nil && (m.added || id != leader.cspec.ID) {
		return nil, msgCoordIDExists
	}
	if id == leader.cspec.ID {
		return w.addSelf(c, leader, op)
	}
	for _, m := range c.members {
		if m.mgmt == cfg["management_server"] {
			return nil, msgCoordMgmtExists
		}
	}
	for _, m := range c.members {
		if m.coordServer == cfg["coordinator_server"] {
			return nil, msgCoordServerExists
		}
	}
	if msg := w.commit(c); msg != "" {
		return nil, msg
	}
	target := w.coordinatorAt(cfg["coordinator_server"])
	host := hostOf(cfg["coordinator_server"])
	if target != nil {
		host = target.host
	}
	delay := w.joinDelay[host]
	joinsNow := target != nil && target.alive && target.cspec.ID == id && target.cluster != c && w.joinable(target.cluster)
	if !joinsNow || delay >= AddCoordinatorWait {
		// NuRaft accepted add_srv but the server did not show up within Memgraph's poll; with a
		// join delay it shows up later, known to NuRaft only.
		if delay > 0 {
			w.joins = append(w.joins, &pendingJoin{c: c, id: id, host: host,
				coordServer: cfg["coordinator_server"], mgmt: cfg["management_server"], at: w.cur.Add(delay)})
		}
		return nil, msgAddTimeout(op.id)
	}
	target.cluster = c
	c.members = append(c.members, &member{id: id, host: target.host, bolt: cfg["bolt_server"],
		coordServer: cfg["coordinator_server"], mgmt: cfg["management_server"], added: true})
	w.reelect()
	return []map[string]any{noteAddCoordinator(op.id, cfg["coordinator_server"])}, ""
}

// addSelf is ADD COORDINATOR for the leader itself: its addresses must be its own flags, as
// strings.
func (w *World) addSelf(c *cluster, leader *instance, op *coordOp) ([]map[string]any, string) {
	cfg := op.cfg
	if cfg["coordinator_server"] != leader.coordAddr() || cfg["management_server"] != leader.mgmtAddr() {
		w.misuse(op.host, op.query, MisuseSelfAddWrongAddress, fmt.Sprintf(
			"ADD COORDINATOR %d for the leader itself with coordinator_server %q and management_server %q; it runs as %q and %q",
			op.id, cfg["coordinator_server"], cfg["management_server"], leader.coordAddr(), leader.mgmtAddr()))
		return nil, msgDiffNetworkConfig(op.id)
	}
	if msg := w.commit(c); msg != "" {
		return nil, msg
	}
	self := c.member(leader.cspec.ID)
	self.bolt, self.added = cfg["bolt_server"], true
	return []map[string]any{noteAddCoordinator(op.id, cfg["coordinator_server"])}, ""
}

// joinable reports whether a server accepts NuRaft's join request: one leading only itself (a
// fresh coordinator) or one left without a leader after it was removed from its cluster
// (handle_join_cluster_req resets such a server's configuration to the joining leader's).
// A server in another live, led cluster of several members never shows up.
func (w *World) joinable(c *cluster) bool {
	return len(c.members) == 1 || c.leader == 0
}

func (w *World) coordinatorAt(coordServer string) *instance {
	for _, in := range w.instances {
		if in.coord && in.coordAddr() == coordServer {
			return in
		}
	}
	return nil
}

// removeCoordinator is REMOVE COORDINATOR on the leader. NuRaft removes the member first; the
// leader then drops it from its application log, and when the log never held it (a half-joined
// member, or a coordinator that never ADDed itself) Memgraph's LOG_FATAL ends the leader
// process: the simulator crashes it and records the misuse.
func (w *World) removeCoordinator(c *cluster, leader *instance, op *coordOp) ([]map[string]any, string) {
	id := int(op.id)
	m := c.member(id)
	if m == nil {
		return nil, msgNoSuchCoordinator(op.id)
	}
	if id == c.leader {
		w.misuse(op.host, op.query, MisuseRemoveLeader, fmt.Sprintf("REMOVE COORDINATOR %d while it is the Raft leader", id))
		return nil, msgRemoveLeader(op.id)
	}
	if msg := w.commit(c); msg != "" {
		return nil, msg
	}
	c.members = deleteFunc(c.members, func(x *member) bool { return x == m })
	// A removed coordinator that still runs keeps its last view of the cluster, with no leader
	// it can ever reach again.
	if in, ok := w.instances[m.host]; ok && in.coord && in.cluster == c {
		in.cluster = c.orphanCopy(w)
	}
	if !m.added {
		w.misuse(op.host, op.query, MisuseRemoveHalfJoined, fmt.Sprintf(
			"REMOVE COORDINATOR %d while it is not in the leader's application log (empty bolt_server): the leader coordinator_%d exited",
			id, leader.cspec.ID))
		w.crash(leader)
		return nil, msgLeaderExited
	}
	w.reelect()
	return []map[string]any{noteRemoveCoordinator(op.id)}, ""
}

func (c *cluster) orphanCopy(w *World) *cluster {
	w.clusterID++
	o := &cluster{seq: w.clusterID, main: c.main, settings: map[string]string{}, connectors: map[string]time.Time{}, orphan: true}
	for k, v := range c.settings {
		o.settings[k] = v
	}
	for _, m := range c.members {
		cp := *m
		o.members = append(o.members, &cp)
	}
	for _, e := range c.data {
		cp := *e
		o.data = append(o.data, &cp)
	}
	return o
}

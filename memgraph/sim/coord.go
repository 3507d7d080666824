package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// execute is the PULL-time callback of a coordinator query received by coordinator in.
func (w *World) execute(in *instance, op *coordOp) bolt.Outcome {
	c := in.cluster
	isLeader := c.leader == in.cspec.ID
	switch op.st.kind {
	case stShowInstances:
		if c.leader == 0 {
			return bolt.Outcome{Rows: w.followerView(c), Type: "r"}
		}
		return bolt.Outcome{Rows: w.leaderView(c), Type: "r"}
	case stShowInstance:
		return bolt.Outcome{Rows: [][]any{w.selfRow(in)}, Type: "r"}
	case stShowCoordinatorSettings:
		var rows [][]any
		for _, s := range settingOrder {
			rows = append(rows, []any{s.name, c.settings[s.name]})
		}
		return bolt.Outcome{Rows: rows, Type: "r"}
	case stShowReplicationLag:
		if c.leader == 0 {
			return bolt.Outcome{Type: "r"}
		}
		return bolt.Outcome{Rows: w.lagRows(c), Type: "r"}
	case stYieldLeadership:
		if !isLeader {
			return failure(msgOnlyLeaderYields)
		}
		w.yield(c)
		return bolt.Outcome{Notifications: []map[string]any{noteYield()}}
	case stSetCoordinatorSetting:
		// Not forwarded in 3.12: on a follower the Raft append is refused.
		if !isLeader {
			return failure(msgRaftWriteFailed)
		}
		if msg := w.setSetting(c, op.st.settingName.(string), op.st.settingValue.(string)); msg != "" {
			return failure(msg)
		}
		return bolt.Outcome{}
	}
	if msg := checkAddresses(op); msg != "" {
		return failure(msg)
	}
	switch {
	case isLeader:
		note, msg := w.leaderWrite(c, in, op)
		if msg != "" {
			return failure(msg)
		}
		return bolt.Outcome{Notifications: note}
	case c.leader == 0:
		return failure(msgNoLeader)
	}
	leader := w.instances[c.member(c.leader).host]
	note, msg := w.leaderWrite(c, leader, op)
	if msg != "" {
		// Forwarding carries only a boolean: the leader's reason is lost.
		return failure(msgForwardFailed)
	}
	return bolt.Outcome{Notifications: note}
}

// checkAddresses validates socket addresses on the receiving coordinator (host:port, exactly
// one colon, integer port), before anything is forwarded.
func checkAddresses(op *coordOp) string {
	var keys []struct{ key, kind string }
	switch op.st.kind {
	case stRegisterInstance:
		keys = []struct{ key, kind string }{{"bolt_server", "bolt"}, {"management_server", "management"}, {"replication_server", "replication"}}
	case stAddCoordinator:
		keys = []struct{ key, kind string }{{"bolt_server", "bolt"}, {"coordinator_server", "coordinator"}, {"management_server", "management"}}
	case stUpdateConfigInstance, stUpdateConfigCoordinator:
		keys = []struct{ key, kind string }{{"bolt_server", "bolt"}}
	}
	for _, k := range keys {
		if !validAddress(op.cfg[k.key]) {
			return msgInvalidAddress(k.kind)
		}
	}
	return ""
}

func validAddress(s string) bool {
	parts := strings.Split(s, ":")
	if len(parts) != 2 || parts[0] == "" || strings.ContainsAny(parts[0], " \t/") {
		return false
	}
	p, err := strconv.Atoi(parts[1])
	return err == nil && p >= 0 && p <= 65535
}

// leaderWrite runs a state-changing query on leader (in cluster c). It returns the
// notifications on success or Memgraph's specific refusal.
func (w *World) leaderWrite(c *cluster, leader *instance, op *coordOp) ([]map[string]any, string) {
	cfg := op.cfg
	switch op.st.kind {
	case stRegisterInstance:
		return w.register(c, op)
	case stSetInstanceToMain:
		name := op.st.name
		if c.main != "" {
			w.misuse(op.host, op.query, MisuseSecondMain,
				fmt.Sprintf("SET INSTANCE %s TO MAIN while %s is already MAIN in Raft", name, c.main))
			return nil, msgMainExists
		}
		e := c.entry(name)
		if e == nil {
			return nil, msgNoSuchInstance
		}
		if in := w.dataInstance(e); in != nil && in.refusePromotion {
			return nil, msgCouldNotPromote
		}
		if msg := w.commit(c); msg != "" {
			return nil, msg
		}
		c.main = name
		for _, r := range c.data {
			if in := w.dataInstance(r); in != nil && r.name != name {
				w.catchUp(c, in)
			}
		}
		return nil, ""
	case stDemoteInstance:
		e := c.entry(op.st.name)
		if e == nil {
			return nil, msgNoSuchInstance
		}
		if c.main != e.name {
			return nil, msgAlreadyReplica(e.name)
		}
		if msg := w.commit(c); msg != "" {
			return nil, msg
		}
		c.main = ""
		return []map[string]any{noteDemote(e.name)}, ""
	case stUnregisterInstance:
		e := c.entry(op.st.name)
		if e == nil {
			return nil, msgNoSuchInstance
		}
		if c.main == e.name && w.dataAlive(e) {
			w.misuse(op.host, op.query, MisuseUnregisterAliveMain,
				fmt.Sprintf("UNREGISTER INSTANCE %s while it is the alive MAIN", e.name))
			return nil, msgAliveMain
		}
		if msg := w.commit(c); msg != "" {
			return nil, msg
		}
		if c.main == e.name {
			c.main = ""
		}
		c.data = deleteFunc(c.data, func(d *dataEntry) bool { return d == e })
		return []map[string]any{noteUnregister(e.name)}, ""
	case stAddCoordinator:
		return w.addCoordinator(c, leader, op)
	case stRemoveCoordinator:
		return w.removeCoordinator(c, op)
	case stUpdateConfigInstance:
		e := c.entry(op.st.name)
		if e == nil {
			return nil, msgUpdateNoInstance(op.st.name)
		}
		if msg := w.commit(c); msg != "" {
			return nil, msgUpdateRaftFailed
		}
		e.bolt = cfg["bolt_server"]
		return []map[string]any{noteUpdateInstance(e.bolt, e.name)}, ""
	case stUpdateConfigCoordinator:
		m := c.member(int(op.id))
		if m == nil {
			return nil, msgUpdateNoCoordinator(op.id)
		}
		if msg := w.commit(c); msg != "" {
			return nil, msgUpdateRaftFailed
		}
		m.bolt = cfg["bolt_server"]
		return []map[string]any{noteUpdateCoordinator(m.bolt, op.id)}, ""
	case stForceReset:
		if !w.hasQuorum(c) {
			c.leader = 0
			return nil, msgForceResetFailed
		}
		if e := c.entry(c.main); e == nil || !w.dataAlive(e) {
			w.failover(c)
		}
		return []map[string]any{noteForceReset()}, ""
	}
	return nil, fmt.Sprintf("sim: unhandled coordinator query %q", op.query)
}

// commit is a Raft append: without a majority the leader's write fails and, as NuRaft's
// leadership expiry would do, the leader steps down.
func (w *World) commit(c *cluster) string {
	if w.hasQuorum(c) {
		return ""
	}
	c.leader = 0
	return msgRaftWriteFailed
}

func (w *World) register(c *cluster, op *coordOp) ([]map[string]any, string) {
	name, cfg := op.st.name, op.cfg
	// Checks in Memgraph's order: name, management server, replication server, mode mix.
	for _, e := range c.data {
		if e.name == name {
			return nil, msgNameExists
		}
	}
	for _, e := range c.data {
		if e.mgmt == cfg["management_server"] {
			return nil, msgMgmtExists
		}
	}
	for _, e := range c.data {
		if e.repl == cfg["replication_server"] {
			return nil, msgReplExists
		}
	}
	for _, e := range c.data {
		if (e.mode == "sync" && op.st.mode == "strict_sync") || (e.mode == "strict_sync" && op.st.mode == "sync") {
			return nil, msgModeMix
		}
	}
	if msg := w.commit(c); msg != "" {
		return nil, msg
	}
	e := &dataEntry{name: name, bolt: cfg["bolt_server"], mgmt: cfg["management_server"], repl: cfg["replication_server"], mode: op.st.mode}
	c.data = append(c.data, e)
	if in := w.dataInstance(e); in != nil {
		w.catchUp(c, in)
	}
	return []map[string]any{noteRegister(e.bolt, name)}, ""
}

func (w *World) addCoordinator(c *cluster, leader *instance, op *coordOp) ([]map[string]any, string) {
	id, cfg := op.id, op.cfg
	if m := c.member(int(id)); m != nil && m.added {
		return nil, msgCoordIDExists
	}
	for _, m := range c.members {
		if m.added && m.mgmt == cfg["management_server"] {
			return nil, msgCoordMgmtExists
		}
	}
	for _, m := range c.members {
		if m.added && m.coordServer == cfg["coordinator_server"] {
			return nil, msgCoordServerExists
		}
	}
	if int(id) == leader.cspec.ID {
		if cfg["coordinator_server"] != leader.coordAddr() || cfg["management_server"] != leader.mgmtAddr() {
			w.misuse(op.host, op.query, MisuseSelfAddWrongAddress, fmt.Sprintf(
				"ADD COORDINATOR %d for the leader itself with coordinator_server %q and management_server %q; it runs as %q and %q",
				id, cfg["coordinator_server"], cfg["management_server"], leader.coordAddr(), leader.mgmtAddr()))
			return nil, msgDiffNetworkConfig(id)
		}
		if msg := w.commit(c); msg != "" {
			return nil, msg
		}
		self := c.member(leader.cspec.ID)
		self.bolt, self.added = cfg["bolt_server"], true
		return []map[string]any{noteAddCoordinator(id, cfg["coordinator_server"])}, ""
	}
	if msg := w.commit(c); msg != "" {
		return nil, msg
	}
	target := w.coordinatorAt(cfg["coordinator_server"])
	if target == nil || !target.alive || target.cspec.ID != int(id) || target.cluster == c || !w.joinable(target.cluster) {
		// NuRaft add_srv is accepted but the server never shows up in the configuration.
		return nil, msgAddTimeout(id)
	}
	target.cluster = c
	c.members = append(c.members, &member{id: int(id), host: target.host, bolt: cfg["bolt_server"],
		coordServer: cfg["coordinator_server"], mgmt: cfg["management_server"], added: true})
	return []map[string]any{noteAddCoordinator(id, cfg["coordinator_server"])}, ""
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

func (w *World) removeCoordinator(c *cluster, op *coordOp) ([]map[string]any, string) {
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
	return []map[string]any{noteRemoveCoordinator(op.id)}, ""
}

func (c *cluster) orphanCopy(w *World) *cluster {
	w.clusterID++
	o := &cluster{seq: w.clusterID, main: c.main, settings: map[string]string{}}
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

func (w *World) yield(c *cluster) {
	var others []int
	for _, id := range w.aliveIDs(c) {
		if id != c.leader {
			others = append(others, id)
		}
	}
	if len(others) == 0 || !w.hasQuorum(c) {
		return
	}
	next := others[0]
	for _, id := range others {
		if id > c.leader {
			next = id
			break
		}
	}
	if w.opts.yield != nil {
		next = w.opts.yield(c.leader, append([]int(nil), others...))
	}
	w.setLeader(c, next)
}

// setSetting validates and commits SET COORDINATOR SETTING; values are stored normalised.
func (w *World) setSetting(c *cluster, name, value string) string {
	if _, ok := c.settings[name]; !ok {
		return msgNoSuchSetting(name)
	}
	var stored string
	switch name {
	case "enabled_reads_on_main", "sync_failover_only":
		stored = strconv.FormatBool(strings.ToLower(value) == "true")
	case "global_read_only":
		switch strings.ToLower(value) {
		case "true", "false":
			stored = strings.ToLower(value)
		default:
			return msgInvalidSetting(name)
		}
	case "instance_down_timeout_sec", "instance_health_check_frequency_sec":
		v, err := strconv.ParseUint(value, 10, 32)
		if err != nil {
			return msgInvalidSetting(name)
		}
		stored = strconv.FormatUint(v, 10)
	default:
		v, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return msgInvalidSetting(name)
		}
		stored = strconv.FormatUint(v, 10)
	}
	if msg := w.commit(c); msg != "" {
		return msg
	}
	c.settings[name] = stored
	return ""
}

func deleteFunc[T any](s []T, del func(T) bool) []T {
	out := s[:0:0]
	for _, x := range s {
		if !del(x) {
			out = append(out, x)
		}
	}
	return out
}

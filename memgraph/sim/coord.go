package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// execute is the PULL-time callback of a coordinator query received by coordinator in. ctx ends
// when the client hangs up (only FORCE RESET waits on it).
func (w *World) execute(ctx context.Context, in *instance, op *coordOp) bolt.Outcome {
	c := in.cluster
	isLeader := c.leader == in.cspec.ID
	switch op.st.kind {
	case stShowInstances:
		if c.leader == 0 || !c.ready {
			return bolt.Outcome{Rows: w.localView(c), Type: "r"}
		}
		return bolt.Outcome{Rows: w.leaderView(c), Type: "r"}
	case stShowInstance:
		return bolt.Outcome{Rows: [][]any{w.selfRow(in)}, Type: "r"}
	case stShowCoordinatorSettings:
		var rows [][]any
		for _, s := range settingOrder {
			if knowsSetting(in, s.name) {
				rows = append(rows, []any{s.name, c.settings[s.name]})
			}
		}
		return bolt.Outcome{Rows: rows, Type: "r"}
	case stShowReplicationLag:
		if c.leader == 0 || !c.ready {
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
		name := op.st.settingName.(string)
		stored, msg := parseSetting(in, name, op.st.settingValue.(string))
		switch {
		case msg != "":
			return failure(msg)
		case !isLeader:
			// Not forwarded in 3.12: on a follower the Raft append is refused.
			return failure(msgRaftWriteFailed)
		}
		if msg := w.commit(c); msg != "" {
			return failure(msg)
		}
		c.settings[name], c.failoverStuck = stored, false
		w.settingCommitted(c, op, name, stored)
		return bolt.Outcome{}
	case stForceReset:
		return w.forceReset(ctx, in)
	}
	if msg := checkAddresses(op); msg != "" {
		return failure(msg)
	}
	switch {
	case c.leader == 0 || (isLeader && !c.ready):
		// A not-ready leader forwards to the leader it knows, itself, and has no connector to it.
		return failure(msgNoLeader)
	case isLeader:
		note, msg := w.leaderWrite(c, in, op)
		if msg != "" {
			return failure(msg)
		}
		return bolt.Outcome{Notifications: note}
	case !c.ready:
		// The not-ready leader cannot forward to itself either; the follower only learns "failed".
		return failure(msgForwardFailed)
	}
	leader := w.instances[c.member(c.leader).host]
	note, msg := w.leaderWrite(c, leader, op)
	if msg != "" {
		// Forwarding carries only a boolean: the leader's reason is lost.
		return failure(msgForwardFailed)
	}
	return bolt.Outcome{Notifications: note}
}

// forceReset is FORCE RESET CLUSTER STATE received by coordinator in (Memgraph v3.12.0
// coordinator_instance.cpp 386–538). On the ready leader it makes the leader not ready and does
// not return until a reconciliation succeeds — at once when Raft has a MAIN, even a dead one; otherwise after a failover, retried
// with backoff while no replica can be promoted — or the leadership is lost. A follower forwards
// it to a ready leader and only learns whether it succeeded; a not-ready leader finds no leader.
func (w *World) forceReset(ctx context.Context, in *instance) bolt.Outcome {
	c := in.cluster
	switch {
	case c.leader == 0 || (c.leader == in.cspec.ID && !c.ready):
		return failure(msgNoLeader)
	case !c.ready:
		return failure(msgForwardFailed)
	}
	forwarded, term := c.leader != in.cspec.ID, c.term
	w.startReconciling(c)
	w.settle()
	for {
		switch {
		case c.term != term || w.closed:
			if forwarded {
				return failure(msgForwardFailed)
			}
			return failure(msgForceResetNotLeader)
		case c.ready:
			return bolt.Outcome{Notifications: []map[string]any{noteForceReset()}}
		case ctx.Err() != nil:
			return failure("sim: the client hung up while FORCE RESET CLUSTER STATE was running")
		}
		w.waitUntil(ctx, c.reconcileAt)
	}
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
	demoted := c.demoted
	c.demoted = "" // only the write right after a DEMOTE sees it
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
		// Raft first: a dead target is MAIN once committed; the leader fails over later if it
		// stays unreachable (the promotion RPC's failure is only logged).
		if msg := w.commit(c); msg != "" {
			return nil, msg
		}
		w.checkPromotedCaughtUp(c, demoted, e, op)
		w.promote(c, name)
		if in := w.dataInstance(e); in != nil {
			w.olderReplicas(c, in, demoted, op.host, op.query, fmt.Sprintf("SET INSTANCE %s TO MAIN makes a MAIN at %s", name, in.version()))
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
		c.main, c.demoted = "", e.name
		w.clusterChanged(c, "no MAIN ("+e.name+" demoted)")
		return []map[string]any{noteDemote(e.name)}, ""
	case stUnregisterInstance:
		e := c.entry(op.st.name)
		if e == nil {
			return nil, msgNoSuchInstance
		}
		// "Alive" is the leader's failure detector: a MAIN that died moments ago still counts.
		if c.main == e.name && w.dataHealthy(c, e) {
			w.misuse(op.host, op.query, MisuseUnregisterAliveMain,
				fmt.Sprintf("UNREGISTER INSTANCE %s while it is the alive MAIN", e.name))
			return nil, msgAliveMain
		}
		if msg := w.commit(c); msg != "" {
			return nil, msg
		}
		if c.main == e.name {
			c.main = ""
			w.clusterChanged(c, "no MAIN ("+e.name+" unregistered)")
		}
		c.data = deleteFunc(c.data, func(d *dataEntry) bool { return d == e })
		delete(c.connectors, e.name)
		if main := w.mainOf(c); main != nil {
			delete(main.cache, e.name) // the MAIN drops its client for the replica
		}
		return []map[string]any{noteUnregister(e.name)}, ""
	case stAddCoordinator:
		return w.addCoordinator(c, leader, op)
	case stRemoveCoordinator:
		return w.removeCoordinator(c, leader, op)
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
		// Only the application log's coordinators can change (coordinator_instances_context): one
		// never ADDed, or half-joined, "doesn't exist".
		m := c.member(int(op.id))
		if m == nil || !m.added {
			return nil, msgUpdateNoCoordinator(op.id)
		}
		if msg := w.commit(c); msg != "" {
			return nil, msgUpdateRaftFailed
		}
		m.bolt = cfg["bolt_server"]
		return []map[string]any{noteUpdateCoordinator(m.bolt, op.id)}, ""
	}
	return nil, fmt.Sprintf("sim: unhandled coordinator query %q", op.query)
}

// commit is a Raft append: without a majority, or while the leader yields, it fails (the
// leader steps down only when its leadership expires).
func (w *World) commit(c *cluster) string {
	if w.canAppend(c) {
		return ""
	}
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
	if w.abortOnHealthCheck(c) {
		return nil, msgHealthCheckAbort // committed, then the leader aborts starting its health check
	}
	c.connectors[name], c.failoverStuck = w.cur, false
	if in := w.dataInstance(e); in != nil {
		w.catchUp(c, in)
	}
	return []map[string]any{noteRegister(e.bolt, name)}, ""
}

// knowsSetting: the coordinator's version has the setting. global_read_only is new in 3.12
// (v3.11.0 src/coordination/include/coordination/constants.hpp lists the other seven).
func knowsSetting(in *instance, name string) bool {
	return name != "global_read_only" || !olderVersion(in.version(), "3.12.0")
}

// parseSetting checks SET COORDINATOR SETTING's name and value on the receiving coordinator,
// before the Raft append, and so before anything that depends on leadership
// (CoordinatorInstance::SetCoordinatorSetting, coordinator_instance.cpp 1081–1129): a name this
// version does not have, then a value that does not parse — booleans other than global_read_only
// take anything ("true" in any case is true), the timings any uint32, the others any uint64,
// each the whole string. It returns the value as SHOW COORDINATOR SETTINGS shows it, or the
// refusal.
func parseSetting(in *instance, name, value string) (stored, refusal string) {
	if _, ok := in.cluster.settings[name]; !ok || !knowsSetting(in, name) {
		return "", msgNoSuchSetting(name)
	}
	bits := 64
	switch name {
	case "enabled_reads_on_main", "sync_failover_only":
		return strconv.FormatBool(strings.ToLower(value) == "true"), ""
	case "global_read_only":
		if v := strings.ToLower(value); v == "true" || v == "false" {
			return v, ""
		}
		return "", msgInvalidSetting(name)
	case settingDownTimeout, settingHealthCheckFrequency:
		bits = 32
	}
	v, err := strconv.ParseUint(value, 10, bits)
	if err != nil {
		return "", msgInvalidSetting(name)
	}
	return strconv.FormatUint(v, 10), ""
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

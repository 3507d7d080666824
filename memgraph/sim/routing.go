package sim

import (
	"strconv"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// routingTTL is the time to live of every routing table Memgraph 3.12 hands out, in seconds
// (query/interpreter.hpp RouteResult).
const routingTTL = int64(300)

// Route answers the Bolt ROUTE message as Memgraph 3.12 does (glue/SessionHL.cpp Route,
// query/interpreter.cpp Interpreter::Route): a data instance refuses it; a coordinator answers
// the leader's routing table for the database (the default one when none is named) with a TTL
// of 300 s, naming the database only when the client named one.
func (h *handler) Route(db string, hasDB bool) (map[string]any, *bolt.Failure) {
	return h.w.route(h.in, db, hasDB)
}

func (w *World) route(in *instance, db string, hasDB bool) (map[string]any, *bolt.Failure) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	switch {
	case !in.alive:
		return nil, &bolt.Failure{Code: bolt.CodeDatabaseError, Message: "instance is shutting down"}
	case !in.coord:
		// A QueryException, not rewrapped as a client error: Memgraph sends it as transient.
		return nil, &bolt.Failure{Code: bolt.CodeTransientError, Message: "Cannot fetch routing table from a data instance!"}
	}
	name := defaultDB
	if hasDB {
		name = db
	}
	rt := map[string]any{"ttl": routingTTL, "db": nil, "servers": w.routingServers(in, name)}
	if hasDB {
		rt["db"] = db
	}
	return rt, nil
}

// routingServers is CoordinatorInstance::GetRoutingTable (coordinator_instance.cpp 1478–1514): the
// leader builds the table from its Raft state; a follower asks the leader and answers an empty
// table when it has no leader to ask.
func (w *World) routingServers(in *instance, db string) []any {
	c := in.cluster
	if c.leader == 0 {
		return []any{}
	}
	if c.leader != in.cspec.ID {
		leader, ok := w.instances[c.member(c.leader).host]
		if !ok || !leader.alive || leader.cluster != c {
			return []any{}
		}
	}
	return w.routingTable(c, db)
}

// routingTable is CreateRoutingTable (coordination/utils.hpp): WRITE is the bolt_server of the
// data instance Raft records as MAIN, whatever its health; READ every other registered data
// instance whose replication lag on db, as the MAIN last reported it, is within
// max_replica_read_lag (one without a report is listed), then the MAIN too when
// enabled_reads_on_main is true; ROUTE the bolt_server of every coordinator the application log
// holds. An empty WRITE or READ is left out; ROUTE is always there. Addresses are the bolt_servers
// as registered, never resolved.
func (w *World) routingTable(c *cluster, db string) []any {
	var writers, readers, routers []any
	main := w.mainOf(c)
	maxLag, _ := strconv.ParseUint(c.settings["max_replica_read_lag"], 10, 64)
	for _, e := range c.data {
		if e.name == c.main {
			writers = append(writers, e.bolt)
			continue
		}
		if main != nil {
			if byDB, ok := main.cache[e.name]; ok {
				if n, ok := byDB[db]; ok {
					if lag := main.txns[db] - n; lag < 0 || uint64(lag) > maxLag {
						continue
					}
				}
			}
		}
		readers = append(readers, e.bolt)
	}
	if c.settings["enabled_reads_on_main"] == "true" && len(writers) == 1 {
		readers = append(readers, writers[0])
	}
	for _, m := range c.members {
		if m.added {
			routers = append(routers, m.bolt)
		}
	}
	servers := []any{}
	if len(writers) > 0 {
		servers = append(servers, server("WRITE", writers))
	}
	if len(readers) > 0 {
		servers = append(servers, server("READ", readers))
	}
	if routers == nil {
		routers = []any{}
	}
	return append(servers, server("ROUTE", routers))
}

func server(role string, addresses []any) map[string]any {
	return map[string]any{"addresses": addresses, "role": role}
}

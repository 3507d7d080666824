package planner

import (
	"fmt"
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// Versions. Memgraph has no cluster-wide version check: replication RPCs are versioned per
// message, a newer server upgrades older requests and downgrades its replies, and an older
// server cannot read a newer message ("No upgrade path available", Memgraph v3.12.0
// src/rpc/utils.hpp 29–87). An older MAIN replicating to a newer replica works; a newer MAIN
// replicating to an older replica breaks replication. So no path ever makes a data instance MAIN
// while another registered, alive one runs an older known version — a handover's old MAIN
// excepted when it is unregistered or replaced right after. A pod whose image tag is no version
// (latest, a digest, a custom tag) is outside every version rule.

// newerThanReplica says why target may not become MAIN: a registered data instance the leader
// sees up, other than target and except, runs an older known version. "" when none does or
// target's version is unknown.
func newerThanReplica(v rowIndex, target, except string) string {
	version, ok := v.versionOf(target)
	if !ok {
		return ""
	}
	var older []string
	versions := map[string]memgraph.Version{}
	for name, row := range v.data {
		other, known := v.versionOf(name)
		versions[name] = other
		if name != target && name != except && row.Health == memgraph.HealthUp && known && other.Compare(version) < 0 {
			older = append(older, name)
		}
	}
	if len(older) == 0 {
		return ""
	}
	slices.SortFunc(older, compareMemberNames)
	return fmt.Sprintf("%s runs Memgraph %s and %s runs the older %s: a newer MAIN cannot replicate to an older replica",
		target, version, older[0], versions[older[0]])
}

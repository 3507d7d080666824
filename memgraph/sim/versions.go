package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// Versions. Memgraph has no cluster-wide version check: every replication RPC message is
// versioned, a newer server upgrades older requests and downgrades its replies, and an older
// one cannot read a newer message ("No upgrade path available", v3.12.0 src/rpc/utils.hpp
// 29–87). So an older MAIN replicates to a newer replica, and a newer MAIN cannot replicate to
// an older one: the replica gets nothing and the MAIN's client for it goes MAYBE_BEHIND
// (replication_client.cpp 341–350). Memgraph's own rolling upgrade restarts the replicas first
// and the MAIN last (tests/issu/test_upgrade.sh 860–884).

// parseVersion reads "X.Y.Z" with an optional suffix that does not start with a digit or a dot
// ("3.12.0-relwithdebinfo"); ok is false for anything else (an unknown version).
func parseVersion(s string) (v [3]int, ok bool) {
	rest := s
	for i := range v {
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(rest[:j])
		if err != nil {
			return v, false
		}
		v[i], rest = n, rest[j:]
		if i < 2 {
			if !strings.HasPrefix(rest, ".") {
				return v, false
			}
			rest = rest[1:]
		}
	}
	return v, !strings.HasPrefix(rest, ".")
}

// olderVersion: both versions are known and a is older than b (suffixes do not order).
func olderVersion(a, b string) bool {
	va, okA := parseVersion(a)
	vb, okB := parseVersion(b)
	if !okA || !okB {
		return false
	}
	for i := range va {
		if va[i] != vb[i] {
			return va[i] < vb[i]
		}
	}
	return false
}

// versionBlocked: the replica runs an older known version than its MAIN and cannot read the
// MAIN's replication messages.
func (w *World) versionBlocked(main, replica *instance) bool {
	return olderVersion(replica.version(), main.version())
}

// RestartAt restarts host on its state at another version, as a pod recreated with a new image
// (a running process is killed first). A data instance whose version changes so that it runs
// older than its cluster's alive MAIN, or as MAIN newer than an alive registered replica, is
// recorded as a MisuseNewerMainOlderReplica. A restart at the version it ran already is a
// Restart and records nothing, as a failover the coordinators chose records nothing: a pod the
// StatefulSet controller recreates after it died, at the revision it had, is no one's choice of
// version.
func (w *World) RestartAt(host, version string) error {
	return w.restart(host, false, func(in *instance) {
		if in.coord {
			in.cspec.Version = version
		} else {
			in.dspec.Version = version
		}
	})
}

// checkStartedVersion records the misuse of (re)starting a data instance at a version that
// leaves a registered replica older than its alive MAIN.
func (w *World) checkStartedVersion(in *instance) {
	for _, c := range w.dataClusters() {
		e, main := w.entryOf(c, in), w.mainOf(c)
		switch {
		case e == nil || main == nil:
		case main != in && olderVersion(in.version(), main.version()):
			w.misuse(in.host, "", MisuseNewerMainOlderReplica, fmt.Sprintf(
				"%s started at %s while its MAIN %s runs %s: an older replica cannot read a newer MAIN's replication messages",
				e.name, in.version(), c.main, main.version()))
		case main == in:
			w.olderReplicas(c, in, "", in.host, "", fmt.Sprintf("MAIN %s started at %s", e.name, in.version()))
		}
	}
}

// olderReplicas records a misuse for every alive data instance registered in c, other than
// main and except, that runs an older known version than main. except is the MAIN a handover
// demoted right before its SET: the old MAIN of a rollout's last step, whose pod is replaced
// next (replicas first, MAIN last, as Memgraph's own upgrade does). Whether the demoted MAIN
// really goes is the client's business; the hook's planner checks it (FuzzPlan's oracle).
func (w *World) olderReplicas(c *cluster, main *instance, except, host, query, what string) {
	for _, e := range c.data {
		r := w.dataInstance(e)
		if r == nil || r == main || e.name == except || !r.alive || !olderVersion(r.version(), main.version()) {
			continue
		}
		w.misuse(host, query, MisuseNewerMainOlderReplica, fmt.Sprintf(
			"%s while %s runs %s: an older replica cannot read a newer MAIN's replication messages",
			what, e.name, r.version()))
	}
}

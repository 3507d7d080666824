package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// caughtUpSurvivors returns the declared survivors proven able to take MAIN over from main, in
// ordinal order, or none and the reason. Proven means: registered, up, a replica, caught up on
// every database of the MAIN by both SHOW REPLICATION LAG (0 behind) and the MAIN's own SHOW
// REPLICAS (ready), and no other alive instance older than it (newerThanReplica), main itself
// excepted: a handover's old MAIN is unregistered or replaced right after it. Missing evidence
// never counts: a survivor absent from either read, or lacking one of the MAIN's databases, is no
// candidate. Replicas are registered SYNC, so one caught up now stays caught up until the DEMOTE
// that immediately follows.
func caughtUpSurvivors(d topology.Declared, v rowIndex, main string) ([]string, string) {
	databases, missing := mainDatabases(v, main)
	if missing != "" {
		return nil, missing
	}
	var candidates, why []string
	for _, s := range d.DataInstances {
		if s.Name == main {
			continue // a MAIN that is declared (a rollout hands it over) is no survivor of itself
		}
		reason := notCaughtUp(v, main, s.Name, databases)
		if reason == "" {
			reason = newerThanReplica(v, s.Name, main)
		}
		if reason != "" {
			why = append(why, reason)
			continue
		}
		candidates = append(candidates, s.Name)
	}
	if len(candidates) == 0 {
		if len(why) == 0 {
			return nil, "no declared survivor"
		}
		return nil, "no declared survivor is up and caught up: " + strings.Join(why, "; ")
	}
	return candidates, ""
}

// mainDatabases lists the databases of the MAIN's SHOW REPLICATION LAG row, sorted, or says why
// there are none to check a replica against.
func mainDatabases(v rowIndex, main string) ([]string, string) {
	if v.lag == nil {
		return nil, "replication lag was not observed"
	}
	mainLag, ok := v.lag[main]
	if !ok || len(mainLag.Databases) == 0 {
		return nil, fmt.Sprintf("SHOW REPLICATION LAG lists no database for MAIN %s", main)
	}
	databases := make([]string, 0, len(mainLag.Databases))
	for db := range mainLag.Databases {
		databases = append(databases, db)
	}
	slices.Sort(databases)
	return databases, ""
}

// notCaughtUp says why a survivor is not proven caught up with main, or "" when it is.
func notCaughtUp(v rowIndex, main, name string, databases []string) string {
	row, ok := v.data[name]
	switch {
	case !ok:
		return name + " is not registered"
	case row.Health != memgraph.HealthUp:
		return name + " is " + row.Health
	case row.Role != memgraph.RoleReplica:
		return name + " is not a replica (" + row.Role + ")"
	}
	lag, ok := v.lag[name]
	if !ok {
		return name + " is missing from SHOW REPLICATION LAG"
	}
	for _, db := range databases {
		l, ok := lag.Databases[db]
		switch {
		case !ok:
			return fmt.Sprintf("%s reports no lag for database %s", name, db)
		case l.TxnsBehindMain != 0:
			return fmt.Sprintf("%s is %d transactions behind on database %s%s", name, l.TxnsBehindMain, db, olderThanMain(v, main, name))
		}
	}
	return notProvenReady(v, main, name, databases)
}

// olderThanMain explains a replica that cannot catch up because it runs an older version than
// the MAIN, or "".
func olderThanMain(v rowIndex, main, name string) string {
	mine, ok := v.versionOf(name)
	theirs, known := v.versionOf(main)
	if !ok || !known || mine.Compare(theirs) >= 0 {
		return ""
	}
	return fmt.Sprintf("; it runs Memgraph %s, older than MAIN %s's %s, and cannot replicate from it until its pod is upgraded",
		mine, main, theirs)
}

// notProvenReady says why the MAIN's SHOW REPLICAS, read in this pass, does not report name ready on
// every database, or "". A lag of 0 is not enough: it is the MAIN's cached count, which a
// replica that lost its data keeps while it recovers.
func notProvenReady(v rowIndex, main, name string, databases []string) string {
	r := v.replicas
	switch {
	case r == nil:
		return "SHOW REPLICAS was not read on MAIN " + main
	case r.Main != main:
		return fmt.Sprintf("SHOW REPLICAS was read on %s, not on MAIN %s", r.Main, main)
	case r.Problem != "":
		return fmt.Sprintf("SHOW REPLICAS on MAIN %s could not be read: %s", main, r.Problem)
	}
	row, ok := v.replicaRow[name]
	if !ok {
		return fmt.Sprintf("MAIN %s's SHOW REPLICAS does not list %s", main, name)
	}
	for _, db := range databases {
		state, ok := row.Databases[db]
		switch {
		case !ok:
			return fmt.Sprintf("MAIN %s's SHOW REPLICAS reports no state for %s on database %s", main, name, db)
		case state.Status != memgraph.ReplicaReady:
			return fmt.Sprintf("%s is %s, not ready, on database %s (SHOW REPLICAS on MAIN %s; its lag of 0 is only the MAIN's "+
				"cached count)%s", name, state.Status, db, main, olderThanMain(v, main, name))
		}
	}
	return ""
}

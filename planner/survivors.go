package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// caughtUpSurvivors returns the declared survivors SHOW REPLICATION LAG proves caught up with
// the MAIN, in ordinal order, or none and the reason. Proven means: registered, up, a replica,
// and a lag row listing every database of the MAIN's row with num_txns_behind_main 0. Missing
// evidence never counts as caught up: a survivor absent from the lag rows, or lacking one of
// the MAIN's databases, is not a candidate. Replicas are registered SYNC, so one caught up now
// stays caught up until the DEMOTE that immediately follows.
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
		if reason := notCaughtUp(v, s.Name, databases); reason != "" {
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

// notCaughtUp says why a survivor is not a handover candidate, or "" when it is.
func notCaughtUp(v rowIndex, name string, databases []string) string {
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
			return fmt.Sprintf("%s is %d transactions behind on database %s", name, l.TxnsBehindMain, db)
		}
	}
	return ""
}

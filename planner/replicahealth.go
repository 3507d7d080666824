package planner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Replica health: the MAIN's SHOW REPLICAS, read at most every 30 s per cluster (and whenever a
// pass reads it as a catch-up proof), becomes status.replicas — each replica's state in
// Memgraph's words and since when its health held — and a replica that is diverged, or that has
// not been ready or replicating for spec.replicaHealth.stuckAfter, makes Degraded True. Between
// reads the records are carried forward; a record's since is the one value read back, and only
// the report reads it.

// stateRank orders Memgraph's data_info statuses from healthy to worst, for the state a replica
// with several databases is reported in. A status Memgraph 3.12 never sends ranks worst of all.
var stateRank = map[string]int{
	memgraph.ReplicaReady:       0,
	memgraph.ReplicaReplicating: 1,
	memgraph.ReplicaRecovery:    2,
	memgraph.ReplicaInvalid:     3,
	memgraph.ReplicaDiverged:    4,
}

func rankOf(state string) int {
	if r, ok := stateRank[state]; ok {
		return r
	}
	return len(stateRank)
}

// ReplicaRecords are status.replicas from a SHOW REPLICAS the MAIN answered: one record per row,
// in ordinal order, in the state of its worst database (Database names it when the databases
// differ), since the prior record's since while the replica's health (topology.
// ReplicaStateHealthy) is what it was, else since now.
func ReplicaRecords(rows []memgraph.Replica, prior []v1alpha1.ReplicaStatus, now time.Time) []v1alpha1.ReplicaStatus {
	before := map[string]v1alpha1.ReplicaStatus{}
	for _, r := range prior {
		before[r.Name] = r
	}
	stamp := metav1.NewTime(now.UTC().Truncate(time.Second))
	out := make([]v1alpha1.ReplicaStatus, 0, len(rows))
	for _, row := range rows {
		rec := v1alpha1.ReplicaStatus{Name: row.Name, SyncMode: row.SyncMode, Since: stamp}
		rec.State, rec.Database = worstState(row.Databases)
		if old, ok := before[row.Name]; ok && !old.Since.IsZero() && sameHealth(old.State, rec.State) {
			rec.Since = old.Since
		}
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b v1alpha1.ReplicaStatus) int { return compareMemberNames(a.Name, b.Name) })
	return out
}

// worstState is the state of the worst database, and that database's name when another one is
// in a different state ("" when all agree). "" and "" without databases.
func worstState(dbs map[string]memgraph.ReplicaDatabase) (state, database string) {
	names := make([]string, 0, len(dbs))
	for db := range dbs {
		names = append(names, db)
	}
	slices.Sort(names)
	differ := false
	for _, db := range names {
		s := dbs[db].Status
		if state != "" && s != state {
			differ = true
		}
		if database == "" || rankOf(s) > rankOf(state) {
			state, database = s, db
		}
	}
	if !differ {
		database = ""
	}
	return state, database
}

// sameHealth: both states are healthy, or both are not (an empty state counts as neither).
func sameHealth(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	return v1alpha1.ReplicaStateHealthy(a) == v1alpha1.ReplicaStateHealthy(b)
}

// CarryReplicaRecords are the prior records a pass that did not read SHOW REPLICAS reports: those
// of the data instances the latest ready leader's table lists as replicas (a replica unregistered
// or made MAIN since has no record any more); all of them when no such table was read.
func CarryReplicaRecords(prior []v1alpha1.ReplicaStatus, latest View) []v1alpha1.ReplicaStatus {
	if _, leadership := ReadLeadership(latest.Instances); leadership != LeaderReady {
		return prior
	}
	replicas := map[string]bool{}
	for _, r := range latest.Instances {
		if !r.IsCoordinator() && r.Registered() && r.Role == memgraph.RoleReplica {
			replicas[r.Name] = true
		}
	}
	var out []v1alpha1.ReplicaStatus
	for _, r := range prior {
		if replicas[r.Name] {
			out = append(out, r)
		}
	}
	return out
}

// ReplicaProblem is a replica the Degraded condition reports.
type ReplicaProblem struct {
	Record v1alpha1.ReplicaStatus
	// Reason is ReplicaDiverged or ReplicaStuck.
	Reason v1alpha1.ConditionReason
}

// ReplicaProblems are the replicas Degraded reports, in ordinal order: those Memgraph reports
// diverged, and those not ready or replicating since stuckAfter or longer before now — except
// the members already down (their pod not Ready, their health down: MembersDown says so, and a
// MAIN reports a replica it cannot reach invalid).
func ReplicaProblems(records []v1alpha1.ReplicaStatus, down []DownMember, stuckAfter time.Duration, now time.Time) []ReplicaProblem {
	var out []ReplicaProblem
	for _, r := range records {
		if slices.ContainsFunc(down, func(d DownMember) bool { return d.Name == r.Name }) {
			continue
		}
		switch {
		case r.State == memgraph.ReplicaDiverged:
			out = append(out, ReplicaProblem{Record: r, Reason: v1alpha1.ReasonReplicaDiverged})
		case r.State != "" && !v1alpha1.ReplicaStateHealthy(r.State) && !now.Before(r.Since.Add(stuckAfter)):
			out = append(out, ReplicaProblem{Record: r, Reason: v1alpha1.ReasonReplicaStuck})
		}
	}
	return out
}

// String says what is wrong with the replica in a form that does not change while it stays so
// (a status message that changed every pass would be written every pass).
func (p ReplicaProblem) String() string {
	r := p.Record
	where := ""
	if r.Database != "" {
		where = " on database " + r.Database
	}
	since := r.Since.UTC().Format(time.RFC3339)
	if p.Reason == v1alpha1.ReasonReplicaDiverged {
		return fmt.Sprintf("%s is diverged%s (the MAIN's SHOW REPLICAS, since %s): its history branched off the MAIN's and "+
			"the MAIN replicates nothing to it", r.Name, where, since)
	}
	return fmt.Sprintf("%s is %s%s and has not been ready or replicating since %s (the MAIN's SHOW REPLICAS)", r.Name, r.State, where, since)
}

// DegradedInput is what the Degraded condition is judged on.
type DegradedInput struct {
	Health   MemberHealth
	Problems []ReplicaProblem
	Phase    v1alpha1.Phase
	Cluster  string // the MemgraphCluster's name, for the remedy the message names
}

// Degraded is the Degraded condition: False while the cluster hibernates; True with MembersDown
// when a declared member is down (naming the replica problems too), else ReplicaDiverged when a
// replica is diverged, else ReplicaStuck when one is stuck; False when every member is up and
// every replica healthy.
func Degraded(in DegradedInput) Condition {
	if Hibernating(in.Phase) || len(in.Problems) == 0 {
		return in.Health.DegradedIn(in.Phase)
	}
	parts := make([]string, len(in.Problems))
	reason := v1alpha1.ReasonReplicaStuck
	for i, p := range in.Problems {
		parts[i] = p.String()
		if p.Reason == v1alpha1.ReasonReplicaDiverged {
			reason = v1alpha1.ReasonReplicaDiverged
		}
	}
	remedy := fmt.Sprintf("; rebuild a replica from the MAIN with kubectl memgraph rebuild %s <instance> (annotation %s)",
		in.Cluster, topology.AnnotationRebuild)
	if len(in.Health.Down) > 0 {
		c := in.Health.Degraded()
		return isTrue(c.Reason, "%s; %s%s", c.Message, strings.Join(parts, "; "), remedy)
	}
	return isTrue(reason, "%s%s", strings.Join(parts, "; "), remedy)
}

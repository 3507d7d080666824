package planner

import (
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// Handover moves MAIN off a retiring instance in one step, because it is the one part of a
// retirement a later pass cannot redo: after DEMOTE the cluster has no MAIN, and SHOW
// REPLICATION LAG (served by the MAIN) can no longer prove anyone caught up.
//
// The hook's executor runs it as DEMOTE INSTANCE From; SET INSTANCE To TO MAIN; then the proof
// that To serves as MAIN (UnprovenByInstances, UnprovenByLag), finishing the SET even when the
// pass's budget ran out right after the DEMOTE.
//
// Safety rests on two checks, because Memgraph 3.12's SET INSTANCE … TO MAIN succeeds once Raft
// commits, whether or not the target answers (Memgraph v3.12.0
// src/coordination/coordinator_instance.cpp): To was proven up and caught up on every database
// right before DEMOTE (the hook re-plans from a fresh read just before it runs), and after SET,
// To must report role main and health up in SHOW INSTANCES and answer SHOW REPLICATION LAG as
// the MAIN. If it does not, the handover fails without
// undoing anything: Raft has To as MAIN, and if To stays unreachable the coordinators fail over — maybe
// back to From. The retirement then plans again from whatever they chose; it never fights them.
//
// When SET is refused, the executor restores From as MAIN only if the refusal proves that no MAIN was set
// and that this coordinator still leads and writes: To vanished (unregistered meanwhile), or
// the Raft write failed. Then nothing advanced past From (a MAIN-less cluster accepts no
// writes). It does not restore when a MAIN exists (someone elected one), when the leadership
// moved or the leader is not ready (the next leader's reconciliation picks the most up-to-date
// replica), or when the SET's outcome is unknown (a restore could be refused as a second MAIN).
// The next pass, finding no MAIN while the retiring instance is registered, lets Memgraph
// choose with FORCE RESET CLUSTER STATE.
type Handover struct {
	From string // the retiring MAIN
	To   string // a declared survivor proven up and caught up
}

// String lists the writes in the order they may run: "; " separates steps that run in
// sequence, " || " the restore that runs only when the SET is refused.
func (h Handover) String() string {
	return memgraph.DemoteInstanceQuery(h.From) + "; " + memgraph.SetInstanceToMainQuery(h.To) +
		" || " + memgraph.SetInstanceToMainQuery(h.From)
}

func (Handover) Kind() CommandKind { return KindHandover }
func (Handover) command()          {}

// RestoreAfter reports whether the handover's SET refusal err proves that no MAIN was set and
// that this coordinator still leads and writes, so that From may be set back to MAIN.
func RestoreAfter(err error) bool {
	switch memgraph.KindOf(err) {
	case memgraph.KindNoSuchInstance, memgraph.KindRaftWrite:
		return true
	}
	return false
}

// UnprovenByInstances says why To is not proven to serve as MAIN by SHOW INSTANCES read after
// an accepted SET (err: that read failed), or "" when it reports To up and main.
func (h Handover) UnprovenByInstances(rows []memgraph.Instance, err error) string {
	if err != nil {
		return "SHOW INSTANCES after the SET failed: " + Explain(err)
	}
	row, ok := findRow(rows, h.To)
	switch {
	case !ok:
		return h.To + " is no longer listed"
	case row.Role != memgraph.RoleMain || row.Health != memgraph.HealthUp:
		return fmt.Sprintf("%s reports %s/%s, not up/main", h.To, row.Health, row.Role)
	}
	return ""
}

// UnprovenByLag says why To is not proven to serve as MAIN by SHOW REPLICATION LAG read after
// UnprovenByInstances passed (err: that read failed), or "" when To answers it as the MAIN (the
// query is served by the MAIN: it has no rows while the MAIN does not answer).
func (h Handover) UnprovenByLag(lag []memgraph.InstanceLag, err error) string {
	if err != nil {
		return "SHOW REPLICATION LAG after the SET failed: " + Explain(err)
	}
	for _, l := range lag {
		if l.Instance == h.To {
			return ""
		}
	}
	return h.To + " does not answer as MAIN (SHOW REPLICATION LAG has no row for it)"
}

func findRow(rows []memgraph.Instance, name string) (memgraph.Instance, bool) {
	for _, r := range rows {
		if !r.IsCoordinator() && r.Name == name {
			return r, true
		}
	}
	return memgraph.Instance{}, false
}

// HandoverError reports a handover after which To is not proven to be the serving MAIN.
type HandoverError struct {
	From, To string
	// PromoteErr is SET INSTANCE To TO MAIN's failure; nil when Memgraph accepted it.
	PromoteErr error
	// Unproven says why To, accepted as MAIN, is not proven to serve (PromoteErr nil).
	Unproven string
	// RestoreTried: From was set back to MAIN because the refusal proved no MAIN was set;
	// RestoreErr is that restore's failure.
	RestoreTried bool
	RestoreErr   error
}

func (e *HandoverError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "handover of MAIN from %s to %s: ", e.From, e.To)
	switch {
	case e.PromoteErr == nil:
		fmt.Fprintf(&b, "SET INSTANCE %s TO MAIN was accepted but %s; the coordinators fail over if it stays "+
			"unreachable, and the next pass plans again from what they choose", e.To, e.Unproven)
	case !e.RestoreTried:
		fmt.Fprintf(&b, "SET INSTANCE %s TO MAIN failed: %s; %s not restored (a MAIN may exist or be chosen by the "+
			"coordinators), the next pass plans from what they settled", e.To, Explain(e.PromoteErr), e.From)
	case e.RestoreErr != nil:
		fmt.Fprintf(&b, "SET INSTANCE %s TO MAIN failed: %s; restoring %s as MAIN also failed, the cluster has no MAIN: %s",
			e.To, Explain(e.PromoteErr), e.From, Explain(e.RestoreErr))
	default:
		fmt.Fprintf(&b, "SET INSTANCE %s TO MAIN failed: %s; %s restored as MAIN, handover postponed",
			e.To, Explain(e.PromoteErr), e.From)
	}
	return b.String()
}

// Unwrap returns the error that matters most for the next step: the failed restore if the
// cluster was left MAIN-less, else the SET's failure (Memgraph's own error).
func (e *HandoverError) Unwrap() error {
	if e.RestoreErr != nil {
		return e.RestoreErr
	}
	return e.PromoteErr
}

// Restored reports whether the old MAIN is MAIN again.
func (e *HandoverError) Restored() bool { return e.RestoreTried && e.RestoreErr == nil }

package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// HandoverGrace bounds the steps a handover still takes after the pass's own context ended
// between DEMOTE and SET: leaving the cluster MAIN-less because the budget ran out mid-handover
// would be worse than overrunning it by this much.
const HandoverGrace = 2 * time.Second

// Handover moves MAIN off a retiring instance in one step, because it is the one part of a
// retirement a later pass cannot redo: after DEMOTE the cluster has no MAIN, and SHOW
// REPLICATION LAG (served by the MAIN) can no longer prove anyone caught up.
//
// Run: DEMOTE INSTANCE From; SET INSTANCE To TO MAIN; then verify that To serves as MAIN.
//
// Safety rests on two checks, because Memgraph 3.12's SET INSTANCE … TO MAIN succeeds once Raft
// commits, whether or not the target answers (memgraph-ha.md §11.2): To was proven up and
// caught up on every database right before DEMOTE (the hook re-plans from a fresh read just
// before it runs), and after SET, To must report role main and health up in SHOW INSTANCES
// and answer SHOW REPLICATION LAG as the MAIN. If it does not, Run fails without undoing
// anything: Raft has To as MAIN, and if To stays unreachable the coordinators fail over — maybe
// back to From. The retirement then plans again from whatever they chose; it never fights them.
//
// When SET is refused, Run restores From as MAIN only if the refusal proves that no MAIN was set
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

func (h Handover) Run(ctx context.Context, c memgraph.Client) error {
	if err := c.DemoteInstance(ctx, h.From); err != nil {
		return fmt.Errorf("handover of MAIN from %s: demote: %w", h.From, err)
	}
	if ctx.Err() != nil {
		// The budget ran out between the two writes: finish the handover rather than leave the
		// cluster without a MAIN; the pass ends right after it anyway.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), HandoverGrace)
		defer cancel()
	}
	if err := c.SetInstanceToMain(ctx, h.To); err != nil {
		he := &HandoverError{From: h.From, To: h.To, PromoteErr: err}
		if restorable(err) {
			he.RestoreTried = true
			he.RestoreErr = c.SetInstanceToMain(ctx, h.From)
		}
		return he
	}
	if why := h.unproven(ctx, c); why != "" {
		return &HandoverError{From: h.From, To: h.To, Unproven: why}
	}
	return nil
}

// restorable: the SET refusal proves no MAIN was set and this coordinator still leads.
func restorable(err error) bool {
	switch memgraph.KindOf(err) {
	case memgraph.KindNoSuchInstance, memgraph.KindRaftWrite:
		return true
	}
	return false
}

// unproven says why To is not proven to serve as MAIN after an accepted SET, or "".
func (h Handover) unproven(ctx context.Context, c memgraph.Client) string {
	rows, err := c.ShowInstances(ctx)
	if err != nil {
		return "SHOW INSTANCES after the SET failed: " + message(err)
	}
	row, ok := findRow(rows, h.To)
	switch {
	case !ok:
		return h.To + " is no longer listed"
	case row.Role != memgraph.RoleMain || row.Health != memgraph.HealthUp:
		return fmt.Sprintf("%s reports %s/%s, not up/main", h.To, row.Health, row.Role)
	}
	lag, err := c.ShowReplicationLag(ctx)
	if err != nil {
		return "SHOW REPLICATION LAG after the SET failed: " + message(err)
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
			"unreachable, and the retirement plans again from what they choose", e.To, e.Unproven)
	case !e.RestoreTried:
		fmt.Fprintf(&b, "SET INSTANCE %s TO MAIN failed: %s; %s not restored (a MAIN may exist or be chosen by the "+
			"coordinators), the next pass plans from what they settled", e.To, message(e.PromoteErr), e.From)
	case e.RestoreErr != nil:
		fmt.Fprintf(&b, "SET INSTANCE %s TO MAIN failed: %s; restoring %s as MAIN also failed, the cluster has no MAIN: %s",
			e.To, message(e.PromoteErr), e.From, message(e.RestoreErr))
	default:
		fmt.Fprintf(&b, "SET INSTANCE %s TO MAIN failed: %s; %s restored as MAIN, retirement postponed",
			e.To, message(e.PromoteErr), e.From)
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

// message is Memgraph's own text for a *memgraph.Error (the query is already named by the
// handover), else the error's text.
func message(err error) string {
	var e *memgraph.Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// RestoreGrace bounds the restore of a demoted MAIN when the pass's own context has already
// ended: leaving the cluster MAIN-less because the budget ran out mid-handover would be worse
// than overrunning it by this much.
const RestoreGrace = 2 * time.Second

// Handover moves MAIN off a retiring instance in one step, because it is the one part of a
// retirement a later pass cannot redo: after DEMOTE the cluster has no MAIN, and SHOW
// REPLICATION LAG (served by the MAIN) can no longer prove anyone caught up.
//
// Run: DEMOTE INSTANCE From; then SET INSTANCE <c> TO MAIN for each candidate in order until one
// is accepted. If every candidate is refused, SET INSTANCE From TO MAIN restores the old MAIN —
// safe because a MAIN-less cluster accepts no writes, so nothing has advanced past it — and Run
// still fails with a *HandoverError: the cluster serves again, but the retirement made no
// progress and the UNREGISTER planned behind the handover would be aimed at a MAIN.
type Handover struct {
	From       string   // the retiring MAIN
	Candidates []string // declared survivors proven up and caught up, in ordinal order
}

// String lists the queries in the order they may run: "; " separates steps that run in
// sequence, " || " alternatives tried until one is accepted, the last being the restore.
func (h Handover) String() string {
	alternatives := make([]string, 0, len(h.Candidates)+1)
	for _, c := range h.Candidates {
		alternatives = append(alternatives, memgraph.SetInstanceToMainQuery(c))
	}
	alternatives = append(alternatives, memgraph.SetInstanceToMainQuery(h.From))
	return memgraph.DemoteInstanceQuery(h.From) + "; " + strings.Join(alternatives, " || ")
}

func (h Handover) Run(ctx context.Context, c memgraph.Client) error {
	if err := c.DemoteInstance(ctx, h.From); err != nil {
		return fmt.Errorf("handover of MAIN from %s: demote: %w", h.From, err)
	}
	var refused []Refusal
	for _, candidate := range h.Candidates {
		if ctx.Err() != nil {
			break
		}
		err := c.SetInstanceToMain(ctx, candidate)
		if err == nil {
			return nil
		}
		refused = append(refused, Refusal{Instance: candidate, Err: err})
	}
	restoreCtx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		restoreCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), RestoreGrace)
		defer cancel()
	}
	return &HandoverError{
		From:       h.From,
		Refused:    refused,
		RestoreErr: c.SetInstanceToMain(restoreCtx, h.From),
		ContextErr: ctx.Err(),
	}
}

// Refusal is one candidate's failed SET INSTANCE TO MAIN.
type Refusal struct {
	Instance string
	Err      error
}

// HandoverError reports a handover in which no candidate became MAIN.
type HandoverError struct {
	From       string
	Refused    []Refusal // in the order tried
	RestoreErr error     // nil when From is MAIN again
	ContextErr error     // non-nil when the pass's context ended before every candidate was tried
}

func (e *HandoverError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "handover of MAIN from %s failed: ", e.From)
	if len(e.Refused) == 0 {
		b.WriteString("no candidate was tried")
	} else {
		b.WriteString("every candidate was refused (")
		for i, r := range e.Refused {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", r.Instance, message(r.Err))
		}
		b.WriteString(")")
	}
	if e.ContextErr != nil {
		fmt.Fprintf(&b, ", stopped by %v", e.ContextErr)
	}
	if e.RestoreErr != nil {
		fmt.Fprintf(&b, "; restoring %s as MAIN also failed, the cluster has no MAIN: %s", e.From, message(e.RestoreErr))
	} else {
		fmt.Fprintf(&b, "; %s restored as MAIN, retirement postponed", e.From)
	}
	return b.String()
}

// Unwrap returns the error that matters most for the next step: the failed restore if the
// cluster was left MAIN-less, else the last candidate's refusal (Memgraph's own error), else
// the context's.
func (e *HandoverError) Unwrap() error {
	switch {
	case e.RestoreErr != nil:
		return e.RestoreErr
	case len(e.Refused) > 0:
		return e.Refused[len(e.Refused)-1].Err
	default:
		return e.ContextErr
	}
}

// Restored reports whether the old MAIN is MAIN again.
func (e *HandoverError) Restored() bool { return e.RestoreErr == nil }

// message is Memgraph's own text for a *memgraph.Error (the query is already named by the
// handover), else the error's text.
func message(err error) string {
	var e *memgraph.Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

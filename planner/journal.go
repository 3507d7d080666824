package planner

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Level is a log line's level, with log/slog's values (Debug -4, Info 0, Warn 4).
type Level int

const (
	LevelDebug Level = -4
	LevelInfo  Level = 0
	LevelWarn  Level = 4
)

// Event is one line of the hook's log about what the pass did.
type Event struct {
	Level Level
	Msg   string
	Args  []any // key, value, …
}

// Count is one write query sent, by kind and how its step ended (memgraph_hooks_commands_total).
type Count struct {
	Kind   CommandKind
	Result string // ok, already_done, interrupted, error, budget_exhausted
}

// journal is what a pass sent and what it tells the log: every write query as Memgraph received
// it (status.operations), counted once its step is judged (judged).
type journal struct {
	events  []Event
	counts  []Count
	records []v1alpha1.OperationRecord
	// sending are the queries the current step sent so far.
	sending []sentQuery
}

type sentQuery struct {
	kind  CommandKind
	query string
	err   error
	at    time.Time
}

func (j *journal) log(level Level, msg string, args ...any) {
	j.events = append(j.events, Event{Level: level, Msg: msg, Args: args})
}

// sent notes a write query cmd sent; one the client refused to render (a memgraph.Error without
// its query) never reached Memgraph and is not noted. The settings' SETs are not noted: the
// CoordinatorSettings condition reports them.
func (j *journal) sent(cmd Command, got Result) {
	var mg *memgraph.Error
	if _, setting := cmd.(SetCoordinatorSetting); setting || errors.As(got.Err, &mg) && mg.Query == "" {
		return
	}
	j.sending = append(j.sending, sentQuery{kind: cmd.Kind(), query: cmd.String(), err: got.Err, at: got.At})
}

// judged closes the queries the current step sent, judged as result (an executor result label:
// ok, already_done, interrupted, error, budget_exhausted): a query that succeeded counts as ok,
// one that failed under the step's result. It returns the queries, redacted, in the order sent.
func (j *journal) judged(result string) []string {
	queries := make([]string, 0, len(j.sending))
	for _, q := range j.sending {
		r := "ok"
		if q.err != nil {
			r = result
		}
		j.counts = append(j.counts, Count{Kind: q.kind, Result: r})
		j.records = append(j.records, operationRecord(q, r))
		queries = append(queries, topology.RedactCommand(q.query))
	}
	j.sending = j.sending[:0]
	return queries
}

// operationRecord is q as status.operations lists it.
func operationRecord(q sentQuery, result string) v1alpha1.OperationRecord {
	rec := v1alpha1.OperationRecord{Time: metav1.NewTime(q.at.UTC()), Command: q.query, Outcome: v1alpha1.OperationSucceeded}
	if q.err == nil {
		return rec
	}
	rec.Message = memgraphMessage(q.err)
	switch result {
	case "already_done", "ok":
		// A concurrent writer had done the work; Memgraph's refusal is kept as the message.
	case "interrupted", "budget_exhausted":
		rec.Outcome = v1alpha1.OperationInterrupted
	default:
		rec.Outcome = v1alpha1.OperationFailed
	}
	return rec
}

// reloaded notes one RELOAD … TLS query sent to member: its record and count, Interrupted when
// the member could not be asked (unreachable, timed out, connection closed), which is no refusal.
func (j *journal) reloaded(member, query string, got Result) (interrupted bool) {
	rec := v1alpha1.OperationRecord{Time: metav1.NewTime(got.At.UTC()), Command: query, Outcome: v1alpha1.OperationSucceeded,
		Message: "on " + member}
	result := "ok"
	if got.Err != nil {
		rec.Outcome, rec.Message, result = v1alpha1.OperationFailed, fmt.Sprintf("on %s: %s", member, memgraphMessage(got.Err)), "error"
	}
	switch memgraph.KindOf(got.Err) {
	case memgraph.KindUnreachable, memgraph.KindTimeout, memgraph.KindClosed:
		rec.Outcome, result = v1alpha1.OperationInterrupted, "interrupted"
	}
	j.counts = append(j.counts, Count{Kind: KindReloadTLS, Result: result})
	j.records = append(j.records, rec)
	return rec.Outcome == v1alpha1.OperationInterrupted
}

// memgraphMessage is Memgraph's own message for err when it carries one, else err's text.
func memgraphMessage(err error) string {
	var mg *memgraph.Error
	if errors.As(err, &mg) && mg.Message != "" {
		return mg.Message
	}
	return err.Error()
}

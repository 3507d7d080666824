package planner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// HalfJoinedError is ADD COORDINATOR refused because NuRaft already has the coordinator while
// the leader's application log does not (SHOW INSTANCES lists it with an empty bolt_server): a
// member whose earlier ADD timed out and whose join completed later. JudgeRecheck returns it.
type HalfJoinedError struct {
	Coordinator string
	Err         error // Memgraph's refusal
}

func (e *HalfJoinedError) Error() string {
	return fmt.Sprintf("%s is half-joined (a Raft member without a bolt_server): %s", e.Coordinator, Explain(e.Err))
}

func (e *HalfJoinedError) Unwrap() error { return e.Err }

// Explain is what a status or a log line says about err: a failed handover and a half-joined
// coordinator tell their whole story (the refusal in Memgraph's words, or why the new MAIN is
// not proven, and whether the old MAIN was restored); any other error Memgraph's own message when
// there is one (the query is named elsewhere), else its text.
func Explain(err error) string {
	var handover *HandoverError
	if errors.As(err, &handover) {
		return handover.Error()
	}
	var halfJoined *HalfJoinedError
	if errors.As(err, &halfJoined) {
		return halfJoined.Error()
	}
	var mgErr *memgraph.Error
	if errors.As(err, &mgErr) && mgErr.Message != "" {
		return mgErr.Message
	}
	return strings.TrimSpace(err.Error())
}

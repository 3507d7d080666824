package planner

import (
	"errors"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// StepVerdict is what a failed step means for the rest of the pass. Every later step was
// planned on the assumption that this one succeeded, so any verdict but StepDone ends the pass.
type StepVerdict int

const (
	// StepFailed: report Memgraph's message; the next pass re-observes and plans again.
	StepFailed StepVerdict = iota
	// StepDone: the refusal says the step's goal already holds (a concurrent writer — another
	// hook replica — registered the same member or elected a MAIN first). Carry on.
	StepDone
	// StepInProgress: FORCE RESET CLUSTER STATE did not answer within its own deadline; the
	// leader keeps reconciling and is not ready meanwhile. Re-observe soon; nothing failed.
	StepInProgress
	// StepLeaderMoved: the coordinator the pass writes to no longer leads, or leads but is not
	// ready (after an election or during a FORCE RESET: "leader couldn't be found"). Leader
	// discovery on the next pass finds the current leader; nothing failed.
	StepLeaderMoved
)

// JudgeStep classifies the error a command returned (never nil). A failed handover is always a
// failure: its error tells what happened to the MAIN, which the status must show.
func JudgeStep(cmd Command, err error) StepVerdict {
	var handover *HandoverError
	if errors.As(err, &handover) {
		return StepFailed
	}
	var mgErr *memgraph.Error
	if !errors.As(err, &mgErr) {
		return StepFailed
	}
	switch mgErr.Kind {
	case memgraph.KindNotLeader, memgraph.KindNoLeader, memgraph.KindForwardFailed:
		// Writes go to the coordinator that reported itself leader: a forwarding failure means it
		// is a follower now, and the real reason is on the new leader.
		return StepLeaderMoved
	case memgraph.KindTimeout:
		if _, ok := cmd.(ForceResetClusterState); ok {
			return StepInProgress
		}
	case memgraph.KindMainExists:
		if _, ok := cmd.(SetInstanceToMain); ok {
			return StepDone
		}
	case memgraph.KindAlreadyExists:
		// A member registered under the same name is the goal; a conflict on an endpoint
		// registered under another name is not. ADD COORDINATOR resolves "such id" itself (see
		// AddCoordinator.Run): it is only the goal when the member is registered, not half-joined.
		if _, ok := cmd.(RegisterInstance); ok && strings.Contains(mgErr.Message, "such name") {
			return StepDone
		}
	}
	return StepFailed
}

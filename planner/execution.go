package planner

// Execution is what running a plan achieved: the hook's executor fills it, Verdict reads it.
type Execution struct {
	// Ran are the queries that completed (or that a concurrent writer completed first), in order.
	Ran []string
	// Writes are the Bolt writes sent, in order, whatever their outcome (Writes of each step
	// attempted): what status.lastOperation reports.
	Writes []string
	// Stopped is the step that ended the run before the plan's end; nil when none did.
	Stopped *Stop
	// BudgetExhausted: the pass's time budget ran out before every step ran.
	BudgetExhausted bool
}

// Stop is a step that ended a run: one that failed (StepFailed), or one that did not finish
// and sends the next pass to re-observe (StepInProgress, StepLeaderMoved).
type Stop struct {
	Query   string
	Verdict StepVerdict
	Err     error
}

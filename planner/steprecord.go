package planner

// stepRecord is what the step machine of a custom resource's pass (NextUser, NextBackup)
// replays from its start on every call: each step the pass needs is answered from the record
// in order and, past its end, becomes the pending step the shell performs next.
type stepRecord[S any, R any] struct {
	record  []R
	cursor  int
	pending S
	waiting bool // pending is set: the pass stops at it
}

// step answers s from the record, or makes it the pending step (ok false).
func (w *stepRecord[S, R]) step(s S) (R, bool) {
	if w.cursor < len(w.record) {
		w.cursor++
		return w.record[w.cursor-1], true
	}
	w.pending, w.waiting = s, true
	var zero R
	return zero, false
}

// next is the pass's next step: the one it waits on, else its end (the finalize hook's when
// finalizing, else the sync's), which either decides by walking the record.
func next[S any, R any, D any](w *stepRecord[S, R], finalizing bool, finalize, sync func() D, end func(D) S) S {
	var done D
	if finalizing {
		done = finalize()
	} else {
		done = sync()
	}
	if w.waiting {
		return w.pending
	}
	return end(done)
}

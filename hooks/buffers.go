package hooks

import (
	"bytes"
	"sync"
)

// A converged cluster sends a body of the same size every resync and gets an answer of the same
// size back; both are garbage once the sync is done, and recycling them spares the collector
// most of a sync's bytes. Nothing outlives its buffer: whatever a sync keeps from its body is a
// copy (strings, admitted parents, errors), and the answer is copied out by the time
// ResponseWriter.Write returns. Buffers that grew beyond maxPooledBuffer are dropped, so one
// large request does not pin its size. The converged sync needs them: measured alternately in
// one run (docs/performance.md), a converged 3/2 sync without them allocates 70 KB more and
// costs 0.96 of the bare JSON round trip of its bytes (one round of three above 1) against 0.87
// with them.
const maxPooledBuffer = 1 << 20

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

func recycleBody(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuffer {
		b.Reset()
		bodyBuffers.Put(b)
	}
}

func recycleAnswer(b *[]byte) {
	if cap(*b) <= maxPooledBuffer {
		*b = (*b)[:0]
		answerBuffers.Put(b)
	}
}

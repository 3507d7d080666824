package serving

import (
	"bytes"
	"sort"
	"testing"
	"time"
)

// tokenMatches takes as long whether the presented token differs from the real one in its first
// byte, its last byte or its length. With 64 KiB tokens a comparison that stops at the first
// difference (bytes.Equal, ==) is hundreds of times faster for an early mismatch or a length
// mismatch; hashing both sides first makes every case cost two full hashes.
func TestTokenComparisonTakesConstantTime(t *testing.T) {
	const size = 64 << 10
	real := bytes.Repeat([]byte("a"), size)
	variants := [][]byte{
		append([]byte("b"), real[1:]...),                // early mismatch
		append(append([]byte{}, real[:size-1]...), 'b'), // late mismatch
		real[:size/2], // shorter
	}
	// Samples of the variants are interleaved, so a burst of load on the machine hits all alike.
	samples := make([][]time.Duration, len(variants))
	for range 51 {
		for i, v := range variants {
			start := time.Now()
			if tokenMatches(v, real) {
				t.Fatal("a wrong token matched")
			}
			samples[i] = append(samples[i], time.Since(start))
		}
	}
	median := func(i int) time.Duration {
		sort.Slice(samples[i], func(a, b int) bool { return samples[i][a] < samples[i][b] })
		return samples[i][len(samples[i])/2]
	}
	early, late := median(0), median(1)
	if ratio := float64(late) / float64(early); ratio > 3 || ratio < 1.0/3 {
		t.Errorf("late mismatch %v, early mismatch %v (ratio %.2f): the time shows where the tokens differ", late, early, ratio)
	}
	// A shorter token hashes fewer bytes on its side, but the real token is hashed in full.
	if short := median(2); float64(short) < 0.25*float64(early) {
		t.Errorf("a shorter token took %v against %v at full length: the comparison returns early on length", short, early)
	}
	if !tokenMatches(real, real) || tokenMatches(nil, nil) || tokenMatches([]byte("x"), nil) {
		t.Error("tokenMatches: a token must match itself, and nothing matches an empty token")
	}
}

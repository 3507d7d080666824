package hooks

import (
	"math/rand"
	"testing"
)

// indexSpecial's eight-bytes-at-a-time test must find what a byte loop finds, wherever the
// special byte sits in a word and whatever the bytes around it (high bytes of UTF-8 included).
func TestIndexSpecialMatchesAByteLoop(t *testing.T) {
	naive := func(b []byte) int {
		for i, c := range b {
			if c < 0x20 || c == '\\' {
				return i
			}
		}
		return -1
	}
	rng := rand.New(rand.NewSource(15))
	for n := 0; n < 200000; n++ {
		b := make([]byte, rng.Intn(40))
		for i := range b {
			b[i] = byte(0x20 + rng.Intn(0xE0)) // plain: 0x20..0xFF
			if b[i] == '\\' {
				b[i] = 'a'
			}
		}
		for k := rng.Intn(3); k > 0 && len(b) > 0; k-- {
			b[rng.Intn(len(b))] = []byte{0, 0x1F, '\\', 0x0A}[rng.Intn(4)]
		}
		if got, want := indexSpecial(b), naive(b); got != want {
			t.Fatalf("indexSpecial(%q) = %d, want %d", b, got, want)
		}
	}
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 16; pos++ {
			b := []byte("abcdefghijklmnop")
			b[pos] = byte(c)
			if got, want := indexSpecial(b), naive(b); got != want {
				t.Fatalf("byte %#x at %d: indexSpecial = %d, want %d", c, pos, got, want)
			}
		}
	}
}

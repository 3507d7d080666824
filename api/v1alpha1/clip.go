package v1alpha1

import (
	"strconv"
	"unicode/utf8"
)

// MaxEchoBytes bounds every value of a request that an error message or a log line repeats: a
// megabyte name is reported by its first MaxEchoBytes bytes and its length, never whole.
const MaxEchoBytes = 256

// Clip returns s when it is at most MaxEchoBytes long, otherwise its first MaxEchoBytes bytes
// (cut at a rune boundary) followed by "…" and s's length in bytes.
func Clip(s string) string {
	if len(s) <= MaxEchoBytes {
		return s
	}
	cut := MaxEchoBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

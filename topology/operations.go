package topology

import (
	"slices"
	"unicode/utf8"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// MaxOperationText bounds an OperationRecord's command and message, in bytes: a REGISTER
// INSTANCE with three long addresses fits, a megabyte error message does not.
const MaxOperationText = 1024

// RecordOperations is status.operations after a pass: the commands the pass executed (in the
// order it sent them) added to the prior records, newest first, at most MaxOperations.
//
// Records are ordered by time, newest first; of records with the same time, the executed ones
// come first, the later-sent before the earlier, then the prior ones in their prior order. An
// executed record equal to a prior one is the same record seen twice (a parent sent again before
// the status that carries it was read back), so it replaces that prior one rather than adding a
// copy. Every record's time is cut to the second, its command redacted (RedactCommand), its
// command and message bounded (MaxOperationText), whoever built it. The result is a new slice;
// nil when both are empty.
func RecordOperations(prior []v1alpha1.OperationRecord, executed []v1alpha1.OperationRecord) []v1alpha1.OperationRecord {
	records := make([]v1alpha1.OperationRecord, 0, len(prior)+len(executed))
	for _, r := range slices.Backward(executed) {
		records = append(records, sanitized(r))
	}
	unseen := slices.Clone(records)
	for _, r := range prior {
		r = sanitized(r)
		if i := slices.IndexFunc(unseen, r.Equal); i >= 0 {
			unseen = slices.Delete(unseen, i, i+1)
			continue
		}
		records = append(records, r)
	}
	slices.SortStableFunc(records, func(a, b v1alpha1.OperationRecord) int { return b.Time.Compare(a.Time.Time) })
	if len(records) > v1alpha1.MaxOperations {
		records = records[:v1alpha1.MaxOperations]
	}
	if len(records) == 0 {
		return nil
	}
	return records
}

// sanitized is r as the status carries it: its time at the second (as metav1.Time serializes,
// so a record read back equals the one written), its command redacted, its command and message
// bounded.
func sanitized(r v1alpha1.OperationRecord) v1alpha1.OperationRecord {
	r.Time = r.Time.Rfc3339Copy()
	r.Command = boundText(RedactCommand(r.Command))
	r.Message = boundText(r.Message)
	return r
}

// boundText cuts s to at most MaxOperationText bytes at a rune boundary, ending in "…".
func boundText(s string) string {
	if len(s) <= MaxOperationText {
		return s
	}
	cut := MaxOperationText - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

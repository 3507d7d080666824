package topology

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// at is 2026-03-04T05:00:00Z plus seconds.
func at(seconds int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 3, 4, 5, 0, seconds, 0, time.UTC))
}

func succeeded(seconds int, command string) OperationRecord {
	return OperationRecord{Time: at(seconds), Command: command, Outcome: OperationSucceeded}
}

// handover is the three records a handover from instance_0 to instance_1 sends, in order, at
// second 60: DEMOTE, the SET refused, the restore.
func handover() []OperationRecord {
	return []OperationRecord{
		succeeded(60, "DEMOTE INSTANCE instance_0"),
		{Time: at(60), Command: "SET INSTANCE instance_1 TO MAIN", Outcome: OperationFailed, Message: "instance_1 is down"},
		succeeded(60, "SET INSTANCE instance_0 TO MAIN"),
	}
}

// tenRegistrations are ten prior records, newest first, seconds 10 down to 1.
func tenRegistrations() []OperationRecord {
	var records []OperationRecord
	for i := 10; i >= 1; i-- {
		records = append(records, succeeded(i, fmt.Sprintf("REGISTER INSTANCE instance_%d", i)))
	}
	return records
}

func TestRecordOperations(t *testing.T) {
	for _, tc := range []struct {
		name            string
		prior, executed []OperationRecord
		want            []OperationRecord
	}{
		{name: "nothing ever sent"},
		{name: "a pass that sent nothing carries the prior records", prior: handover(), want: handover()},
		{name: "the first pass: newest first", executed: handover(), want: []OperationRecord{
			succeeded(60, "SET INSTANCE instance_0 TO MAIN"),
			{Time: at(60), Command: "SET INSTANCE instance_1 TO MAIN", Outcome: OperationFailed, Message: "instance_1 is down"},
			succeeded(60, "DEMOTE INSTANCE instance_0"),
		}},
		{name: "new records go before the prior ones",
			prior:    []OperationRecord{succeeded(5, "REGISTER INSTANCE instance_1")},
			executed: []OperationRecord{succeeded(9, "DEMOTE INSTANCE instance_1"), succeeded(9, "UNREGISTER INSTANCE instance_1")},
			want: []OperationRecord{
				succeeded(9, "UNREGISTER INSTANCE instance_1"), succeeded(9, "DEMOTE INSTANCE instance_1"),
				succeeded(5, "REGISTER INSTANCE instance_1"),
			}},
		{name: "capped at ten: the oldest fall off", prior: tenRegistrations(),
			executed: []OperationRecord{succeeded(20, "YIELD LEADERSHIP"), succeeded(21, "ADD COORDINATOR 4")},
			want: append([]OperationRecord{succeeded(21, "ADD COORDINATOR 4"), succeeded(20, "YIELD LEADERSHIP")},
				tenRegistrations()[:8]...)},
		{name: "a prior record from a clock ahead keeps its place by time",
			prior:    []OperationRecord{succeeded(30, "SET INSTANCE instance_0 TO MAIN"), succeeded(10, "REGISTER INSTANCE instance_0")},
			executed: []OperationRecord{succeeded(20, "DEMOTE INSTANCE instance_0")},
			want: []OperationRecord{
				succeeded(30, "SET INSTANCE instance_0 TO MAIN"), succeeded(20, "DEMOTE INSTANCE instance_0"),
				succeeded(10, "REGISTER INSTANCE instance_0"),
			}},
		{name: "a record already carried is not added twice",
			prior:    []OperationRecord{succeeded(9, "DEMOTE INSTANCE instance_1"), succeeded(5, "REGISTER INSTANCE instance_1")},
			executed: []OperationRecord{succeeded(9, "DEMOTE INSTANCE instance_1")},
			want:     []OperationRecord{succeeded(9, "DEMOTE INSTANCE instance_1"), succeeded(5, "REGISTER INSTANCE instance_1")}},
		{name: "the same command sent twice in a second is two records",
			executed: []OperationRecord{succeeded(9, "FORCE RESET CLUSTER STATE"), succeeded(9, "FORCE RESET CLUSTER STATE")},
			want:     []OperationRecord{succeeded(9, "FORCE RESET CLUSTER STATE"), succeeded(9, "FORCE RESET CLUSTER STATE")}},
		{name: "a password is redacted, whoever built the record",
			prior:    []OperationRecord{succeeded(1, "SET PASSWORD FOR hook TO 'old'")},
			executed: []OperationRecord{succeeded(2, "CREATE USER hook IDENTIFIED BY 'n3w'")},
			want: []OperationRecord{
				succeeded(2, "CREATE USER hook IDENTIFIED BY "+RedactedSecret), succeeded(1, "SET PASSWORD FOR hook TO "+RedactedSecret),
			}},
		{name: "times are cut to the second, as the status stores them",
			executed: []OperationRecord{{Time: metav1.NewTime(at(7).Add(999 * time.Millisecond)), Command: "YIELD LEADERSHIP", Outcome: OperationInterrupted}},
			want:     []OperationRecord{{Time: at(7), Command: "YIELD LEADERSHIP", Outcome: OperationInterrupted}}},
		{name: "a long message is bounded",
			executed: []OperationRecord{{Time: at(3), Command: "ADD COORDINATOR 2", Outcome: OperationFailed, Message: strings.Repeat("é", 600)}},
			want: []OperationRecord{{Time: at(3), Command: "ADD COORDINATOR 2", Outcome: OperationFailed,
				Message: strings.Repeat("é", (MaxOperationText-len("…"))/2) + "…"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RecordOperations(tc.prior, tc.executed)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RecordOperations (-want +got):\n%s", diff)
			}
			if len(got) > MaxOperations {
				t.Errorf("%d records, more than %d", len(got), MaxOperations)
			}
			// Its output is a fixed point: carried forward alone, or merged with itself sent
			// oldest first as the hook merges what it remembers, it stays what it was.
			again := RecordOperations(got, nil)
			oldestFirst := slices.Clone(got)
			slices.Reverse(oldestFirst)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("RecordOperations(got, nil) (-got +again):\n%s", diff)
			}
			if diff := cmp.Diff(got, RecordOperations(got, oldestFirst)); diff != "" {
				t.Errorf("RecordOperations(got, got oldest first) (-got +merged):\n%s", diff)
			}
		})
	}
}

// Passes one after another never grow the history beyond MaxOperations, and its newest record is
// always the last command sent.
func TestRecordOperationsAcrossPasses(t *testing.T) {
	var status []OperationRecord
	for pass := range 25 {
		executed := []OperationRecord{succeeded(pass, fmt.Sprintf("REGISTER INSTANCE instance_%d", pass))}
		status = RecordOperations(status, executed)
		if len(status) > MaxOperations {
			t.Fatalf("pass %d: %d records", pass, len(status))
		}
		if diff := cmp.Diff(executed[0], status[0]); diff != "" {
			t.Fatalf("pass %d: newest record (-want +got):\n%s", pass, diff)
		}
	}
	if got := status[MaxOperations-1].Command; got != "REGISTER INSTANCE instance_15" {
		t.Errorf("oldest record kept is %q, want the 15th pass's", got)
	}
}

// The prior slice is the caller's: RecordOperations never writes into it.
func TestRecordOperationsLeavesPriorAlone(t *testing.T) {
	prior := tenRegistrations()
	_ = RecordOperations(prior, []OperationRecord{succeeded(99, "YIELD LEADERSHIP")})
	if diff := cmp.Diff(tenRegistrations(), prior); diff != "" {
		t.Errorf("prior changed (-before +after):\n%s", diff)
	}
}

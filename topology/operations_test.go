package topology

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// at is 2026-03-04T05:00:00Z plus seconds.
func at(seconds int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 3, 4, 5, 0, seconds, 0, time.UTC))
}

func succeeded(seconds int, command string) v1alpha1.OperationRecord {
	return v1alpha1.OperationRecord{Time: at(seconds), Command: command, Outcome: v1alpha1.OperationSucceeded}
}

// handover is the three records a handover from instance_0 to instance_1 sends, in order, at
// second 60: DEMOTE, the SET refused, the restore.
func handover() []v1alpha1.OperationRecord {
	return []v1alpha1.OperationRecord{
		succeeded(60, "DEMOTE INSTANCE instance_0"),
		{Time: at(60), Command: "SET INSTANCE instance_1 TO MAIN", Outcome: v1alpha1.OperationFailed, Message: "instance_1 is down"},
		succeeded(60, "SET INSTANCE instance_0 TO MAIN"),
	}
}

// tenRegistrations are ten prior records, newest first, seconds 10 down to 1.
func tenRegistrations() []v1alpha1.OperationRecord {
	var records []v1alpha1.OperationRecord
	for i := 10; i >= 1; i-- {
		records = append(records, succeeded(i, fmt.Sprintf("REGISTER INSTANCE instance_%d", i)))
	}
	return records
}

func TestRecordOperations(t *testing.T) {
	for _, tc := range []struct {
		name            string
		prior, executed []v1alpha1.OperationRecord
		want            []v1alpha1.OperationRecord
	}{
		{name: "nothing ever sent"},
		{name: "a pass that sent nothing carries the prior records", prior: handover(), want: handover()},
		{name: "the first pass: newest first", executed: handover(), want: []v1alpha1.OperationRecord{
			succeeded(60, "SET INSTANCE instance_0 TO MAIN"),
			{Time: at(60), Command: "SET INSTANCE instance_1 TO MAIN", Outcome: v1alpha1.OperationFailed, Message: "instance_1 is down"},
			succeeded(60, "DEMOTE INSTANCE instance_0"),
		}},
		{name: "new records go before the prior ones",
			prior:    []v1alpha1.OperationRecord{succeeded(5, "REGISTER INSTANCE instance_1")},
			executed: []v1alpha1.OperationRecord{succeeded(9, "DEMOTE INSTANCE instance_1"), succeeded(9, "UNREGISTER INSTANCE instance_1")},
			want: []v1alpha1.OperationRecord{
				succeeded(9, "UNREGISTER INSTANCE instance_1"), succeeded(9, "DEMOTE INSTANCE instance_1"),
				succeeded(5, "REGISTER INSTANCE instance_1"),
			}},
		{name: "capped at ten: the oldest fall off", prior: tenRegistrations(),
			executed: []v1alpha1.OperationRecord{succeeded(20, "YIELD LEADERSHIP"), succeeded(21, "ADD COORDINATOR 4")},
			want: append([]v1alpha1.OperationRecord{succeeded(21, "ADD COORDINATOR 4"), succeeded(20, "YIELD LEADERSHIP")},
				tenRegistrations()[:8]...)},
		{name: "a prior record from a clock ahead keeps its place by time",
			prior:    []v1alpha1.OperationRecord{succeeded(30, "SET INSTANCE instance_0 TO MAIN"), succeeded(10, "REGISTER INSTANCE instance_0")},
			executed: []v1alpha1.OperationRecord{succeeded(20, "DEMOTE INSTANCE instance_0")},
			want: []v1alpha1.OperationRecord{
				succeeded(30, "SET INSTANCE instance_0 TO MAIN"), succeeded(20, "DEMOTE INSTANCE instance_0"),
				succeeded(10, "REGISTER INSTANCE instance_0"),
			}},
		{name: "a record already carried is not added twice",
			prior:    []v1alpha1.OperationRecord{succeeded(9, "DEMOTE INSTANCE instance_1"), succeeded(5, "REGISTER INSTANCE instance_1")},
			executed: []v1alpha1.OperationRecord{succeeded(9, "DEMOTE INSTANCE instance_1")},
			want:     []v1alpha1.OperationRecord{succeeded(9, "DEMOTE INSTANCE instance_1"), succeeded(5, "REGISTER INSTANCE instance_1")}},
		{name: "the same command sent twice in a second is two records",
			executed: []v1alpha1.OperationRecord{succeeded(9, "FORCE RESET CLUSTER STATE"), succeeded(9, "FORCE RESET CLUSTER STATE")},
			want:     []v1alpha1.OperationRecord{succeeded(9, "FORCE RESET CLUSTER STATE"), succeeded(9, "FORCE RESET CLUSTER STATE")}},
		{name: "a password is redacted, whoever built the record",
			prior:    []v1alpha1.OperationRecord{succeeded(1, "SET PASSWORD FOR hook TO 'old'")},
			executed: []v1alpha1.OperationRecord{succeeded(2, "CREATE USER hook IDENTIFIED BY 'n3w'")},
			want: []v1alpha1.OperationRecord{
				succeeded(2, "CREATE USER hook IDENTIFIED BY "+RedactedSecret), succeeded(1, "SET PASSWORD FOR hook TO "+RedactedSecret),
			}},
		{name: "times are cut to the second, as the status stores them",
			executed: []v1alpha1.OperationRecord{{Time: metav1.NewTime(at(7).Add(999 * time.Millisecond)), Command: "YIELD LEADERSHIP", Outcome: v1alpha1.OperationInterrupted}},
			want:     []v1alpha1.OperationRecord{{Time: at(7), Command: "YIELD LEADERSHIP", Outcome: v1alpha1.OperationInterrupted}}},
		{name: "a long message is bounded",
			executed: []v1alpha1.OperationRecord{{Time: at(3), Command: "ADD COORDINATOR 2", Outcome: v1alpha1.OperationFailed, Message: strings.Repeat("é", 600)}},
			want: []v1alpha1.OperationRecord{{Time: at(3), Command: "ADD COORDINATOR 2", Outcome: v1alpha1.OperationFailed,
				Message: strings.Repeat("é", (MaxOperationText-len("…"))/2) + "…"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RecordOperations(tc.prior, tc.executed)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RecordOperations (-want +got):\n%s", diff)
			}
			if len(got) > v1alpha1.MaxOperations {
				t.Errorf("%d records, more than %d", len(got), v1alpha1.MaxOperations)
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
	var status []v1alpha1.OperationRecord
	for pass := range 25 {
		executed := []v1alpha1.OperationRecord{succeeded(pass, fmt.Sprintf("REGISTER INSTANCE instance_%d", pass))}
		status = RecordOperations(status, executed)
		if len(status) > v1alpha1.MaxOperations {
			t.Fatalf("pass %d: %d records", pass, len(status))
		}
		if diff := cmp.Diff(executed[0], status[0]); diff != "" {
			t.Fatalf("pass %d: newest record (-want +got):\n%s", pass, diff)
		}
	}
	if got := status[v1alpha1.MaxOperations-1].Command; got != "REGISTER INSTANCE instance_15" {
		t.Errorf("oldest record kept is %q, want the 15th pass's", got)
	}
}

// The prior slice is the caller's: RecordOperations never writes into it.
func TestRecordOperationsLeavesPriorAlone(t *testing.T) {
	prior := tenRegistrations()
	_ = RecordOperations(prior, []v1alpha1.OperationRecord{succeeded(99, "YIELD LEADERSHIP")})
	if diff := cmp.Diff(tenRegistrations(), prior); diff != "" {
		t.Errorf("prior changed (-before +after):\n%s", diff)
	}
}

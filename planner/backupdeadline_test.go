package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// Another backup of the cluster blocks one that has not started only until its own deadline:
// a Running one until the deadline plus JobGrace, an older one not started until its deadline.
// Done backups and newer ones never block.
func TestBackupBlocksUntilItsDeadline(t *testing.T) {
	deadline := clockAt("06:00")
	for _, tc := range []struct {
		name  string
		other OtherBackup
		now   string
		want  bool
	}{
		{"a running backup before its deadline", OtherBackup{Phase: v1alpha1.BackupRunning, Deadline: deadline}, "05:59", true},
		{"a running backup within the grace", OtherBackup{Phase: v1alpha1.BackupRunning, Deadline: deadline}, "06:00", true},
		{"a running backup past the grace", OtherBackup{Phase: v1alpha1.BackupRunning, Deadline: deadline}, "06:01", false},
		{"an older pending backup before its deadline", OtherBackup{Phase: v1alpha1.BackupPending, Older: true, Deadline: deadline}, "05:59", true},
		{"an older pending backup at its deadline", OtherBackup{Phase: v1alpha1.BackupPending, Older: true, Deadline: deadline}, "06:00", false},
		{"an older backup its hook has not seen", OtherBackup{Older: true, Deadline: deadline}, "05:00", true},
		{"a newer pending backup", OtherBackup{Phase: v1alpha1.BackupPending, Deadline: deadline}, "05:00", false},
		{"a failed backup", OtherBackup{Phase: v1alpha1.BackupFailed, Older: true, Deadline: deadline}, "05:00", false},
		{"a completed backup", OtherBackup{Phase: v1alpha1.BackupCompleted, Older: true, Deadline: deadline}, "05:00", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Blocks(tc.other, clockAt(tc.now)); got != tc.want {
				t.Errorf("Blocks %v, want %v", got, tc.want)
			}
		})
	}
}

// What a backup that has not started waits for, first things first; a stuck older backup past
// its deadline does not hold it.
func TestBackupWaits(t *testing.T) {
	stuck := OtherBackup{Name: "stuck", Phase: v1alpha1.BackupPending, Older: true, Deadline: clockAt("01:00")}
	running := OtherBackup{Name: "running", Phase: v1alpha1.BackupRunning, Deadline: clockAt("06:00")}
	for _, tc := range []struct {
		name string
		gate BackupGate
		want string
	}{
		{"no cluster", BackupGate{}, ReasonClusterNotFound},
		{"hibernated", BackupGate{ClusterFound: true, Hibernated: true}, ReasonClusterHibernate},
		{"no destination", BackupGate{ClusterFound: true, NoDestination: true}, ReasonNoDestination},
		{"a Secret problem", BackupGate{ClusterFound: true, SecretProblems: []string{"Secret x is missing"}}, ReasonSecretProblem},
		{"another backup runs", BackupGate{ClusterFound: true, Others: []OtherBackup{stuck, running}}, ReasonBackupRunning},
		{"an older backup stuck past its deadline holds nothing", BackupGate{ClusterFound: true, Others: []OtherBackup{stuck}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.gate.Now = clockAt("02:00")
			if got := BackupWaits(tc.gate, "mg"); got.Reason != tc.want || (tc.want != "" && got.Message == "") {
				t.Errorf("BackupWaits %+v, want reason %q with a message", got, tc.want)
			}
		})
	}
	if got := BackupWaits(BackupGate{ClusterFound: true, Now: clockAt("02:00"), Others: []OtherBackup{stuck, running}}, "mg"); !strings.Contains(got.Message, "MemgraphBackup running of cluster mg") {
		t.Errorf("the wait names %q, want the running backup alone", got.Message)
	}
}

// A backup that waits is looked at again later and later as it ages, at most every five
// minutes, and exactly at its deadline when that comes first.
func TestPendingResync(t *testing.T) {
	created := clockAt("00:00")
	for _, tc := range []struct {
		name          string
		deadline, now time.Time
		want          time.Duration
	}{
		{"young: the minimum", created.Add(6 * time.Hour), created.Add(30 * time.Second), PendingPollMin},
		{"older: a tenth of its age", created.Add(6 * time.Hour), created.Add(20 * time.Minute), 2 * time.Minute},
		{"old: the maximum", created.Add(6 * time.Hour), created.Add(3 * time.Hour), PendingPollMax},
		{"the deadline comes first", created.Add(20 * time.Second), created.Add(15 * time.Second), 5 * time.Second},
		{"past the deadline: a second", created.Add(20 * time.Second), created.Add(25 * time.Second), time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PendingResync(created, tc.deadline, tc.now); got != tc.want {
				t.Errorf("PendingResync %v, want %v", got, tc.want)
			}
		})
	}
}

// A backup past its deadline fails saying what held it.
func TestDeadlineFailures(t *testing.T) {
	deadline := clockAt("00:00").Add(20 * time.Second)
	if Expired(deadline, deadline.Add(-time.Second)) || !Expired(deadline, deadline) || Expired(time.Time{}, deadline) {
		t.Error("Expired must hold from the deadline on, and never without one")
	}
	got := NotStarted(20*time.Second, deadline, Wait{ReasonSecretProblem, "Secret db/mg-backup-agent does not exist"})
	want := Wait{ReasonDeadlineExceeded, "the backup did not start within its timeout of 20s (deadline 2026-12-06T00:00:20Z); " +
		"it waited for: SecretProblem: Secret db/mg-backup-agent does not exist"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NotStarted (-want +got):\n%s", diff)
	}
	if got := Overdue(deadline, "dial tcp: connection refused"); got.Reason != ReasonDeadlineExceeded || !strings.HasSuffix(got.Message, ": dial tcp: connection refused") {
		t.Errorf("Overdue %+v", got)
	}
}

// A backup whose agent lost its job is taken again until its deadline, and fails at it.
func TestAJobLostIsTakenAgainUntilTheDeadline(t *testing.T) {
	const lost = "agent of instance_1 knows no job b-uid"
	for _, tc := range []struct {
		name      string
		now       string
		want      Wait
		wantRetry bool
	}{
		{"before the deadline", "05:59", Wait{ReasonAgentRestarted, lost + "; the backup is taken again from its start, until its deadline 2026-12-06T06:00:00Z"}, true},
		{"at the deadline", "06:00", Wait{ReasonDeadlineExceeded, "the backup did not complete by its deadline 2026-12-06T06:00:00Z: " + lost}, false},
		{"past the deadline", "07:00", Wait{ReasonDeadlineExceeded, "the backup did not complete by its deadline 2026-12-06T06:00:00Z: " + lost}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, retry := JobLost(clockAt("06:00"), clockAt(tc.now), lost)
			if diff := cmp.Diff(tc.want, got); diff != "" || retry != tc.wantRetry {
				t.Errorf("JobLost retry %v, want %v (-want +got):\n%s", retry, tc.wantRetry, diff)
			}
		})
	}
}

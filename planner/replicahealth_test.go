package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

var (
	healthT0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	healthT1 = healthT0.Add(30 * time.Second)
)

// replicaRow is a SHOW REPLICAS row with the given status per database.
func replicaRow(name, mode string, status map[string]string) memgraph.Replica {
	r := memgraph.Replica{Name: name, SocketAddress: name + ":20000", SyncMode: mode, Databases: map[string]memgraph.ReplicaDatabase{}}
	for db, s := range status {
		r.Databases[db] = memgraph.ReplicaDatabase{Status: s}
	}
	return r
}

func record(name, state string, since time.Time) v1alpha1.ReplicaStatus {
	return v1alpha1.ReplicaStatus{Name: name, SyncMode: "sync", State: state, Since: metav1.NewTime(since)}
}

func TestReplicaRecords(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rows  []memgraph.Replica
		prior []v1alpha1.ReplicaStatus
		want  []v1alpha1.ReplicaStatus
	}{{
		name: "first read: every record since now, in ordinal order",
		rows: []memgraph.Replica{
			replicaRow("instance_10", "async", map[string]string{"memgraph": "ready"}),
			replicaRow("instance_2", "sync", map[string]string{"memgraph": "recovery"}),
		},
		want: []v1alpha1.ReplicaStatus{
			{Name: "instance_2", SyncMode: "sync", State: "recovery", Since: metav1.NewTime(healthT1)},
			{Name: "instance_10", SyncMode: "async", State: "ready", Since: metav1.NewTime(healthT1)},
		},
	}, {
		name:  "recovery then invalid: still unhealthy, since kept (Memgraph's failed recovery loop)",
		rows:  []memgraph.Replica{replicaRow("instance_1", "sync", map[string]string{"memgraph": "invalid"})},
		prior: []v1alpha1.ReplicaStatus{record("instance_1", "recovery", healthT0)},
		want:  []v1alpha1.ReplicaStatus{record("instance_1", "invalid", healthT0)},
	}, {
		name:  "ready then replicating: still healthy, since kept",
		rows:  []memgraph.Replica{replicaRow("instance_1", "sync", map[string]string{"memgraph": "replicating"})},
		prior: []v1alpha1.ReplicaStatus{record("instance_1", "ready", healthT0)},
		want:  []v1alpha1.ReplicaStatus{record("instance_1", "replicating", healthT0)},
	}, {
		name:  "recovery then ready: healed, since now",
		rows:  []memgraph.Replica{replicaRow("instance_1", "sync", map[string]string{"memgraph": "ready"})},
		prior: []v1alpha1.ReplicaStatus{record("instance_1", "recovery", healthT0)},
		want:  []v1alpha1.ReplicaStatus{record("instance_1", "ready", healthT1)},
	}, {
		name: "the worst database speaks, and is named when the databases differ",
		rows: []memgraph.Replica{replicaRow("instance_1", "sync", map[string]string{"memgraph": "ready", "tenant": "diverged", "b": "recovery"})},
		want: []v1alpha1.ReplicaStatus{{Name: "instance_1", SyncMode: "sync", State: "diverged", Database: "tenant", Since: metav1.NewTime(healthT1)}},
	}, {
		name: "a word Memgraph 3.12 never sends ranks worst and is kept verbatim",
		rows: []memgraph.Replica{replicaRow("instance_1", "sync", map[string]string{"memgraph": "diverged", "tenant": "frozen"})},
		want: []v1alpha1.ReplicaStatus{{Name: "instance_1", SyncMode: "sync", State: "frozen", Database: "tenant", Since: metav1.NewTime(healthT1)}},
	}, {
		name: "no database listed: no state, which proves nothing",
		rows: []memgraph.Replica{replicaRow("instance_1", "sync", nil)},
		want: []v1alpha1.ReplicaStatus{{Name: "instance_1", SyncMode: "sync", Since: metav1.NewTime(healthT1)}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := ReplicaRecords(tc.rows, tc.prior, healthT1.Add(300*time.Millisecond))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCarryReplicaRecords(t *testing.T) {
	prior := []v1alpha1.ReplicaStatus{record("instance_0", "ready", healthT0), record("instance_1", "diverged", healthT0),
		record("instance_2", "ready", healthT0)}
	// instance_1 was unregistered for a rebuild; instance_0 became MAIN in a failover.
	latest := NewView(testNet.Coordinator(1), rows(coords(3, 1), one(mainRow(0), replica(2))))
	want := []v1alpha1.ReplicaStatus{record("instance_2", "ready", healthT0)}
	if diff := cmp.Diff(want, CarryReplicaRecords(prior, latest)); diff != "" {
		t.Errorf("carried (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(prior, CarryReplicaRecords(prior, View{})); diff != "" {
		t.Errorf("no table read: every record carried (-want +got):\n%s", diff)
	}
}

func TestReplicaProblemsAndDegraded(t *testing.T) {
	const stuckAfter = 10 * time.Minute
	now := healthT0.Add(stuckAfter)
	up := MemberHealth{Up: 6, Declared: 6}
	for _, tc := range []struct {
		name    string
		records []v1alpha1.ReplicaStatus
		health  MemberHealth
		phase   v1alpha1.Phase
		status  metav1.ConditionStatus
		reason  v1alpha1.ConditionReason
		msg     []string
	}{{
		name:    "all ready",
		records: []v1alpha1.ReplicaStatus{record("instance_1", "ready", healthT0), record("instance_2", "replicating", healthT0)},
		health:  up, status: metav1.ConditionFalse, reason: v1alpha1.ReasonAllMembersUp,
	}, {
		name:    "diverged: reported at once, naming it, Memgraph's word and the remedy",
		records: []v1alpha1.ReplicaStatus{record("instance_2", "diverged", now)},
		health:  up, status: metav1.ConditionTrue, reason: v1alpha1.ReasonReplicaDiverged,
		msg: []string{"instance_2 is diverged (the MAIN's SHOW REPLICAS, since 2026-03-01T10:10:00Z)",
			"kubectl memgraph rebuild mg <instance> (annotation memgraph.com/rebuild)"},
	}, {
		name:    "recovery for less than stuckAfter: not yet",
		records: []v1alpha1.ReplicaStatus{record("instance_1", "recovery", healthT0.Add(time.Second))},
		health:  up, status: metav1.ConditionFalse, reason: v1alpha1.ReasonAllMembersUp,
	}, {
		name:    "recovery for stuckAfter: stuck",
		records: []v1alpha1.ReplicaStatus{record("instance_1", "recovery", healthT0)},
		health:  up, status: metav1.ConditionTrue, reason: v1alpha1.ReasonReplicaStuck,
		msg: []string{"instance_1 is recovery and has not been ready or replicating since 2026-03-01T10:00:00Z"},
	}, {
		name:    "invalid for stuckAfter: stuck",
		records: []v1alpha1.ReplicaStatus{record("instance_1", "invalid", healthT0)},
		health:  up, status: metav1.ConditionTrue, reason: v1alpha1.ReasonReplicaStuck,
		msg: []string{"instance_1 is invalid"},
	}, {
		name:    "one stuck and one diverged: ReplicaDiverged, both named",
		records: []v1alpha1.ReplicaStatus{record("instance_1", "invalid", healthT0), record("instance_2", "diverged", now)},
		health:  up, status: metav1.ConditionTrue, reason: v1alpha1.ReasonReplicaDiverged,
		msg: []string{"instance_1 is invalid", "instance_2 is diverged"},
	}, {
		name:    "a member down: MembersDown first, the replica problems after",
		records: []v1alpha1.ReplicaStatus{record("instance_1", "invalid", healthT0), record("instance_2", "diverged", now)},
		health:  MemberHealth{Up: 5, Declared: 6, Down: []DownMember{{Name: "instance_1", Why: "pod mg-data-1 is not Ready"}}},
		status:  metav1.ConditionTrue, reason: v1alpha1.ReasonMembersDown,
		msg: []string{"instance_1 (pod mg-data-1 is not Ready)", "instance_2 is diverged"},
	}, {
		name:    "a down replica is invalid to its MAIN: only MembersDown says so",
		records: []v1alpha1.ReplicaStatus{record("instance_1", "invalid", healthT0)},
		health:  MemberHealth{Up: 5, Declared: 6, Down: []DownMember{{Name: "instance_1", Why: "health down in the leader's SHOW INSTANCES"}}},
		status:  metav1.ConditionTrue, reason: v1alpha1.ReasonMembersDown,
	}, {
		name:    "hibernated: nothing is degraded",
		records: []v1alpha1.ReplicaStatus{record("instance_2", "diverged", now)},
		health:  up, phase: v1alpha1.PhaseHibernated, status: metav1.ConditionFalse, reason: v1alpha1.ReasonHibernated,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			problems := ReplicaProblems(tc.records, tc.health.Down, stuckAfter, now)
			c := Degraded(DegradedInput{Health: tc.health, Problems: problems, Phase: tc.phase, Cluster: "mg"})
			if c.Status != tc.status || c.Reason != tc.reason {
				t.Errorf("Degraded = %s %s (%s), want %s %s", c.Status, c.Reason, c.Message, tc.status, tc.reason)
			}
			for _, m := range tc.msg {
				if !strings.Contains(c.Message, m) {
					t.Errorf("message %q lacks %q", c.Message, m)
				}
			}
			later := Degraded(DegradedInput{Health: tc.health, Problems: ReplicaProblems(tc.records, tc.health.Down, stuckAfter,
				now.Add(time.Hour)), Phase: tc.phase, Cluster: "mg"})
			if c.Reason == later.Reason && c.Message != later.Message {
				t.Errorf("the message changes with time alone: %q, then %q", c.Message, later.Message)
			}
		})
	}
}

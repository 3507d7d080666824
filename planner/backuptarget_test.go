package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Where a backup is taken: with PreferReplica the first declared Sync or StrictSync replica both
// proofs show caught up (as a handover target), else the MAIN, saying why; with Main the MAIN;
// without a MAIN that is up, nowhere yet.
func TestChooseBackupInstance(t *testing.T) {
	d := declared(3, 3, 3, 3)
	withModes := func(modes ...v1alpha1.ReplicationMode) topology.Declared {
		out := d
		out.DataInstances = append([]topology.DataInstance(nil), d.DataInstances...)
		for i, m := range modes {
			out.DataInstances[i].Mode = m
		}
		return out
	}
	table := rows(coords(3, 1), one(mainRow(0), replica(1), replica(2)))
	caughtUp := lag(9, map[string]int64{"instance_0": 0, "instance_1": 0, "instance_2": 0})
	oneBehind := lag(9, map[string]int64{"instance_0": 0, "instance_1": 2, "instance_2": 0})
	for _, tc := range []struct {
		name     string
		d        topology.Declared
		target   v1alpha1.BackupTarget
		o        Observed
		instance string
		role     string
		reason   string // a part of the reason or the wait's message
		wait     string
	}{
		{"a caught-up Sync replica", d, v1alpha1.BackupPreferReplica, reported(Observe(table, caughtUp, replicas(3, 3))),
			"instance_1", BackupOnReplicaRole, "instance_1 is a Sync replica proven caught up with the MAIN instance_0", ""},
		{"the first replica is behind: the next one", d, v1alpha1.BackupPreferReplica, reported(Observe(table, oneBehind, replicas(3, 3))),
			"instance_2", BackupOnReplicaRole, "instance_2 is a Sync replica", ""},
		{"a StrictSync replica", withModes("", v1alpha1.ReplicationStrictSync, v1alpha1.ReplicationStrictSync), v1alpha1.BackupPreferReplica,
			reported(Observe(table, caughtUp, replicas(3, 3))), "instance_1", BackupOnReplicaRole, "a StrictSync replica", ""},
		{"Async replicas are never chosen", withModes("", v1alpha1.ReplicationAsync, v1alpha1.ReplicationAsync), v1alpha1.BackupPreferReplica,
			reported(Observe(table, caughtUp, replicas(3, 3))), "instance_0", BackupOnMainRole,
			"no Sync or StrictSync replica is proven caught up with the MAIN instance_0 (instance_1 is an Async replica; instance_2 is an Async replica)", ""},
		{"a lag of 0 is no proof without SHOW REPLICAS ready", d, v1alpha1.BackupPreferReplica,
			Observed{Instances: table, Lag: caughtUp, Replicas: showing(0, caughtUp, map[string]string{"instance_1": memgraph.ReplicaRecovery, "instance_2": memgraph.ReplicaRecovery})},
			"instance_0", BackupOnMainRole, "instance_1 is recovery, not ready, on database memgraph", ""},
		{"SHOW REPLICAS could not be read", d, v1alpha1.BackupPreferReplica,
			Observed{Instances: table, Lag: caughtUp, Replicas: &MainReplicas{Main: "instance_0", Problem: "unreachable"}},
			"instance_0", BackupOnMainRole, "SHOW REPLICAS on MAIN instance_0 could not be read: unreachable", ""},
		{"a replica down", d, v1alpha1.BackupPreferReplica,
			reported(Observe(rows(coords(3, 1), one(mainRow(0), downRow(1), downRow(2))), caughtUp, replicas(3, 3))),
			"instance_0", BackupOnMainRole, "instance_1 is down", ""},
		{"the lag was not read", d, v1alpha1.BackupPreferReplica, Observe(table, nil, replicas(3, 3)),
			"instance_0", BackupOnMainRole, "replication lag was not observed", ""},
		{"a single data instance", declared(3, 1, 3, 1), v1alpha1.BackupPreferReplica,
			reported(Observe(rows(coords(3, 1), one(mainRow(0))), lag(9, map[string]int64{"instance_0": 0}), replicas(3, 1))),
			"instance_0", BackupOnMainRole, "the cluster declares no other data instance", ""},
		{"Main", d, v1alpha1.BackupOnMain, reported(Observe(table, caughtUp, replicas(3, 3))),
			"instance_0", BackupOnMainRole, "spec.backup.target is Main", ""},
		{"the MAIN is down", d, v1alpha1.BackupPreferReplica, Observe(rows(coords(3, 1), one(data(0, memgraph.HealthDown, memgraph.RoleMain), replica(1))), nil, replicas(3, 3)),
			"", "", "", "the MAIN instance_0 is down"},
		{"no MAIN", d, v1alpha1.BackupOnMain, Observe(rows(coords(3, 1), one(replica(0), replica(1))), nil, replicas(3, 3)),
			"", "", "", "the leader coordinator_1 names no MAIN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, wait := ChooseBackupInstance(tc.d, tc.target, tc.o)
			if tc.wait != "" {
				if wait.Reason != ReasonNoMain || wait.Message != tc.wait {
					t.Fatalf("wait %+v, want NoMain: %q", wait, tc.wait)
				}
				return
			}
			if wait.Reason != "" || got.Instance.Name != tc.instance || got.Role != tc.role || !strings.Contains(got.Reason, tc.reason) {
				t.Fatalf("got %s as %s (%q), wait %+v; want %s as %s, reason with %q", got.Instance.Name, got.Role, got.Reason, wait, tc.instance, tc.role, tc.reason)
			}
			if got.Instance.BoltServer == "" || got.Instance.Pod == "" {
				t.Errorf("the chosen instance has no address or pod: %+v", got.Instance)
			}
		})
	}
}

// A failed backup job's reason: the role first, then the deadline, then where it failed.
func TestBackupFailure(t *testing.T) {
	deadline := time.Date(2026, 1, 1, 6, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		job  BackupJob
		want string
	}{
		{"the instance holds another role", BackupJob{Role: "main", Store: true, FinishedAt: deadline, Deadline: deadline}, ReasonRoleChanged},
		{"the deadline passed", BackupJob{Role: "replica", Store: true, FinishedAt: deadline, Deadline: deadline}, ReasonDeadlineExceeded},
		{"the store refused, or the upload failed", BackupJob{Role: "replica", Store: true, FinishedAt: deadline.Add(-time.Hour), Deadline: deadline}, ReasonUploadFailed},
		{"Memgraph refused", BackupJob{Role: "replica", FinishedAt: deadline.Add(-time.Hour), Deadline: deadline}, ReasonSnapshotFailed},
		{"the role could not be read", BackupJob{FinishedAt: deadline.Add(-time.Hour), Deadline: deadline}, ReasonSnapshotFailed},
	} {
		if got := BackupFailure(tc.job, "replica"); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// A restore job is started when its agent does not know it (never started, or the agent
// restarted), waited for while it runs, started again RestoreRetryAfter after a failure that may
// mend, and left as it failed when it failed for good.
func TestNextRestore(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		job  RestoreJob
		want RestoreAction
	}{
		{"unknown", RestoreJob{}, RestoreStart},
		{"running", RestoreJob{Known: true, Running: true}, RestoreWait},
		{"completed", RestoreJob{Known: true, Completed: true}, RestoreDone},
		{"failed just now", RestoreJob{Known: true, FinishedAt: now.Add(-RestoreRetryAfter + time.Second)}, RestoreWait},
		{"failed a while ago", RestoreJob{Known: true, FinishedAt: now.Add(-RestoreRetryAfter)}, RestoreStart},
		{"failed for good", RestoreJob{Known: true, Permanent: true, FinishedAt: now.Add(-time.Hour)}, RestoreWait},
	} {
		if got := NextRestore(tc.job, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

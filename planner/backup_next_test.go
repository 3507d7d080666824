package planner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Named fixtures of a MemgraphBackup's pass: backup nightly (UID b1, created at backupCreated
// with a one-hour timeout) of cluster mg (namespace db, two data instances, bucket backups at
// s3.example), looked at ten minutes after its creation.

var backupCreated = time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)

func backupCluster(t *testing.T) *topology.Cluster {
	t.Helper()
	c, err := topology.Admit([]byte(`{"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphCluster","metadata":{"name":"mg",` +
		`"namespace":"db","uid":"u1","generation":1},"spec":{"image":{"repository":"memgraph/memgraph","tag":"3.12.0"},"data":{"replicas":2},` +
		`"backup":{"destination":{"s3":{"endpoint":"https://s3.example","bucket":"backups","prefix":"p",` +
		`"credentialsSecret":{"name":"s3-creds"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func nightlyBackup() *v1alpha1.MemgraphBackup {
	return &v1alpha1.MemgraphBackup{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "db", UID: "b1", Generation: 1,
		CreationTimestamp: metav1.NewTime(backupCreated)},
		Spec: v1alpha1.MemgraphBackupSpec{Cluster: "mg", Timeout: "1h", DeletionPolicy: v1alpha1.BackupDelete}}
}

func nightlyPass(t *testing.T) *BackupPass {
	return &BackupPass{Backup: nightlyBackup(), Cluster: backupCluster(t), PodImages: map[string]string{}, Now: backupCreated.Add(10 * time.Minute)}
}

// uploadingStatus is nightly's status while its job on the agent of data instance 1 uploads its one
// object.
func uploadingStatus() v1alpha1.MemgraphBackupStatus {
	return v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupRunning, Reason: ReasonUploading,
		Instance: topology.DataInstanceName(1), Deadline: stamp(backupCreated.Add(time.Hour)), Bucket: "backups", Endpoint: "https://s3.example",
		Databases: []v1alpha1.BackupDatabase{{Name: v1alpha1.DefaultDatabase, Key: "p/db/mg/nightly/memgraph", Size: 10}}, Key: "p/db/mg/nightly/memgraph"}
}

// backupWorld answers a pass's steps: by the step's label, the result to give (zero when none).
type backupWorld map[string]BackupResult

// backupLabel names a step as the test expects it, literally.
func backupLabel(s BackupStep) string {
	switch s := s.(type) {
	case BackupReach:
		return "reach"
	case BackupFindJob:
		var at []string
		for _, a := range s.Agents {
			at = append(at, a.Instance.Name)
		}
		return "find " + s.ID + " on " + strings.Join(at, ",")
	case backupShowInstances:
		return "show instances on " + s.from
	case backupShowLag:
		return "show lag on " + s.from
	case backupShowReplicas:
		return "show replicas on " + s.from
	case BackupStartJob:
		return "start " + s.ID + " on " + s.Agent.Instance.Name + " as " + s.Role + " under " + s.KeyPrefix
	case BackupPollJob:
		return "poll " + s.ID
	case BackupReadStore:
		return "read store"
	case BackupRemove:
		return "remove " + s.Key
	}
	return "done"
}

// runBackup drives NextBackup against world: the steps it took, and its answer.
func runBackup(t *testing.T, in *BackupPass, world backupWorld) ([]string, BackupDone) {
	t.Helper()
	var record []BackupResult
	var steps []string
	for range 20 {
		s := NextBackup(in, record)
		if done, ok := s.(BackupDone); ok {
			return steps, done
		}
		label := backupLabel(s)
		steps = append(steps, label)
		record = append(record, world[label])
	}
	t.Fatalf("the pass did not end: %v", steps)
	return nil, BackupDone{}
}

func TestNextBackup(t *testing.T) {
	deadline := stamp(backupCreated.Add(time.Hour))
	started := backupCreated.Add(10 * time.Minute)
	agents := "find b1 on " + topology.DataInstanceName(0) + "," + topology.DataInstanceName(1)
	start := "start b1 on " + topology.DataInstanceName(1) + " as replica under p/db/mg/nightly"
	uploading := AgentJob{Uploading: true, ChosenRole: "replica", Reason: "a caught-up SYNC replica", StartedAt: started,
		Deadline: backupCreated.Add(time.Hour), BytesDone: 4, BytesTotal: 10,
		Databases: []v1alpha1.BackupDatabase{{Name: v1alpha1.DefaultDatabase, Snapshot: "/snap/1", Key: "p/db/mg/nightly/memgraph", Size: 10}}}
	completed := uploading
	completed.Uploading, completed.Completed, completed.FinishedAt, completed.BytesDone = false, true, started.Add(time.Minute), 10
	// The leader coordinator_1 names instance_0 MAIN and proves instance_1 caught up: the choice
	// reads its table, its lag and the MAIN's replicas, and chooses instance_1.
	leader, main := addr(coordHost(1), 7687), addr(dataHost(0), 7687)
	choose := []string{"show instances on " + leader, "show lag on " + leader, "show replicas on " + main}
	caughtUp := lag(9, map[string]int64{"instance_0": 0, "instance_1": 0})
	replica1 := func(world backupWorld) backupWorld {
		world[choose[0]] = BackupResult{Instances: rows(coords(3, 1), one(mainRow(0), replica(1)))}
		world[choose[1]] = BackupResult{Lag: caughtUp}
		world[choose[2]] = BackupResult{Replicas: replicaRowsFor("instance_0", caughtUp)}
		return world
	}
	chosen := "spec.backup.target is PreferReplica: instance_1 is a Sync replica proven caught up with the MAIN instance_0 " +
		"(SHOW REPLICATION LAG 0 behind and the MAIN's SHOW REPLICAS ready on every database)"
	runningAt := v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupRunning, Reason: ReasonUploading,
		Deadline: deadline, StartedAt: stamp(started), Endpoint: "https://s3.example", Bucket: "backups",
		Instance: topology.DataInstanceName(1), Pod: "mg-data-1", MemgraphVersion: "3.12.0", InstanceRole: "REPLICA", InstanceReason: "a caught-up SYNC replica",
		UploadedBytes: 4, TotalBytes: 10, Size: 10, Snapshot: "/snap/1", Key: "p/db/mg/nightly/memgraph", Databases: uploading.Databases}
	startedAt := runningAt
	startedAt.InstanceReason = chosen

	tests := []struct {
		name      string
		pass      func(*BackupPass)
		world     func(t *testing.T) backupWorld
		wantSteps []string
		want      BackupDone
	}{{
		name: "a backup done for good stays as it is: nothing is asked",
		pass: func(p *BackupPass) {
			p.Backup.Status = v1alpha1.MemgraphBackupStatus{Phase: v1alpha1.BackupCompleted, Reason: ReasonCompleted}
		},
		wantSteps: nil,
		want:      BackupDone{Status: v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupCompleted, Reason: ReasonCompleted}},
	}, {
		name:      "no cluster: Pending, nothing reached, called again as it ages",
		pass:      func(p *BackupPass) { p.Cluster = nil },
		wantSteps: nil,
		want: BackupDone{Status: v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupPending, Reason: ReasonClusterNotFound,
			Error: "MemgraphCluster mg does not exist in the backup's namespace; the backup starts once it does", Deadline: deadline}, ResyncAfter: time.Minute},
	}, {
		name: "the backup-agent Secret lacks what a start needs: Pending on it",
		world: func(*testing.T) backupWorld {
			return backupWorld{"reach": {Problems: []string{"Secret db/mg-backup-agent does not exist yet"}}}
		},
		wantSteps: []string{"reach"},
		want: BackupDone{Status: v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupPending, Reason: ReasonSecretProblem,
			Error: "Secret db/mg-backup-agent does not exist yet", Deadline: deadline}, ResyncAfter: time.Minute},
	}, {
		name: "an older backup of the cluster not started yet goes first: Pending behind it",
		pass: func(p *BackupPass) {
			p.Others = []v1alpha1.MemgraphBackup{{ObjectMeta: metav1.ObjectMeta{Name: "earlier", Namespace: "db",
				CreationTimestamp: metav1.NewTime(backupCreated.Add(-time.Minute))}, Spec: v1alpha1.MemgraphBackupSpec{Cluster: "mg"}}}
		},
		wantSteps: []string{"reach"},
		want: BackupDone{Status: v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupPending, Reason: ReasonBackupRunning,
			Error: "MemgraphBackup earlier of cluster mg comes first: one backup runs at a time per cluster", Deadline: deadline}, ResyncAfter: time.Minute},
	}, {
		name: "a fresh start: no agent has the job, the chosen replica's agent starts it",
		world: func(*testing.T) backupWorld {
			return replica1(backupWorld{start: {Agent: AgentAnswer{Job: uploading}}})
		},
		pass:      func(p *BackupPass) { p.PodImages["mg-data-1"] = "memgraph/memgraph:3.12.0" },
		wantSteps: append(append([]string{"reach", agents}, choose...), start),
		want:      BackupDone{Status: startedAt, ResyncAfter: BackupJobPoll},
	}, {
		name: "a job an earlier call started is adopted: nothing is chosen or started again",
		world: func(*testing.T) backupWorld {
			return backupWorld{agents: {Agents: []AgentAnswer{{Err: "connection refused"}, {Job: uploading}}}}
		},
		wantSteps: []string{"reach", agents},
		want:      BackupDone{Status: runningAt, ResyncAfter: BackupJobPoll},
	}, {
		name: "the agent refuses the job: Failed for good",
		world: func(t *testing.T) backupWorld {
			return replica1(backupWorld{start: {Agent: AgentAnswer{Status: 409, Message: "the instance's storage is read-only",
				Err: "backup agent mg-data-1:9090: 409 Conflict: the instance's storage is read-only"}}})
		},
		wantSteps: append(append([]string{"reach", agents}, choose...), start),
		want: BackupDone{Status: v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupFailed, Reason: ReasonAgentRefused,
			Error: "the instance's storage is read-only", Deadline: deadline, CompletedAt: stamp(started), Endpoint: "https://s3.example", Bucket: "backups",
			Instance: topology.DataInstanceName(1), Pod: "mg-data-1", MemgraphVersion: "3.12.0", InstanceRole: "REPLICA", InstanceReason: chosen}},
	}, {
		name: "an agent that does not serve jobs yet (404) refuses nothing: Pending until it does",
		world: func(t *testing.T) backupWorld {
			return replica1(backupWorld{start: {Agent: AgentAnswer{Status: 404, Err: "the agent does not serve /jobs/"}}})
		},
		wantSteps: append(append([]string{"reach", agents}, choose...), start),
		want: BackupDone{Status: v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupPending, Reason: ReasonAgentUnreachable,
			Error: "the agent does not serve /jobs/", Deadline: deadline}, ResyncAfter: time.Minute},
	}, {
		name: "no coordinator answers: Pending, no MAIN to choose from",
		world: func(*testing.T) backupWorld {
			return backupWorld{"show instances on " + leader: {QueryErr: errors.New("connection refused")},
				"show instances on " + addr(coordHost(2), 7687): {QueryErr: errors.New("connection refused")},
				"show instances on " + addr(coordHost(3), 7687): {QueryErr: errors.New("connection refused")}}
		},
		wantSteps: []string{"reach", agents, "show instances on " + leader, "show instances on " + addr(coordHost(2), 7687),
			"show instances on " + addr(coordHost(3), 7687)},
		want: BackupDone{Status: v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupPending, Reason: ReasonNoMain,
			Error: "no coordinator of cluster mg named a ready leader: coordinator_1: connection refused; coordinator_2: connection refused; " +
				"coordinator_3: connection refused", Deadline: deadline}, ResyncAfter: time.Minute},
	}, {
		name: "past its deadline, still held: Failed, saying what held it",
		pass: func(p *BackupPass) { p.Now = backupCreated.Add(2 * time.Hour) },
		world: func(*testing.T) backupWorld {
			return backupWorld{"reach": {Problems: []string{"no CA"}}}
		},
		wantSteps: []string{"reach"},
		want: BackupDone{Status: v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupFailed, Reason: ReasonDeadlineExceeded,
			Error:    "the backup did not start within its timeout of 1h0m0s (deadline 2026-03-01T03:00:00Z); it waited for: SecretProblem: no CA",
			Deadline: deadline, CompletedAt: stamp(backupCreated.Add(2 * time.Hour))}},
	}, {
		name:      "a Running backup's job completed: Completed",
		pass:      func(p *BackupPass) { p.Backup.Status = uploadingStatus() },
		world:     func(*testing.T) backupWorld { return backupWorld{"poll b1": {Agent: AgentAnswer{Job: completed}}} },
		wantSteps: []string{"poll b1"},
		want: BackupDone{Status: func() v1alpha1.MemgraphBackupStatus {
			st := uploadingStatus()
			st.Phase, st.Reason, st.StartedAt, st.CompletedAt = v1alpha1.BackupCompleted, ReasonCompleted, stamp(started), stamp(started.Add(time.Minute))
			st.UploadedBytes, st.TotalBytes, st.Size, st.Snapshot, st.Databases = 10, 10, 10, "/snap/1", completed.Databases
			return st
		}()},
	}, {
		name: "the agent does not answer before the grace: still Running, saying why",
		pass: func(p *BackupPass) { p.Backup.Status = uploadingStatus() },
		world: func(*testing.T) backupWorld {
			return backupWorld{"poll b1": {Agent: AgentAnswer{Err: "connection refused"}}}
		},
		wantSteps: []string{"poll b1"},
		want: BackupDone{Status: func() v1alpha1.MemgraphBackupStatus {
			st := uploadingStatus()
			st.Error = "connection refused"
			return st
		}(), ResyncAfter: BackupJobPoll},
	}, {
		name: "the agent lost the job: its objects go, then Pending to start again",
		pass: func(p *BackupPass) { p.Backup.Status = uploadingStatus() },
		world: func(*testing.T) backupWorld {
			return backupWorld{"poll b1": {Agent: AgentAnswer{Unknown: true, Err: "no job b1"}}}
		},
		wantSteps: []string{"poll b1", "read store", "remove p/db/mg/nightly/memgraph"},
		want: BackupDone{Status: v1alpha1.MemgraphBackupStatus{ObservedGeneration: 1, Phase: v1alpha1.BackupPending, Reason: ReasonAgentRestarted,
			Error:    "no job b1: its pod restarted while it took the backup; the backup is taken again from its start, until its deadline 2026-03-01T03:00:00Z",
			Deadline: deadline}, ResyncAfter: time.Minute},
	}, {
		name: "deleted with deletionPolicy Retain: the objects stay and the backup goes at once",
		pass: func(p *BackupPass) {
			p.Finalizing, p.Backup.Status, p.Backup.Spec.DeletionPolicy = true, uploadingStatus(), v1alpha1.BackupRetain
			p.Backup.Status.Phase = v1alpha1.BackupCompleted
		},
		wantSteps: nil,
		want: BackupDone{Status: func() v1alpha1.MemgraphBackupStatus {
			st := uploadingStatus()
			st.Phase, st.Reason, st.Error = v1alpha1.BackupCompleted, ReasonObjectsKept, "deletionPolicy is Retain: the objects stay in the store"
			return st
		}(), Finalized: true, Events: []Event{{Level: LevelInfo, Msg: "backup deleted, its objects kept", Args: []any{"why",
			"deletionPolicy is Retain: the objects stay in the store", "bucket", "backups", "objects", []string{"p/db/mg/nightly/memgraph"}}}}},
	}, {
		name: "deleted with its schedule, whose backupOwnerReference is none: the objects stay whatever the deletionPolicy",
		pass: func(p *BackupPass) {
			p.Finalizing, p.Backup.Status = true, uploadingStatus()
			p.Backup.Status.Phase = v1alpha1.BackupCompleted
			gone := metav1.NewTime(backupCreated)
			p.ScheduleName, p.Schedule = "daily", &v1alpha1.MemgraphScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: "daily", DeletionTimestamp: &gone}}
		},
		wantSteps: nil,
		want: BackupDone{Status: func() v1alpha1.MemgraphBackupStatus {
			st := uploadingStatus()
			st.Phase, st.Reason = v1alpha1.BackupCompleted, ReasonObjectsKept
			st.Error = "MemgraphScheduledBackup daily is being deleted and its backupOwnerReference is none: the objects stay in the store, " +
				"whatever the deletionPolicy (restore them by destination and key)"
			return st
		}(), Finalized: true, Events: []Event{{Level: LevelInfo, Msg: "backup deleted, its objects kept", Args: []any{"why",
			"MemgraphScheduledBackup daily is being deleted and its backupOwnerReference is none: the objects stay in the store, " +
				"whatever the deletionPolicy (restore them by destination and key)", "bucket", "backups", "objects", []string{"p/db/mg/nightly/memgraph"}}}}},
	}, {
		name: "deleted with deletionPolicy Delete: every object goes first",
		pass: func(p *BackupPass) {
			p.Finalizing, p.Backup.Status, p.Backup.Spec.DeletionPolicy = true, uploadingStatus(), v1alpha1.BackupDelete
			p.Backup.Status.Phase = v1alpha1.BackupCompleted
		},
		wantSteps: []string{"read store", "remove p/db/mg/nightly/memgraph"},
		want: BackupDone{Status: func() v1alpha1.MemgraphBackupStatus {
			st := uploadingStatus()
			st.Phase = v1alpha1.BackupCompleted
			return st
		}(), Finalized: true},
	}, {
		name: "an object cannot be removed: the backup stays, DeleteFailed",
		pass: func(p *BackupPass) {
			p.Finalizing, p.Backup.Status, p.Backup.Spec.DeletionPolicy = true, uploadingStatus(), v1alpha1.BackupDelete
			p.Backup.Status.Phase = v1alpha1.BackupFailed
		},
		world: func(*testing.T) backupWorld {
			return backupWorld{"remove p/db/mg/nightly/memgraph": {Err: "AccessDenied"}}
		},
		wantSteps: []string{"read store", "remove p/db/mg/nightly/memgraph"},
		want: BackupDone{Status: func() v1alpha1.MemgraphBackupStatus {
			st := uploadingStatus()
			st.Phase, st.Reason, st.Error = v1alpha1.BackupFailed, ReasonDeleteFailed, "AccessDenied"
			return st
		}(), ResyncAfter: BackupDeletePoll},
	}, {
		name: "deleted while its job runs: it is waited for, nothing removed yet",
		pass: func(p *BackupPass) {
			p.Finalizing, p.Backup.Status, p.Backup.Spec.DeletionPolicy = true, uploadingStatus(), v1alpha1.BackupDelete
		},
		world:     func(*testing.T) backupWorld { return backupWorld{"poll b1": {Agent: AgentAnswer{Job: uploading}}} },
		wantSteps: []string{"poll b1"},
		want: BackupDone{Status: func() v1alpha1.MemgraphBackupStatus {
			st := uploadingStatus()
			st.StartedAt, st.UploadedBytes, st.TotalBytes, st.Size, st.Snapshot, st.Databases = stamp(started), 4, 10, 10, "/snap/1", uploading.Databases
			return st
		}(), ResyncAfter: BackupJobPoll},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := nightlyPass(t)
			if tt.pass != nil {
				tt.pass(in)
			}
			world := backupWorld{}
			if tt.world != nil {
				world = tt.world(t)
			}
			steps, got := runBackup(t, in, world)
			if diff := cmp.Diff(tt.wantSteps, steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

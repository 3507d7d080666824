package planner

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// passOn is the outcome of a pass that planned on the leader's own converged 3+2 view, whose
// workloads are settled and whose observed MAIN's budget already selects the MAIN's pod
// (settledBudgets): the verdict is AllInstancesRegistered until a case changes it.
func passOn(mutate func(o *Outcome)) Outcome {
	d := declared(3, 2, 3, 2)
	view := NewView(testNet.Coordinator(1), rows(coords(3, 1), one(mainRow(0), replica(1))))
	plan := Decide(d, Observe(view.Instances, nil, replicas(3, 2)))
	o := Outcome{Declared: d, Discovery: Discovery{View: view, Asked: 1, Reachable: true}, Plan: plan,
		Replicas: plan.Replicas, Latest: view, Progress: plan.Progress, AtDeclaredSize: true,
		MainBudgetHeld: settledBudgets(d, plan.Progress.Main)}
	if mutate != nil {
		mutate(&o)
	}
	return o
}

// settledBudgets is the pod the observed MAIN's budget selects once the budgets have followed
// main: its pod.
func settledBudgets(d topology.Declared, main string) string {
	pod, _ := d.DataPod(main)
	return pod
}

func TestVerdict(t *testing.T) {
	refused := &memgraph.Error{Kind: memgraph.KindUnreachable, Message: "connection refused"}
	raftFailed := &memgraph.Error{Kind: memgraph.KindRaftWrite, Message: "Writing to Raft log failed. Please retry the operation."}
	type want struct {
		Ready, Converged v1alpha1.ConditionReason
		Resync           float64
		Message          string // part of Converged's message
	}
	for _, tc := range []struct {
		name string
		o    Outcome
		want want
	}{
		{"converged", passOn(nil),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonAllInstancesRegistered, ResyncConverged, "3 coordinators and 2 data instances registered"}},
		{"a drain's handover ran", passOn(func(o *Outcome) {
			o.Drain = DrainStep{Verdict: DrainAct, Node: "a", Message: "node a is cordoned: handing over"}
		}),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonDrainPending, ResyncProgressing, "node a is cordoned: handing over"}},
		{"a drain waits", passOn(func(o *Outcome) {
			o.Drain = DrainStep{Verdict: DrainWait, Node: "a", Message: "node a is cordoned: waiting"}
		}),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonDrainPending, ResyncWaiting, "node a is cordoned: waiting"}},
		{"a drain is blocked", passOn(func(o *Outcome) {
			o.Drain = DrainStep{Verdict: DrainBlocked, Node: "a", Message: "node a is cordoned: blocked"}
		}),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonDrainPending, ResyncWaiting, "node a is cordoned: blocked"}},
		{"a spec.tls problem speaks first, even before waiting pods", passOn(func(o *Outcome) {
			o.TLSProblem, o.WaitingPods = "Secret db/tls (spec.tls.ca) is unusable", []string{"mg-data-0"}
			o.Latest, o.Progress = View{}, Progress{} // nothing is read past the gate
		}), want{v1alpha1.ReasonTLSConfigInvalid, v1alpha1.ReasonTLSConfigInvalid, ResyncWaiting, "is unusable"}},
		{"a missing Secret speaks before spec.tls and the pods", passOn(func(o *Outcome) {
			o.TLSProblem, o.WaitingPods = "Secret db/tls (spec.tls.secretName) does not exist", []string{"mg-data-0"}
			o.MissingSecrets = []topology.MissingSecret{{Namespace: "db", NamedSecret: topology.NamedSecret{Name: "tls", Field: "spec.tls.secretName", Holds: "a certificate"}}}
			o.Latest, o.Progress = View{}, Progress{}
		}), want{v1alpha1.ReasonSecretMissing, v1alpha1.ReasonSecretMissing, ResyncWaiting, "Secret db/tls (spec.tls.secretName: a certificate) does not exist"}},
		{"pods not Ready, no coordinator read", passOn(func(o *Outcome) {
			o.WaitingPods = []string{"mg-data-0", "mg-data-1"}
			o.Latest, o.Progress = View{}, Progress{}
		}), want{v1alpha1.ReasonWorkloadsNotReady, v1alpha1.ReasonWorkloadsNotReady, ResyncWaiting, "waiting for 2 pods to be Ready: mg-data-0, mg-data-1"}},
		{"a replica's pod not Ready: the MAIN still serves writes", passOn(func(o *Outcome) {
			o.WaitingPods = []string{"mg-data-1"}
			o.PodReady = map[string]bool{"mg-data-0": true, "mg-data-1": false}
			o.Problems = []topology.PodProblem{{Pod: "mg-data-1", Container: "memgraph", Reason: topology.ProblemCrashLoopBackOff, Message: "restarted 3 times: back-off"}}
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonWorkloadsNotReady, ResyncWaiting,
			"waiting for 1 pod to be Ready: mg-data-1; pod mg-data-1 container memgraph: CrashLoopBackOff: restarted 3 times: back-off"}},
		{"the MAIN's pod not Ready", passOn(func(o *Outcome) {
			o.WaitingPods = []string{"mg-data-0"}
			o.PodReady = map[string]bool{"mg-data-0": false, "mg-data-1": true}
		}), want{v1alpha1.ReasonMainDown, v1alpha1.ReasonWorkloadsNotReady, ResyncWaiting, "waiting for 1 pod to be Ready: mg-data-0"}},
		{"the budget ran out before any coordinator was asked", Outcome{Declared: declared(3, 2, 3, 2)},
			want{v1alpha1.ReasonRegistrationInProgress, v1alpha1.ReasonRegistrationInProgress, ResyncBudgetExhausted, "before the coordinators were asked"}},
		{"no coordinator answered", Outcome{Declared: declared(3, 2, 3, 2), Discovery: Discover([]Answer{answer(1, nil, refused)}, 1)},
			want{v1alpha1.ReasonCoordinatorUnreachable, v1alpha1.ReasonCoordinatorUnreachable, ResyncWaiting, "coordinator_1: connection refused"}},
		{"the only leader named is not ready", Outcome{Declared: declared(3, 2, 3, 2),
			Discovery: Discover([]Answer{answer(1, unknownHealth(coords(3, 2)), nil)}, 1)},
			want{v1alpha1.ReasonNoCoordinatorLeader, v1alpha1.ReasonNoCoordinatorLeader, ResyncProgressing, "coordinator_2 leads but is not ready yet"}},
		{"answers name no leader", Outcome{Declared: declared(3, 2, 3, 2), Discovery: Discover([]Answer{answer(1, coords(3, 0), nil)}, 1)},
			want{v1alpha1.ReasonNoCoordinatorLeader, v1alpha1.ReasonNoCoordinatorLeader, ResyncWaiting, "none names a leader: coordinator_1: names no leader"}},
		{"the leader asked is not ready", passOn(func(o *Outcome) { o.LeaderNotReady = "coordinator_3" }),
			want{v1alpha1.ReasonNoCoordinatorLeader, v1alpha1.ReasonNoCoordinatorLeader, ResyncProgressing, "coordinator_3 leads but is not ready yet"}},
		{"the leader's read failed", passOn(func(o *Outcome) { o.LeaderErr = refused }),
			want{v1alpha1.ReasonCoordinatorUnreachable, v1alpha1.ReasonCoordinatorUnreachable, ResyncWaiting, "leader coordinator_1: connection refused"}},
		{"a step failed: Memgraph's message", passOn(func(o *Outcome) {
			o.Execution.Stopped = &Stop{Query: qRegister(2), Verdict: StepFailed, Err: raftFailed}
			o.Progress.HalfJoined = names("coordinator", 5) // a failed step outranks what the table shows
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRegistrationFailed, ResyncWaiting, qRegister(2) + " failed: Writing to Raft log failed"}},
		{"ADD refused for a half-joined member", passOn(func(o *Outcome) {
			o.Execution.Stopped = &Stop{Query: qAdd(5), Verdict: StepFailed, Err: &HalfJoinedError{Coordinator: "coordinator_5", Err: raftFailed}}
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonCoordinatorHalfJoined, ResyncWaiting, "coordinator_5 is a Raft member without a bolt_server"}},
		{"FORCE RESET still running", passOn(func(o *Outcome) {
			o.Execution.Stopped = &Stop{Query: memgraph.ForceResetClusterStateQuery, Verdict: StepInProgress, Err: refused}
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonFailoverInProgress, ResyncProgressing, "FORCE RESET CLUSTER STATE is still running on coordinator_1"}},
		{"the leader moved mid-pass", passOn(func(o *Outcome) {
			o.Execution.Stopped = &Stop{Query: qUnregister(2), Verdict: StepLeaderMoved, Err: raftFailed}
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonLeadershipTransferInProgress, ResyncProgressing, qUnregister(2) + " did not run"}},
		{"half-joined members", passOn(func(o *Outcome) { o.Progress.HalfJoined = names("coordinator", 4, 5) }),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonCoordinatorHalfJoined, ResyncWaiting, "coordinator_4, coordinator_5 are Raft members"}},
		{"a retiring MAIN without a caught-up survivor", passOn(func(o *Outcome) {
			o.Plan.Progress.NoCaughtUpSurvivor = "instance_0 is 3 transactions behind on database memgraph"
			o.Progress.RetiringDataInstances = names("instance", 2)
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonNoCaughtUpSurvivor, ResyncWaiting, "instance_0 is 3 transactions behind"}},
		{"the retiring leader yields", passOn(func(o *Outcome) {
			o.Plan.Progress.YieldPending = true
			o.Progress.RetiringCoordinators = names("coordinator", 5)
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonLeadershipTransferInProgress, ResyncProgressing, "coordinator_1 is retiring and yields"}},
		{"members retiring, the budget spent too", passOn(func(o *Outcome) {
			o.Progress.RetiringDataInstances = names("instance", 2, 3)
			o.Execution.BudgetExhausted = true
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRetirementInProgress, ResyncProgressing, "retiring instance_2, instance_3"}},
		{"retirees unregistered, pods still there", passOn(func(o *Outcome) { o.Declared = declared(3, 2, 3, 4) }),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRetirementInProgress, ResyncProgressing, "unregistered instance_2, instance_3; waiting for their pods to go"}},
		{"the budget ran out mid-plan", passOn(func(o *Outcome) {
			o.Plan.Commands = []Command{RegisterInstance{Name: "instance_2"}, SetInstanceToMain{Name: "instance_0"}}
			o.Execution = Execution{Ran: []string{qRegister(2)}, BudgetExhausted: true}
			o.Progress.PendingDataInstances = names("instance", 3)
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRegistrationInProgress, ResyncBudgetExhausted, "ran out after 1 of 2 steps"}},
		{"registering", passOn(func(o *Outcome) {
			o.Progress.PendingCoordinators, o.Progress.PendingDataInstances = names("coordinator", 3), names("instance", 2)
		}),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRegistrationInProgress, ResyncProgressing, "registering coordinator_3, instance_2"}},
		{"a dry run", passOn(func(o *Outcome) { o.DryRun, o.Plan.Commands = true, []Command{RegisterInstance{Name: "instance_2"}} }),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRegistrationInProgress, ResyncProgressing, "dry run: 1 planned steps not executed"}},
		{"bolt_servers to update", passOn(func(o *Outcome) {
			o.Progress.AddressUpdates = []AddressUpdate{{Name: "instance_1", From: "mg-data-1:7687", To: "198.51.100.11:7687"}}
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRegistrationInProgress, ResyncProgressing,
			"updating the bolt_server clients are given: instance_1 mg-data-1:7687 → 198.51.100.11:7687"}},
		{"a rollout in progress outranks unsettled StatefulSets", passOn(func(o *Outcome) {
			o.Rollout = RolloutStep{Reason: v1alpha1.ReasonRolloutInProgress, Message: "replacing mg-data-1 (instance_1); 1 of 5 pods updated"}
			o.AtDeclaredSize = false
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRolloutInProgress, ResyncProgressing, "replacing mg-data-1 (instance_1)"}},
		{"a stuck rollout", passOn(func(o *Outcome) {
			o.Rollout = RolloutStep{Reason: v1alpha1.ReasonRolloutStuck, Message: "stuck: mg-data-1 was created"}
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRolloutStuck, ResyncWaiting, "stuck: mg-data-1"}},
		{"a blocked rollout", passOn(func(o *Outcome) {
			o.Rollout = RolloutStep{Reason: v1alpha1.ReasonRolloutBlocked, Message: "cannot replace mg-data-0"}
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRolloutBlocked, ResyncWaiting, "cannot replace mg-data-0"}},
		{"registering outranks a rollout", passOn(func(o *Outcome) {
			o.Progress.PendingDataInstances = names("instance", 2)
			o.Rollout = RolloutStep{Reason: v1alpha1.ReasonRolloutInProgress, Message: "holding every data pod"}
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonRegistrationInProgress, ResyncProgressing, "registering instance_2"}},
		{"a rollout done", passOn(func(o *Outcome) { o.Rollout = RolloutStep{Reason: v1alpha1.ReasonUpToDate} }),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonAllInstancesRegistered, ResyncConverged, "registered"}},
		{"StatefulSets not settled", passOn(func(o *Outcome) { o.AtDeclaredSize = false }),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonWorkloadsNotReady, ResyncWaiting, "not yet at 3 coordinators and 2 data instances"}},
		{"no MAIN", passOn(func(o *Outcome) { o.Progress.Main = "" }),
			want{v1alpha1.ReasonNoMainElected, v1alpha1.ReasonAllInstancesRegistered, ResyncConverged, "registered"}},
		{"the MAIN's budget first appears: the data budget leaves its pod out on the next sync", passOn(func(o *Outcome) { o.MainBudgetHeld = "" }),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonDisruptionBudgetMoving, ResyncProgressing,
				"the MAIN's PodDisruptionBudget now protects mg-data-0, the MAIN's pod; the data PodDisruptionBudget leaves it out on the next sync"}},
		{"MAIN moved: the data budget follows on the next sync", passOn(func(o *Outcome) { o.MainBudgetHeld = "mg-data-1" }),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonDisruptionBudgetMoving, ResyncProgressing,
				"MAIN moved from pod mg-data-1 to mg-data-0: the MAIN's PodDisruptionBudget now protects mg-data-0; " +
					"the data PodDisruptionBudget selects mg-data-1 again and leaves mg-data-0 out on the next sync"}},
		{"the MAIN's budget holds a pod no longer declared, no MAIN read", passOn(func(o *Outcome) { o.Progress.Main, o.MainBudgetHeld = "", "mg-data-5" }),
			want{v1alpha1.ReasonNoMainElected, v1alpha1.ReasonDisruptionBudgetMoving, ResyncProgressing,
				"protected mg-data-5, no longer a declared data pod, and is removed; the data PodDisruptionBudget selects every data pod on the next sync"}},
		{"StatefulSets not settled outrank the budgets' move", passOn(func(o *Outcome) { o.AtDeclaredSize, o.MainBudgetHeld = false, "" }),
			want{v1alpha1.ReasonMainElected, v1alpha1.ReasonWorkloadsNotReady, ResyncWaiting, "not yet at 3 coordinators and 2 data instances"}},
		{"converged with a drifted registration", passOn(func(o *Outcome) {
			o.Progress.Drift = []Drift{{Name: "instance_1", Field: "bolt_server", Observed: "old:7687", Declared: "new:7687"}}
		}), want{v1alpha1.ReasonMainElected, v1alpha1.ReasonAllInstancesRegistered, ResyncConverged,
			`registered with other addresses than declared (not rewritten): instance_1 bolt_server is "old:7687", declared "new:7687"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Verdict(tc.o)
			got := want{v.Ready.Reason, v.Converged.Reason, v.ResyncAfterSeconds, tc.want.Message}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if !strings.Contains(v.Converged.Message, tc.want.Message) {
				t.Errorf("Converged message %q does not say %q", v.Converged.Message, tc.want.Message)
			}
			if wantTrue := tc.want.Converged == v1alpha1.ReasonAllInstancesRegistered; (v.Converged.Status == "True") != wantTrue {
				t.Errorf("Converged status %s with reason %s", v.Converged.Status, v.Converged.Reason)
			}
		})
	}
}

// Updated is the rollout's own verdict, whatever stopped the pass, and True only when it is done.
func TestUpdatedIsTheRolloutsVerdict(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      Outcome
		status string
		reason v1alpha1.ConditionReason
	}{
		{"done", passOn(func(o *Outcome) { o.Rollout = RolloutStep{Reason: v1alpha1.ReasonUpToDate, Message: "all 5 pods"} }),
			"True", v1alpha1.ReasonUpToDate},
		{"in progress while pods are not Ready", passOn(func(o *Outcome) {
			o.WaitingPods = []string{"mg-data-1"}
			o.Rollout = RolloutStep{Reason: v1alpha1.ReasonRolloutInProgress, Message: "waiting for mg-data-1"}
		}), "False", v1alpha1.ReasonRolloutInProgress},
		{"stuck while the leader is unreachable", passOn(func(o *Outcome) {
			o.LeaderErr = &memgraph.Error{Kind: memgraph.KindUnreachable, Message: "connection refused"}
			o.Rollout = RolloutStep{Reason: v1alpha1.ReasonRolloutStuck, Message: "stuck"}
		}), "False", v1alpha1.ReasonRolloutStuck},
	} {
		v := Verdict(tc.o).Updated
		if string(v.Status) != tc.status || v.Reason != tc.reason || v.Message != tc.o.Rollout.Message {
			t.Errorf("%s: Updated %s/%s %q, want %s/%s %q", tc.name, v.Status, v.Reason, v.Message, tc.status, tc.reason, tc.o.Rollout.Message)
		}
	}
}

// The MAIN Ready names is the plan's (lowest ordinal), never whichever row came first.
func TestReadyNamesThePlansMain(t *testing.T) {
	o := passOn(func(o *Outcome) {
		view := NewView(testNet.Coordinator(1), rows(coords(3, 1), one(mainRow(1), mainRow(0))))
		o.Latest, o.Progress = view, Decide(o.Declared, Observe(view.Instances, nil, replicas(3, 2))).Progress
	})
	if got := Verdict(o).Ready.Message; !strings.HasPrefix(got, "instance_0 is MAIN") {
		t.Errorf("Ready says %q", got)
	}
}

func TestMessagesAreBounded(t *testing.T) {
	var many []string
	for i := 0; i < 40; i++ {
		many = append(many, "instance_"+strings.Repeat("9", i))
	}
	if got, want := listNames(many[:3]), "instance_, instance_9, instance_99"; got != want {
		t.Errorf("listNames(3) = %q, want %q", got, want)
	}
	if got := listNames(many); !strings.HasSuffix(got, "and 35 more") {
		t.Errorf("listNames(40) = %q, want it to end with the count left out", got)
	}
	long := isFalse(v1alpha1.ReasonRegistrationFailed, "%s", strings.Repeat("é", 1000))
	if len(long.Message) > MaxMessage || !utf8.ValidString(long.Message) || !strings.HasSuffix(long.Message, "…") {
		t.Errorf("bounded message: %d bytes, valid UTF-8 %v", len(long.Message), utf8.ValidString(long.Message))
	}
}

package hooks_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/hookmetrics"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// notReadyStatus is a Pod status whose Ready condition is False, with containers waiting as given.
func notReadyStatus(containers ...map[string]any) map[string]any {
	statuses := make([]any, len(containers))
	for i, c := range containers {
		statuses[i] = c
	}
	return map[string]any{"phase": "Pending", "conditions": []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
	}, "containerStatuses": statuses}
}

func waiting(reason, message string, restarts int) map[string]any {
	return map[string]any{"name": topology.ContainerName, "restartCount": restarts,
		"state": map[string]any{"waiting": map[string]any{"reason": reason, "message": message}}}
}

// A converged 3+2 cluster whose replica's pod is not Ready keeps its MAIN and leader in the
// status, is Ready (the MAIN serves writes) and Degraded naming the replica and why.
func TestReplicaPodNotReadyKeepsMainAndLeader(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.bootstrap()
	h.assertConverged()
	h.kill(h.hostOf("memgraph-data-1"))
	h.podStatus = map[string]map[string]any{"memgraph-data-1": notReadyStatus(waiting("CrashLoopBackOff", "back-off 40s restarting failed container", 4))}
	h.world.ResetLog()
	h.sync()

	for field, want := range map[string]string{"main": "instance_0", "leader": "coordinator_1", "members": "4/5"} {
		if got := h.statusField(field); got != want {
			t.Errorf("status.%s = %q, want %q", field, got, want)
		}
	}
	h.assertCondition(v1alpha1.ConditionReady, "True", v1alpha1.ReasonMainElected)
	msg := h.assertCondition(v1alpha1.ConditionDegraded, "True", v1alpha1.ReasonMembersDown)
	if want := "instance_1 (pod memgraph-data-1 container memgraph: CrashLoopBackOff: restarted 4 times: back-off 40s"; !strings.Contains(msg, want) {
		t.Errorf("Degraded %q, want it to say %q", msg, want)
	}
	msg = h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonWorkloadsNotReady)
	if !strings.Contains(msg, "memgraph-data-1") || !strings.Contains(msg, "CrashLoopBackOff") {
		t.Errorf("Converged %q, want it to name memgraph-data-1 and why", msg)
	}
	if w := h.boltWrites(); len(w) != 0 {
		t.Errorf("writes while a declared pod is not Ready: %q", w)
	}

	// The pod comes back: every member is up again.
	h.restart(h.hostOf("memgraph-data-1"))
	h.podStatus = nil
	h.sync()
	h.assertCondition(v1alpha1.ConditionDegraded, "False", v1alpha1.ReasonAllMembersUp)
	if got := h.statusField("members"); got != "5/5" {
		t.Errorf("status.members = %q, want 5/5", got)
	}
	h.assertNoMisuse()
}

// The MAIN's pod not Ready: Ready is False with MainDown naming it, the leader is still shown.
func TestMainPodNotReadyIsMainDown(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.bootstrap()
	h.assertConverged()
	h.podStatus = map[string]map[string]any{"memgraph-data-0": notReadyStatus()}
	h.sync()
	msg := h.assertCondition(v1alpha1.ConditionReady, "False", v1alpha1.ReasonMainDown)
	if !strings.Contains(msg, "instance_0 is MAIN but its pod memgraph-data-0 is not Ready") {
		t.Errorf("Ready %q, want it to name the MAIN's pod", msg)
	}
	if got := h.statusField("leader"); got != "coordinator_1" {
		t.Errorf("status.leader = %q, want coordinator_1", got)
	}
	h.assertCondition(v1alpha1.ConditionDegraded, "True", v1alpha1.ReasonMembersDown)
}

// Without a Ready coordinator nothing can be read: the status says which pods it waits for.
func TestNoReadyCoordinatorReadsNothing(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.bootstrap()
	h.assertConverged()
	h.podStatus = map[string]map[string]any{}
	for _, pod := range []string{"memgraph-coordinator-1", "memgraph-coordinator-2", "memgraph-coordinator-3"} {
		h.podStatus[pod] = notReadyStatus()
	}
	h.world.ResetLog()
	h.sync()
	h.assertCondition(v1alpha1.ConditionReady, "False", v1alpha1.ReasonWorkloadsNotReady)
	if q := h.world.Queries(); len(q) != 0 {
		t.Errorf("queries sent with no coordinator pod Ready: %+v", q)
	}
	if got := h.statusField("members"); got != "2/5" {
		t.Errorf("status.members = %q, want 2/5", got)
	}
}

// A license Secret that does not exist is named, with its namespace, before any pod fails on it.
func TestMissingLicenseSecretIsNamed(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.noLicense = true
	h.sync()
	for _, typ := range []v1alpha1.ConditionType{v1alpha1.ConditionReady, v1alpha1.ConditionConverged} {
		msg := h.assertCondition(typ, "False", v1alpha1.ReasonSecretMissing)
		if !strings.Contains(msg, "Secret default/memgraph-secrets (spec.secrets.name") {
			t.Errorf("%s %q, want it to name Secret default/memgraph-secrets", typ, msg)
		}
	}
	h.noLicense = false
	h.sync()
	h.sync()
	h.assertConverged()
}

// Each reason a pod cannot start is named with the pod, the reason and the container's own
// message, bounded.
func TestWhyAPodCannotStartIsNamed(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, tc := range []struct {
		name   string
		status map[string]any
		want   string
	}{
		{"CreateContainerConfigError", notReadyStatus(waiting("CreateContainerConfigError", `secret "memgraph-secrets" not found`, 0)),
			`pod memgraph-data-1 container memgraph: CreateContainerConfigError: secret "memgraph-secrets" not found`},
		{"ImagePullBackOff", notReadyStatus(waiting("ImagePullBackOff", `Back-off pulling image "memgraph/memgraph:nope"`, 0)),
			`pod memgraph-data-1 container memgraph: ImagePullBackOff: Back-off pulling image "memgraph/memgraph:nope"`},
		{"ErrImagePull", notReadyStatus(waiting("ErrImagePull", "manifest unknown", 0)),
			"pod memgraph-data-1 container memgraph: ErrImagePull: manifest unknown"},
		{"CrashLoopBackOff", notReadyStatus(waiting("CrashLoopBackOff", "back-off 5m0s", 12)),
			"pod memgraph-data-1 container memgraph: CrashLoopBackOff: restarted 12 times: back-off 5m0s"},
		{"Unschedulable", map[string]any{"phase": "Pending", "conditions": []any{
			map[string]any{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available: 3 Insufficient memory."},
		}}, "pod memgraph-data-1: Unschedulable: 0/3 nodes are available: 3 Insufficient memory."},
		{"PVC Pending", map[string]any{"phase": "Pending", "conditions": []any{
			map[string]any{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
				"message": `0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.`},
		}}, "pod memgraph-data-1: Unschedulable: 0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."},
		{"a long message is bounded", notReadyStatus(waiting("CreateContainerConfigError", long, 0)),
			"CreateContainerConfigError: " + strings.Repeat("x", topology.MaxProblemMessage-1) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 3, 2)
			h.bootstrap()
			h.assertConverged()
			h.kill(h.hostOf("memgraph-data-1"))
			h.podStatus = map[string]map[string]any{"memgraph-data-1": tc.status}
			h.sync()
			for _, typ := range []v1alpha1.ConditionType{v1alpha1.ConditionDegraded, v1alpha1.ConditionConverged} {
				_, _, msg := h.condition(typ)
				if !strings.Contains(msg, tc.want) {
					t.Errorf("%s %q, want it to say %q", typ, msg, tc.want)
				}
				if strings.Contains(msg, strings.Repeat("x", topology.MaxProblemMessage)) {
					t.Errorf("%s carries the container's message unbounded", typ)
				}
			}
			h.assertCondition(v1alpha1.ConditionReady, "True", v1alpha1.ReasonMainElected)
		})
	}
}

// A handover is counted query by query, exactly the writes Memgraph received, and each is in
// status.operations, newest first; the executed log line lists the queries sent.
func TestHandoverIsCountedPerQuerySent(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	h := newHarness(t, 3, 3, func(c *harnessConfig) { c.hook.Registerer, c.hook.Logger = reg, logger })
	h.bootstrap()
	h.assertConverged()
	before := commandCounts(t, reg)
	h.world.ResetLog()
	logs.Reset()
	h.spec["preferredMain"] = "instance_2"
	h.sync()
	h.assertMains("instance_2")

	sent := h.boltWrites()
	if want := []string{"DEMOTE INSTANCE instance_0", "SET INSTANCE instance_2 TO MAIN"}; !cmp.Equal(sent, want) {
		t.Fatalf("writes sent %q, want %q", sent, want)
	}
	got := commandCounts(t, reg)
	for key, n := range before {
		got[key] -= n
		if got[key] == 0 {
			delete(got, key)
		}
	}
	want := map[string]float64{string(planner.KindHandover) + "/ok": 1, string(planner.KindSetInstanceToMain) + "/ok": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("memgraph_hooks_commands_total after the handover (-want +got):\n%s", diff)
	}

	var ops []v1alpha1.OperationRecord
	raw, _ := json.Marshal(h.lastResp.Status["operations"])
	if err := json.Unmarshal(raw, &ops); err != nil {
		t.Fatal(err)
	}
	if len(ops) > v1alpha1.MaxOperations || len(ops) < 2 {
		t.Fatalf("%d operations, want 2 to %d", len(ops), v1alpha1.MaxOperations)
	}
	if ops[0].Command != "SET INSTANCE instance_2 TO MAIN" || ops[1].Command != "DEMOTE INSTANCE instance_0" ||
		ops[0].Outcome != v1alpha1.OperationSucceeded {
		t.Errorf("operations, newest first: %+v", ops[:2])
	}
	if !strings.Contains(logs.String(), `"msg":"executed","cluster":"default/memgraph","queries":["DEMOTE INSTANCE instance_0","SET INSTANCE instance_2 TO MAIN"]`) {
		t.Errorf("no executed line listing the queries sent:\n%s", logs.String())
	}

	// A pass that sends nothing carries the records forward unchanged.
	h.advance(time.Minute)
	h.sync()
	var again []v1alpha1.OperationRecord
	raw, _ = json.Marshal(h.lastResp.Status["operations"])
	_ = json.Unmarshal(raw, &again)
	if diff := cmp.Diff(ops, again); diff != "" {
		t.Errorf("operations after a pass that wrote nothing (-before +after):\n%s", diff)
	}
}

// commandCounts is memgraph_hooks_commands_total by "command/result".
func commandCounts(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, mf := range families {
		if mf.GetName() != "memgraph_hooks_commands_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			counts[labels["command"]+"/"+labels["result"]] = m.GetCounter().GetValue()
		}
	}
	return counts
}

// Each sync sets the cluster's gauges; a cluster no longer synced (deleted: Metacontroller stops
// syncing it) has its series removed.
func TestClusterGaugesFollowTheClusterAndGoWithIt(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, 3, 2, func(c *harnessConfig) { c.hook.Registerer = reg })
	h.bootstrap()
	h.assertConverged()
	labels := map[string]string{"namespace": "default", "name": "memgraph"}
	for name, want := range map[string]float64{
		"memgraph_hooks_cluster_main_present": 1, "memgraph_hooks_cluster_leader_present": 1,
		"memgraph_hooks_cluster_members_up": 5, "memgraph_hooks_cluster_members_declared": 5,
		"memgraph_hooks_cluster_rollout_step": 0,
	} {
		if got := metricValue(t, reg, name, labels); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	h.podStatus = map[string]map[string]any{"memgraph-data-1": notReadyStatus()}
	h.sync()
	if got := metricValue(t, reg, "memgraph_hooks_cluster_members_up", labels); got != 4 {
		t.Errorf("members_up = %v with a replica's pod not Ready, want 4", got)
	}
	if got := metricValue(t, reg, "memgraph_hooks_cluster_main_present", labels); got != 1 {
		t.Errorf("main_present = %v with a replica's pod not Ready, want 1", got)
	}

	h.advance(3*planner.ResyncConverged*time.Second + time.Second)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if strings.HasPrefix(mf.GetName(), "memgraph_hooks_cluster_") && len(mf.GetMetric()) > 0 {
			t.Errorf("%s still has %d series after the cluster stopped being synced", mf.GetName(), len(mf.GetMetric()))
		}
	}
}

// The lag gauge shows the replica furthest behind as SHOW REPLICATION LAG on the leader reports
// it, read once per hookmetrics.LagRefresh: a converged sync in between asks nothing more.
func TestMaxReplicaLagGaugeFollowsTheLeadersLag(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, 3, 2, func(c *harnessConfig) { c.hook.Registerer = reg })
	h.bootstrap()
	h.assertConverged()
	labels := map[string]string{"namespace": "default", "name": "memgraph"}
	if got := metricValue(t, reg, "memgraph_hooks_cluster_max_replica_lag", labels); got != 0 {
		t.Errorf("max_replica_lag = %v on a converged cluster, want 0", got)
	}
	h.must(h.world.SetLag(h.network().DataInstance(1).Host, "memgraph", 12))
	h.must(h.world.Commit("memgraph", 20))
	h.world.ResetLog()
	h.sync()
	if got := metricValue(t, reg, "memgraph_hooks_cluster_max_replica_lag", labels); got != 0 {
		t.Errorf("max_replica_lag = %v before LagRefresh passed, want the value read last, 0", got)
	}
	for _, q := range h.world.Queries() {
		if q.Text == memgraph.ShowReplicationLagQuery {
			t.Errorf("a converged sync within LagRefresh of the last read sent %s to %s", q.Text, q.Host)
		}
	}
	h.advance(hookmetrics.LagRefresh)
	h.sync()
	if got := metricValue(t, reg, "memgraph_hooks_cluster_max_replica_lag", labels); got != 12 {
		t.Errorf("max_replica_lag = %v after LagRefresh with a replica 12 transactions behind, want 12", got)
	}
}

// A rejected request's log line names the cluster it was about, in JSON with one level key.
func TestRejectionLogNamesTheCluster(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	h := newHarness(t, 3, 2, func(c *harnessConfig) { c.hook.Logger = logger })
	h.spec["coordinators"] = 2 // Memgraph cannot run it: a 400
	if code, body := h.post("/sync", h.request()); code != 400 {
		t.Fatalf("sync answered %d: %s", code, body)
	}
	h.spec["coordinators"] = 3
	req := h.request()
	req["children"] = "not an object"
	if code, body := h.post("/sync", req); code != 400 {
		t.Fatalf("sync answered %d: %s", code, body)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want one per rejection:\n%s", len(lines), logs.String())
	}
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		if rec["level"] != "WARN" || rec["cluster"] != "default/memgraph" || rec["msg"] != "rejected hook request" {
			t.Errorf("rejection line %s, want level WARN and cluster default/memgraph", line)
		}
		if strings.Count(line, `"level"`) != 1 {
			t.Errorf("line with more than one level key: %s", line)
		}
	}
}

package hooks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// settingsSpec declares two settings away from Memgraph's defaults, one at its default, and
// Async replicas with sync_failover_only false, so that failover still has candidates.
func settingsSpec(h *harness) {
	h.spec["replicationMode"] = "Async"
	h.spec["coordinatorSettings"] = map[string]any{
		"instanceDownTimeoutSeconds": 10, "syncFailoverOnly": false, "globalReadOnly": false,
	}
}

func (h *harness) leaderSettings() map[string]string {
	h.t.Helper()
	return h.world.Raft().Clusters[0].Settings
}

// coordinatorQueries are the queries the coordinators received since the log was reset.
func (h *harness) coordinatorQueries() []string {
	var out []string
	for _, q := range h.world.Queries() {
		out = append(out, q.Host+": "+q.Text)
	}
	return out
}

func TestDeclaredSettingsAreAppliedInOnePassThenReadOncePerSync(t *testing.T) {
	h := newHarness(t, 3, 3)
	settingsSpec(h)
	h.register() // registers every member; the settings wait for a pass with nothing else to do
	if st, reason, _ := h.condition(v1alpha1.ConditionCoordinatorSettings); st != "Unknown" || reason != v1alpha1.ReasonSettingsPending {
		t.Fatalf("after the registering pass: CoordinatorSettings %s/%s, want Unknown/SettingsPending", st, reason)
	}
	for _, d := range h.world.Raft().Clusters[0].Data {
		if d.Mode != "async" {
			t.Errorf("%s registered %s, want async", d.Name, d.Mode)
		}
	}
	h.world.ResetLog()
	h.sync()
	h.assertConverged()
	leader := h.network().Coordinator(1).Host
	want := []string{leader + ": SHOW INSTANCES", leader + ": SHOW COORDINATOR SETTINGS",
		leader + ": SET COORDINATOR SETTING 'sync_failover_only' TO 'false'",
		leader + ": SET COORDINATOR SETTING 'instance_down_timeout_sec' TO '10'"}
	if diff := cmp.Diff(want, h.coordinatorQueries()); diff != "" {
		t.Errorf("queries of the pass that applies the settings (-want +got):\n%s", diff)
	}
	if s := h.leaderSettings(); s["instance_down_timeout_sec"] != "10" || s["sync_failover_only"] != "false" || s["global_read_only"] != "false" {
		t.Errorf("leader's settings %v", s)
	}
	if st, reason, msg := h.condition(v1alpha1.ConditionCoordinatorSettings); st != "True" || reason != v1alpha1.ReasonSettingsApplied {
		t.Errorf("CoordinatorSettings %s/%s: %s", st, reason, msg)
	}
	wantApplied := map[string]any{"instanceDownTimeoutSeconds": float64(10), "syncFailoverOnly": false, "globalReadOnly": false}
	if diff := cmp.Diff(wantApplied, h.lastResp.Status["coordinatorSettings"]); diff != "" {
		t.Errorf("status.coordinatorSettings (-want +got):\n%s", diff)
	}
	op, _ := h.lastResp.Status["lastOperation"].(map[string]any)
	if op["writes"] != "SET sync_failover_only TO false; SET instance_down_timeout_sec TO 10" || op["result"] != "Succeeded" {
		t.Errorf("lastOperation %v", op)
	}
	if _, _, msg := h.condition(v1alpha1.ConditionAutomaticFailover); msg != "" {
		t.Errorf("AutomaticFailover reported although sync_failover_only is false: %s", msg)
	}

	// Converged: two queries per sync, SHOW INSTANCES and SHOW COORDINATOR SETTINGS.
	h.world.ResetLog()
	for i := 0; i < 3; i++ {
		h.sync()
		h.assertConverged()
	}
	want = nil
	for i := 0; i < 3; i++ {
		want = append(want, leader+": SHOW INSTANCES", leader+": SHOW COORDINATOR SETTINGS")
	}
	if diff := cmp.Diff(want, h.coordinatorQueries()); diff != "" {
		t.Errorf("queries of three converged syncs with settings declared (-want +got):\n%s", diff)
	}
	h.assertNoMisuse()
}

func TestSettingDriftIsRepairedOnceAndReported(t *testing.T) {
	h := newHarness(t, 3, 2)
	settingsSpec(h)
	h.bootstrap()
	h.sync()
	// A human switches the cluster to read-only by hand.
	leader := h.network().Coordinator(1)
	if err := h.pool.Client(leader.BoltServer).SetCoordinatorSetting(context.Background(), "global_read_only", "true"); err != nil {
		t.Fatal(err)
	}
	h.world.ResetLog()
	h.sync()
	want := []string{leader.Host + ": SHOW INSTANCES",
		leader.Host + ": SHOW COORDINATOR SETTINGS", leader.Host + ": SET COORDINATOR SETTING 'global_read_only' TO 'false'"}
	if diff := cmp.Diff(want, h.coordinatorQueries()); diff != "" {
		t.Errorf("queries of the repairing pass (-want +got):\n%s", diff)
	}
	if got := h.leaderSettings()["global_read_only"]; got != "false" {
		t.Errorf("global_read_only %q after the repair, want false", got)
	}
	op, _ := h.lastResp.Status["lastOperation"].(map[string]any)
	wantOp := map[string]any{"writes": "SET global_read_only TO false", "result": "Succeeded",
		"message": `coordinator settings put back as declared: global_read_only: "true" → "false"`}
	delete(op, "time")
	if diff := cmp.Diff(wantOp, op); diff != "" {
		t.Errorf("lastOperation (-want +got):\n%s", diff)
	}
	h.world.ResetLog()
	h.sync()
	if diff := cmp.Diff([]string{leader.Host + ": SHOW INSTANCES", leader.Host + ": SHOW COORDINATOR SETTINGS"}, h.coordinatorQueries()); diff != "" {
		t.Errorf("the pass after the repair (-want +got):\n%s", diff)
	}
}

func TestRefusedSettingBecomesACondition(t *testing.T) {
	h := newHarness(t, 3, 2)
	// Memgraph 3.11 has no global_read_only: its coordinators refuse it with their own message.
	h.spec["image"] = map[string]any{"tag": "3.11.0"}
	h.spec["coordinatorSettings"] = map[string]any{"globalReadOnly": true, "instanceDownTimeoutSeconds": 7}
	h.bootstrap()
	h.sync()
	st, reason, msg := h.condition(v1alpha1.ConditionCoordinatorSettings)
	wantMsg := "SET COORDINATOR SETTING 'global_read_only' TO 'true': Setting global_read_only doesn't exist on coordinators."
	if st != "False" || reason != v1alpha1.ReasonSettingRefused || msg != wantMsg {
		t.Errorf("CoordinatorSettings %s/%s: %q, want False/SettingRefused: %q", st, reason, msg, wantMsg)
	}
	if got := h.leaderSettings()["instance_down_timeout_sec"]; got != "7" {
		t.Errorf("instance_down_timeout_sec %q: the setting before the refused one was not set", got)
	}
	op, _ := h.lastResp.Status["lastOperation"].(map[string]any)
	if op["result"] != "Failed" || op["message"] != "Setting global_read_only doesn't exist on coordinators." {
		t.Errorf("lastOperation %v", op)
	}
	h.assertConverged() // a refused setting does not stop the cluster serving
}

func TestAllAsyncReplicasWarnOfNoAutomaticFailover(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.spec["replicationMode"] = "Async"
	h.bootstrap()
	h.sync()
	st, reason, msg := h.condition(v1alpha1.ConditionAutomaticFailover)
	if st != "False" || reason != v1alpha1.ReasonAutomaticFailoverGap || msg == "" {
		t.Errorf("AutomaticFailover %s/%s: %s", st, reason, msg)
	}
	if _, _, msg := h.condition(v1alpha1.ConditionCoordinatorSettings); msg != "" {
		t.Errorf("CoordinatorSettings reported without a declared setting: %s", msg)
	}
}

func TestDryRunPlansTheSettingsWithoutSettingThem(t *testing.T) {
	h := newHarness(t, 3, 2)
	settingsSpec(h)
	h.register()
	h.world.ResetLog()
	resp := h.dryRun()
	want := []string{"SET COORDINATOR SETTING 'sync_failover_only' TO 'false'", "SET COORDINATOR SETTING 'instance_down_timeout_sec' TO '10'"}
	if diff := cmp.Diff(want, resp.Plan); diff != "" {
		t.Errorf("dry-run plan (-want +got):\n%s", diff)
	}
	assertOnlyReads(t, h.world.Queries())
	if got := h.leaderSettings()["instance_down_timeout_sec"]; got != "5" {
		t.Errorf("a dry run set instance_down_timeout_sec to %q", got)
	}
}

// A MemgraphCluster stored before the CRD refused 0 for the two timings (an older CRD) still
// reaches the hook with it. Memgraph 3.12 would take it and crash-loop every coordinator (a
// health-check frequency of 0) or fail over on one missed ping (a down timeout of 0), so the hook
// never sends it: the cluster is managed as without it, the other settings are kept, and the
// CoordinatorSettings condition names the field and why.
func TestUnsafeSettingsOfAnUnadmittedSpecAreNeverSent(t *testing.T) {
	for _, tc := range []struct {
		field, setting string
		msg            string
	}{
		{"instanceHealthCheckFrequencySeconds", "instance_health_check_frequency_sec", v1alpha1.MsgHealthCheckFrequency},
		{"instanceDownTimeoutSeconds", "instance_down_timeout_sec", v1alpha1.MsgInstanceDownTimeout},
	} {
		t.Run(tc.field, func(t *testing.T) {
			h := newHarness(t, 3, 2)
			h.spec["coordinatorSettings"] = map[string]any{tc.field: 0, "globalReadOnly": true}
			h.bootstrap()
			h.sync()
			h.assertConverged()
			h.assertNoMisuse()
			for _, q := range h.coordinatorQueries() {
				if strings.Contains(q, tc.setting) {
					t.Errorf("the hook sent %s", q)
				}
			}
			if s := h.leaderSettings(); s["global_read_only"] != "true" || s[tc.setting] == "0" {
				t.Errorf("leader's settings %v, want global_read_only true and %s untouched", s, tc.setting)
			}
			msg := h.assertCondition(v1alpha1.ConditionCoordinatorSettings, "False", v1alpha1.ReasonSettingWithheld)
			if want := "spec.coordinatorSettings." + tc.field + " is not sent to the coordinators: " + tc.msg; msg != want {
				t.Errorf("CoordinatorSettings message\n%s\nwant\n%s", msg, want)
			}
			if diff := cmp.Diff(map[string]any{"globalReadOnly": true}, h.lastResp.Status["coordinatorSettings"]); diff != "" {
				t.Errorf("status.coordinatorSettings (-want +got):\n%s", diff)
			}
		})
	}
}

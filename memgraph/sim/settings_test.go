package sim

import (
	"maps"
	"testing"
)

// TestSetCoordinatorSettingValidatesLikeMemgraph follows Memgraph v3.12.0
// coordinator_instance.cpp SetCoordinatorSetting: the two booleans read "true" (any case) as
// true and anything else as false, global_read_only accepts only "true"/"false" (any case), the
// lags and the batch size parse as uint64 and the two timings as uint32 (utils::ParseStringToUint:
// from_chars of the whole string), and interpreter.cpp turns INVALID_ARGUMENT into its text.
func TestSetCoordinatorSettingValidatesLikeMemgraph(t *testing.T) {
	tests := []struct {
		setting, value string
		stored         string // "" when refused
	}{
		{"enabled_reads_on_main", "TRUE", "true"},
		{"enabled_reads_on_main", "yes", "false"},
		{"sync_failover_only", "False", "false"},
		{"global_read_only", "True", "true"},
		{"global_read_only", "yes", ""},
		{"max_failover_replica_lag", "18446744073709551615", "18446744073709551615"},
		{"max_failover_replica_lag", "18446744073709551616", ""},
		{"max_replica_read_lag", "-1", ""},
		{"deltas_batch_progress_size", "0", "0"},
		{"instance_down_timeout_sec", "4294967295", "4294967295"},
		{"instance_down_timeout_sec", "4294967296", ""},
		{"instance_health_check_frequency_sec", "+2", ""},
		{"instance_health_check_frequency_sec", " 2", ""},
		{"instance_health_check_frequency_sec", "2s", ""},
	}
	for _, tc := range tests {
		t.Run(tc.setting+"="+tc.value, func(t *testing.T) {
			w, c1 := setupCluster(t, 1, 0)
			before := w.Raft().Clusters[0].Settings[tc.setting]
			out := c1.run("SET COORDINATOR SETTING '"+tc.setting+"' TO '"+tc.value+"'", nil)
			got := w.Raft().Clusters[0].Settings[tc.setting]
			switch {
			case tc.stored == "" && (out.err == nil || out.err.Msg != msgInvalidSetting(tc.setting)):
				t.Fatalf("want Memgraph's refusal, got %+v", out)
			case tc.stored == "" && got != before:
				t.Fatalf("a refused value changed the setting from %q to %q", before, got)
			case tc.stored != "" && out.err != nil:
				t.Fatalf("refused: %+v", out.err)
			case tc.stored != "" && got != tc.stored:
				t.Fatalf("stored %q, want %q", got, tc.stored)
			}
		})
	}
}

// TestGlobalReadOnlyRefusesWritesOnTheMain: global_read_only true disables writing on the MAIN
// (coordinator_instance.cpp 1300–1312), which refuses writes with WriteQueryOnMainException until
// it is false again.
func TestGlobalReadOnlyRefusesWritesOnTheMain(t *testing.T) {
	w, c1 := setupCluster(t, 1, 2)
	d1 := dial(t, w, dataBolt(1))
	d1.must("CREATE (n)")
	c1.must("SET COORDINATOR SETTING 'global_read_only' TO 'true'")
	if out := d1.run("CREATE (n)", nil); out.err == nil || out.err.Msg != msgWriteOnMain {
		t.Fatalf("write with global_read_only true: %+v", out)
	}
	d1.must("MATCH (n) RETURN n") // reads still served
	c1.must("SET COORDINATOR SETTING 'global_read_only' TO 'false'")
	d1.must("CREATE (n)")
	if got := w.Acknowledged("memgraph"); got != 2 {
		t.Fatalf("acknowledged %d, want the two writes outside read-only", got)
	}
}

// TestGlobalReadOnlyIsNewIn312: a 3.11 coordinator neither shows nor takes it (v3.11.0
// constants.hpp has the other seven settings).
func TestGlobalReadOnlyIsNewIn312(t *testing.T) {
	w := startWorld(t, 0, 0)
	spec := coordSpec(1)
	spec.Version = "3.11.0"
	must(t, w.StartCoordinator(spec))
	c1 := dial(t, w, coordBolt(1))
	c1.must(addQuery(1))
	for _, r := range c1.must("SHOW COORDINATOR SETTINGS").rows {
		if r["setting_name"] == "global_read_only" {
			t.Fatalf("3.11 shows global_read_only: %v", r)
		}
	}
	if out := c1.run("SET COORDINATOR SETTING 'global_read_only' TO 'true'", nil); out.err == nil || out.err.Msg != msgNoSuchSetting("global_read_only") {
		t.Fatalf("SET global_read_only on 3.11: %+v", out)
	}
	c1.must("SET COORDINATOR SETTING 'instance_down_timeout_sec' TO '7'")
}

// TestSetCoordinatorSettingValidatesBeforeLeadership: SetCoordinatorSetting checks the name, then
// parses the value, and only then appends to Raft (Memgraph v3.12.0 coordinator_instance.cpp
// 1081–1135), so a follower answers a bad name or value as the leader does and a good one with the
// Raft append's refusal (SET COORDINATOR SETTING is not forwarded); nothing changes.
func TestSetCoordinatorSettingValidatesBeforeLeadership(t *testing.T) {
	w, _ := setupCluster(t, 3, 1)
	follower := dial(t, w, coordBolt(2))
	for _, tc := range []struct{ query, want string }{
		{"SET COORDINATOR SETTING 'instance_heartbeat_sec' TO '1'", "Setting instance_heartbeat_sec doesn't exist on coordinators."},
		{"SET COORDINATOR SETTING 'instance_down_timeout_sec' TO 'ten'", "Invalid argument detected while trying to update setting instance_down_timeout_sec"},
		{"SET COORDINATOR SETTING 'global_read_only' TO 'yes'", "Invalid argument detected while trying to update setting global_read_only"},
		{"SET COORDINATOR SETTING 'instance_down_timeout_sec' TO '10'", msgRaftWriteFailed},
	} {
		before := w.Raft().Clusters[0].Settings
		out := follower.run(tc.query, nil)
		if out.err == nil || out.err.Msg != tc.want || out.phase != "PULL" {
			t.Errorf("%s on a follower: %+v, want %q at PULL", tc.query, out, tc.want)
		}
		if after := w.Raft().Clusters[0].Settings; !maps.Equal(before, after) {
			t.Errorf("%s on a follower changed the settings from %v to %v", tc.query, before, after)
		}
	}
}

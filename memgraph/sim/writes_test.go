package sim

import (
	"fmt"
	"testing"
	"time"
)

// TestRestartedMainRefusesWritesUntilRepromoted follows Memgraph v3.12.0
// src/replication/state.cpp 171 (a MAIN restored from durability has writing disabled),
// src/query/interpreter.cpp 10357–10361 (WriteQueryOnMainException at RUN) and
// src/coordination/coordinator_instance.cpp 1226–1262 (the leader's health check re-promotes
// it), every instance_health_check_frequency_sec.
func TestRestartedMainRefusesWritesUntilRepromoted(t *testing.T) {
	for _, freq := range []int{1, 3} {
		t.Run(fmt.Sprintf("every %d s", freq), func(t *testing.T) {
			w, c1 := setupCluster(t, 1, 2)
			c1.must(fmt.Sprintf("SET COORDINATOR SETTING 'instance_health_check_frequency_sec' TO '%d'", freq))
			must(t, w.Restart("data-1.mg.svc"))
			d1 := dial(t, w, dataBolt(1))
			if out := d1.run("CREATE (n)", nil); out.err == nil || out.err.Msg != msgWriteOnMain || out.phase != "RUN" {
				t.Fatalf("write on the restarted MAIN: %+v", out)
			}
			if got := row(t, c1.must("SHOW INSTANCES").rows, "instance_1"); got[4] != "up" || got[5] != "main" {
				t.Fatalf("the restarted MAIN shows %v", got)
			}
			if err := w.Commit("memgraph", 1); err == nil {
				t.Fatal("Commit succeeded on a MAIN that refuses writes")
			}
			advance(t, w, time.Duration(freq)*time.Second-time.Millisecond)
			if out := d1.run("CREATE (n)", nil); out.err == nil || out.err.Msg != msgWriteOnMain {
				t.Fatalf("write before the health check: %+v", out)
			}
			advance(t, w, time.Millisecond)
			d1.must("CREATE (n)")
			if got := w.Acknowledged("memgraph"); got != 1 {
				t.Fatalf("acknowledged %d, want the one write that succeeded", got)
			}
		})
	}
}

// TestRestartedMainThatRaftReplacedComesBackReplica: the leader demotes it instead
// (coordinator_instance.cpp 1266–1285); the simulator's role follows Raft at once.
func TestRestartedMainThatRaftReplacedComesBackReplica(t *testing.T) {
	w, _ := setupCluster(t, 1, 2)
	must(t, w.Kill("data-1.mg.svc"))
	advance(t, w, 5*time.Second)
	must(t, w.Restart("data-1.mg.svc"))
	if out := dial(t, w, dataBolt(1)).run("CREATE (n)", nil); out.err == nil || out.err.Msg != msgWriteOnReplica {
		t.Fatalf("write on the old MAIN: %+v", out)
	}
	dial(t, w, dataBolt(2)).must("CREATE (n)") // the MAIN failover promoted is writeable at once
}

// TestReplicaThatCannotConfirmFailsTheWrite follows Memgraph v3.12.0
// src/storage/v2/inmemory/storage.cpp 1221–1266 (SYNC: committed on the MAIN anyway;
// STRICT_SYNC: aborted; ASYNC failures are not reported), storage_error.cpp 35–101 and
// src/query/exceptions.hpp 512–519 (the text), replication_client.cpp 368–444 (a replica not
// READY cannot take the transaction).
func TestReplicaThatCannotConfirmFailsTheWrite(t *testing.T) {
	reg := func(n int, mode string) string {
		if mode == "" {
			return registerQuery(n) // SYNC, the default
		}
		h := fmt.Sprintf("data-%d.mg.svc", n)
		return fmt.Sprintf(`REGISTER INSTANCE instance_%d AS %s WITH CONFIG {"bolt_server": "%s:7687", "management_server": "%s:10000", "replication_server": "%s:20000"}`, n, mode, h, h, h)
	}
	const tail = " Check the status of the replicas using 'SHOW REPLICAS' query."
	cases := []struct {
		name      string
		modes     []string // of instance_1 (the MAIN), instance_2, instance_3; "" is SYNC
		fault     func(t *testing.T, w *World)
		msg       string // "" when the write succeeds
		committed int64  // on the MAIN afterwards
	}{
		{"sync replica down", []string{"", "", ""}, kill("data-2.mg.svc"),
			"Replication Exception: Failed to replicate to SYNC replica 'instance_2': replica is not reachable or not in sync with the main. Replica will be recovered automatically. Transaction is still committed on the main instance and other alive replicas." + tail, 1},
		{"two sync replicas down", []string{"", "", ""}, kill("data-2.mg.svc", "data-3.mg.svc"),
			"Replication Exception: Failed to replicate to SYNC replicas 'instance_2' and 'instance_3': replicas are not reachable or not in sync with the main. Replicas will be recovered automatically. Transaction is still committed on the main instance and other alive replicas." + tail, 1},
		{"sync replica lagged", []string{"", "", "ASYNC"}, func(t *testing.T, w *World) { must(t, w.SetLag("data-2.mg.svc", "memgraph", 1)) },
			"Replication Exception: Failed to replicate to SYNC replica 'instance_2': replica is not reachable or not in sync with the main. Replica will be recovered automatically. Transaction is still committed on the main instance and other alive replicas." + tail, 1},
		{"strict_sync replica down", []string{"STRICT_SYNC", "STRICT_SYNC", "STRICT_SYNC"}, kill("data-3.mg.svc"),
			"Replication Exception: Failed to replicate to STRICT_SYNC replica 'instance_3': replica is not reachable or not in sync with the main. Replica will be recovered automatically. Transaction was aborted on all instances." + tail, 0},
		{"async replica down", []string{"", "", "ASYNC"}, kill("data-3.mg.svc"), "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := startWorld(t, 1, 3)
			c1 := dial(t, w, coordBolt(1))
			c1.must(addQuery(1))
			for n := 1; n <= 3; n++ {
				c1.must(reg(n, tc.modes[n-1]))
			}
			c1.must("SET INSTANCE instance_1 TO MAIN")
			tc.fault(t, w)
			out := dial(t, w, dataBolt(1)).run("CREATE (n)", nil)
			switch {
			case tc.msg == "" && out.err != nil:
				t.Fatalf("write failed: %s", out.err.Msg)
			case tc.msg != "" && (out.err == nil || out.err.Msg != tc.msg || out.err.Code != codeClient || out.phase != "PULL"):
				t.Fatalf("got %+v\nwant %s on PULL", out.err, tc.msg)
			}
			if got := committed(t, w, "instance_1"); got != tc.committed {
				t.Fatalf("the MAIN holds %d, want %d", got, tc.committed)
			}
			if got, want := w.Acknowledged("memgraph"), map[bool]int64{true: 1, false: 0}[tc.msg == ""]; got != want {
				t.Fatalf("acknowledged %d, want %d", got, want)
			}
		})
	}
}

// TestAcknowledgedCountsSuccessfulWritesOnly: Commit's n and successful Bolt writes, per
// database; a Commit with no MAIN to take it is not acknowledged.
func TestAcknowledgedCountsSuccessfulWritesOnly(t *testing.T) {
	w, c1 := setupCluster(t, 1, 2)
	must(t, w.Commit("memgraph", 3))
	must(t, w.Commit("other", 2))
	dial(t, w, dataBolt(1)).must("CREATE (n)")
	c1.must("DEMOTE INSTANCE instance_1")
	if err := w.Commit("memgraph", 7); err == nil {
		t.Fatal("Commit without a MAIN succeeded")
	}
	if got := [2]int64{w.Acknowledged("memgraph"), w.Acknowledged("other")}; got != [2]int64{4, 2} {
		t.Fatalf("acknowledged %v, want [4 2]", got)
	}
}

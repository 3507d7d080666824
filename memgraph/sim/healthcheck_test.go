package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestZeroHealthCheckFrequencyCrashLoopsTheCoordinators follows Memgraph v3.12.0: SET
// COORDINATOR SETTING takes instance_health_check_frequency_sec 0 and commits it
// (coordinator_instance.cpp 1081–1149). The leader that committed it stops health-checking (a
// zero interval waits forever, utils/scheduler.cpp 46–49): its view of each instance stays as it
// was and a MAIN that dies is never failed over. Every coordinator elected afterwards aborts as
// it reconciles the registered instances (MG_ASSERT, replication_instance_client.cpp 65), and
// the value stays in the Raft log, so a restarted coordinator that wins the election aborts
// again. The SET is recorded as a misuse.
func TestZeroHealthCheckFrequencyCrashLoopsTheCoordinators(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	c1.must("SET COORDINATOR SETTING 'instance_health_check_frequency_sec' TO '0'")
	if m := w.Misuses(); len(m) != 1 || m[0].Kind != MisuseZeroHealthCheckFrequency || m[0].Host != "coord-1.mg.svc" {
		t.Fatalf("misuses %+v, want one %s", m, MisuseZeroHealthCheckFrequency)
	}

	must(t, w.Kill("data-1.mg.svc")) // the MAIN
	advance(t, w, time.Minute)
	rows := c1.must("SHOW INSTANCES").rows
	if got := row(t, rows, "instance_1"); got[4] != "up" || got[5] != "main" {
		t.Errorf("the frozen leader shows the dead MAIN as %v, want it up and main as when its checks stopped", got)
	}
	if main := w.Raft().Clusters[0].Main; main != "instance_1" {
		t.Errorf("the leader failed over to %s without health checks", main)
	}

	must(t, w.Kill("coord-1.mg.svc")) // the leader: coordinator 2 is elected, and aborts
	for _, host := range []string{"coord-1.mg.svc", "coord-2.mg.svc"} {
		if w.Running(host) {
			t.Errorf("%s runs", host)
		}
	}
	if !w.Running("coord-3.mg.svc") {
		t.Fatal("coord-3 stopped without being elected: it is alone, with no majority")
	}
	if id, ok := w.Leader(); ok {
		t.Errorf("coordinator_%d leads", id)
	}

	must(t, w.Restart("coord-1.mg.svc")) // the kubelet restarts it: a majority again, it is elected and aborts
	if w.Running("coord-1.mg.svc") {
		t.Error("the restarted coordinator_1 was elected and did not abort")
	}
	must(t, w.Restart("coord-2.mg.svc"))
	if w.Running("coord-2.mg.svc") {
		t.Error("the restarted coordinator_2 was elected and did not abort")
	}
	if got := w.Raft().Clusters[0].Settings["instance_health_check_frequency_sec"]; got != "0" {
		t.Errorf("the Raft log holds %q", got)
	}
}

// TestZeroHealthCheckFrequencyAbortsTheRegisteringLeader: without a registered data instance a
// new leader starts no health check, so it survives its election; the leader that then registers
// one commits the registration and aborts starting its health check (coordinator_instance.cpp
// 790–828). A positive value set back before any of this mends the Raft log.
func TestZeroHealthCheckFrequencyAbortsTheRegisteringLeader(t *testing.T) {
	w2, c := setupCluster(t, 3, 0)
	must(t, w2.StartData(dataSpec(1)))
	c.must("SET COORDINATOR SETTING 'instance_health_check_frequency_sec' TO '0'")
	must(t, w2.Kill("coord-1.mg.svc"))
	if !w2.Running("coord-2.mg.svc") {
		t.Fatal("coordinator_2 aborted on its election although no data instance is registered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var ne *neo4j.Neo4jError
	if err := runCtx(ctx, dial(t, w2, coordBolt(2)), registerQuery(1)); err == nil || errors.As(err, &ne) {
		t.Fatalf("REGISTER INSTANCE on a leader that cannot start a health check answered %v, want the connection to drop", err)
	}
	if w2.Running("coord-2.mg.svc") {
		t.Error("the registering leader did not abort")
	}
	if data := w2.Raft().Clusters[0].Data; len(data) != 1 || data[0].Name != "instance_1" {
		t.Errorf("registrations %+v: the registration is committed before the health check starts", data)
	}

	// Set back at once, the next leader runs.
	w3, c3 := setupCluster(t, 3, 1)
	c3.must("SET COORDINATOR SETTING 'instance_health_check_frequency_sec' TO '0'")
	c3.must("SET COORDINATOR SETTING 'instance_health_check_frequency_sec' TO '1'")
	must(t, w3.Kill("coord-1.mg.svc"))
	if id, ok := w3.Leader(); !ok || id != 2 || !w3.Running("coord-2.mg.svc") {
		t.Errorf("after the value was set back, leader %d %v, coordinator_2 running %v", id, ok, w3.Running("coord-2.mg.svc"))
	}
}

// TestZeroDownTimeoutFailsOverAtOnce: instance_down_timeout_sec 0 is legal in 3.12, and an
// instance is down on the first health check it misses (replication_instance_connector.cpp
// 36–40: alive only while less than 0 s have passed), so a MAIN that stops is failed over at once.
// The SET is recorded as a misuse.
func TestZeroDownTimeoutFailsOverAtOnce(t *testing.T) {
	w, c1 := setupCluster(t, 3, 2)
	c1.must("SET COORDINATOR SETTING 'instance_down_timeout_sec' TO '0'")
	if m := w.Misuses(); len(m) != 1 || m[0].Kind != MisuseZeroDownTimeout {
		t.Fatalf("misuses %+v, want one %s", m, MisuseZeroDownTimeout)
	}
	must(t, w.Kill("data-1.mg.svc"))
	if main := w.Raft().Clusters[0].Main; main != "instance_2" {
		t.Errorf("MAIN %q right after the old one stopped, want instance_2", main)
	}
}

//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCoordinatorSettingsAndAsyncReplicas: a cluster declaring coordinator settings and Async
// replicas converges on the real control plane; the data instances are registered AS ASYNC, the
// leader holds the declared settings, status and kubectl get mgc show them, and a setting a
// human changes by hand is put back.
func TestCoordinatorSettingsAndAsyncReplicas(t *testing.T) {
	s := startScenario(t, "settings")
	const name = "settings"
	net := s.network(name)
	s.create(name, `
replicationMode: Async
coordinatorSettings:
  syncFailoverOnly: false
  instanceDownTimeoutSeconds: 8
  globalReadOnly: false
`)
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 2)
	applied := func(u *unstructured.Unstructured) error {
		if st, reason, msg := conditionStatus(u, "CoordinatorSettings"); st != "True" {
			return fmt.Errorf("CoordinatorSettings=%q %s: %s", st, reason, msg)
		}
		return nil
	}
	mgc := s.waitStatus(name, "the declared settings were not applied", convergeTimeout, applied)
	g := s.raft()
	for _, d := range g.Data {
		if d.Mode != "async" {
			t.Errorf("%s registered %s, want async", d.Name, d.Mode)
		}
	}
	if g.Settings["sync_failover_only"] != "false" || g.Settings["instance_down_timeout_sec"] != "8" || g.Settings["global_read_only"] != "false" {
		t.Errorf("the leader holds %v", g.Settings)
	}
	timeout, _, _ := unstructured.NestedInt64(mgc.Object, "status", "coordinatorSettings", "instanceDownTimeoutSeconds")
	if timeout != 8 {
		t.Errorf("status.coordinatorSettings.instanceDownTimeoutSeconds = %d, want 8", timeout)
	}
	if st, _, msg := conditionStatus(mgc, "AutomaticFailover"); st != "" {
		t.Errorf("AutomaticFailover %s (%s) although sync_failover_only is false", st, msg)
	}

	// A human switches the cluster to read-only: the hook puts it back on a resync.
	s.asOperator(func(ctx context.Context) error {
		leaderID, ok := s.world.Leader()
		if !ok {
			return fmt.Errorf("no leader")
		}
		return s.pool.Client(net.Coordinator(leaderID).BoltServer).SetCoordinatorSetting(ctx, "global_read_only", "true")
	})
	mgc = s.waitStatus(name, "the drifted setting was not put back", convergeTimeout, func(u *unstructured.Unstructured) error {
		if got := s.raft().Settings["global_read_only"]; got != "false" {
			return fmt.Errorf("global_read_only %q", got)
		}
		msg, _, _ := unstructured.NestedString(u.Object, "status", "lastOperation", "message")
		if msg != `coordinator settings put back as declared: global_read_only: "true" → "false"` {
			return fmt.Errorf("lastOperation.message %q", msg)
		}
		return applied(u)
	})
	if out := strings.TrimSpace(s.kubectl("get", "mgc", name, "-o", "custom-columns=RO:.status.coordinatorSettings.globalReadOnly", "--no-headers")); out != "false" {
		t.Errorf("kubectl get mgc shows read-only %q, want false", out)
	}
	s.assertNoMisuse()
}

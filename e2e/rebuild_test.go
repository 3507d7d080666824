//go:build e2e

package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// TestRebuildDivergedReplica: a replica whose data diverged is reported (Degraded,
// ReplicaDiverged); `kubectl memgraph rebuild` has the hook unregister it, replaces its claim and
// pod through the real StatefulSet controller, and returns once the MAIN reports it ready on
// the new volume; Degraded clears. `kubectl memgraph report` then writes its archive. The hook's
// clock runs 10 times as fast, so that its 30 s reads of SHOW REPLICAS come every 3 s.
func TestRebuildDivergedReplica(t *testing.T) {
	const name = "rebuild"
	start := time.Now()
	s := startScenarioOpts(t, "rebuild", scenarioOptions{now: func() time.Time { return start.Add(10 * time.Since(start)) }})
	s.create(name, "{dataInstances: 3}")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 3)
	g := s.raft()
	target, host := "", ""
	for _, d := range g.Data {
		if d.Name != g.Main && d.Host != "" {
			target, host = d.Name, d.Host
			break
		}
	}
	if err := s.world.Diverge(host); err != nil {
		t.Fatal(err)
	}
	s.waitStatus(name, "Degraded ReplicaDiverged", time.Minute, func(mgc *unstructured.Unstructured) error {
		return condReason(mgc, "Degraded", "True", string(v1alpha1.ReasonReplicaDiverged), target)
	})
	pod := fmt.Sprintf("%s-%s", topology.DataSetName(name), strings.TrimPrefix(target, "instance_"))
	claim := topology.DataClaimName(pod)
	before := s.claimUIDs()

	out := s.mustKubectlMemgraph("rebuild", name, target, "--timeout=3m")
	if !strings.Contains(out, "rebuild of "+target+" done") || !strings.Contains(out, "pod/"+pod+" deleted") {
		t.Errorf("rebuild output lacks its steps")
	}
	after := s.claimUIDs()
	if after[claim] == "" || after[claim] == before[claim] {
		t.Errorf("claim %s: %q before, %q after: not replaced", claim, before[claim], after[claim])
	}
	for c, uid := range before {
		if c != claim && after[c] != uid {
			t.Errorf("claim %s was replaced too", c)
		}
	}
	s.waitStatus(name, "Degraded cleared", time.Minute, func(mgc *unstructured.Unstructured) error {
		if a := mgc.GetAnnotations(); a[topology.AnnotationRebuild] != "" || a[topology.AnnotationRebuildRecord] != "" {
			return fmt.Errorf("annotations left: %v", a)
		}
		return condIs(mgc, "Degraded", "False")
	})

	archive := filepath.Join(t.TempDir(), "report.tar.gz")
	s.mustKubectlMemgraph("report", name, "-o", archive)
	if fi, err := os.Stat(archive); err != nil || fi.Size() == 0 {
		t.Errorf("report archive: %v", err)
	}
	s.assertNoMisuse()
}

// condReason is nil when mgc's condition typ has status want, reason and a message naming what.
func condReason(mgc *unstructured.Unstructured, typ, want, reason, what string) error {
	conds, _, _ := unstructured.NestedSlice(mgc.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != typ {
			continue
		}
		msg, _ := m["message"].(string)
		if m["status"] != want || m["reason"] != reason || !strings.Contains(msg, what) {
			return fmt.Errorf("%s=%v %v: %s; want %s %s naming %s", typ, m["status"], m["reason"], msg, want, reason, what)
		}
		return nil
	}
	return fmt.Errorf("no %s condition", typ)
}

package hooks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// writeServicePod is the pod the returned <cluster>-rw Service selects ("" selects none).
func (h *harness) writeServicePod() string {
	svc := h.children["Service/"+topology.WriteServiceName(h.name)]
	if svc == nil {
		h.t.Fatalf("no Service %s among the children", topology.WriteServiceName(h.name))
	}
	selector := svc["spec"].(map[string]any)["selector"].(map[string]any)
	pod, ok := selector[topology.LabelPodName].(string)
	if !ok {
		h.t.Fatalf("Service %s selects no single pod: %v", topology.WriteServiceName(h.name), selector)
	}
	return pod
}

// assertMainFollowed checks that -rw and the MAIN's budget both select instance_<ordinal>'s pod.
func (h *harness) assertMainFollowed(main string) {
	h.t.Helper()
	want := topology.DataSetName(h.name) + "-" + strings.TrimPrefix(main, "instance_")
	if got := h.writeServicePod(); got != want {
		h.t.Errorf("%s selects %q, want the MAIN %s's pod %q (the same pass)", topology.WriteServiceName(h.name), got, main, want)
	}
	if got := h.mainBudgetPod(); got != want {
		h.t.Errorf("the MAIN's budget selects %q, want %q", got, want)
	}
}

// <cluster>-rw selects no pod until a MAIN exists, then the MAIN's, and moves in the very pass
// that hands MAIN over (a switchover to spec.preferredMain) or observes Memgraph's failover.
func TestWriteServiceFollowsTheMain(t *testing.T) {
	h := newHarness(t, 3, 3)
	h.sync() // no children yet: the StatefulSets are created, pods come up
	if got := h.writeServicePod(); got != "" {
		t.Errorf("before any MAIN, %s selects %q, want no pod", topology.WriteServiceName(h.name), got)
	}
	h.sync()
	h.assertMainFollowed("instance_0") // in the very pass that elects it
	h.settleBudgets()
	h.assertConverged()
	h.assertMains("instance_0")
	h.assertMainFollowed("instance_0")

	h.spec["preferredMain"] = "instance_2"
	h.sync()
	h.assertMains("instance_2")
	h.assertMainFollowed("instance_2")

	h.kill(h.network().DataInstance(2).Host)
	h.advance(10 * time.Second) // the leader sees instance_2 down and fails over
	h.sync()
	mains := h.mains()
	if len(mains) != 1 || mains[0] == "instance_2" {
		t.Fatalf("MAINs after the failover %v, want one other than instance_2", mains)
	}
	h.assertMainFollowed(mains[0])
	h.assertNoMisuse()
}

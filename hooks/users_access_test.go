package hooks_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A MemgraphUser reaches its cluster's MAIN with the cluster's <cluster>-user-access Secret, the
// copy of spec.tls's CA and spec.auth's user the cluster's hook writes, and with no other Secret
// of the namespace. While the copy is missing, or follows an older generation of the cluster than
// the one the user's request carries, the user waits (AccessSecretPending, naming the Secret and
// the generations) and nothing at all is sent to Memgraph; the cluster's next sync writes it and
// the user is put in force.
func TestAUserWaitsForItsClustersCopyOfTheAccess(t *testing.T) {
	r := newUserRig(t, true)
	r.passwords["default/pw"] = passwordSecret("pw", "app-pw", "1")
	r.declare("app", map[string]any{"passwordSecret": map[string]any{"name": "pw"}, "roles": []any{reportingRole}})

	related := r.request("app", false)["related"].(map[string]any)["Secret.v1"].(map[string]any)
	if got, want := slices.Sorted(maps.Keys(related)), []string{"default/memgraph-user-access", "default/pw"}; !cmp.Equal(got, want) {
		t.Errorf("the user's request carries the Secrets %v, want %v alone", got, want)
	}

	access := "Secret/" + topology.UserAccessSecretName("memgraph")
	copied := r.h.children[access]
	delete(r.h.children, access)
	r.h.world.ResetLog()
	msg := r.assertPhase(r.sync("app"), v1alpha1.UserPending, planner.ReasonAccessSecretPending)
	if !strings.Contains(msg, "Secret default/memgraph-user-access does not exist yet") {
		t.Errorf("message %q does not name the missing copy", msg)
	}
	if q := r.h.world.Queries(); len(q) != 0 {
		t.Errorf("without the copy the pass sent %d queries, first %q", len(q), q[0].Text)
	}
	r.h.children[access] = copied
	r.assertPhase(r.sync("app"), v1alpha1.UserReady, planner.ReasonUserInForce)

	r.h.generations = true
	r.h.parent() // generation 1, which the copy follows
	r.h.spec["roles"] = append(r.h.spec["roles"].([]any), map[string]any{"name": "auditors", "privileges": []any{"STATS"}})
	r.h.world.ResetLog()
	msg = r.assertPhase(r.sync("app"), v1alpha1.UserPending, planner.ReasonAccessSecretPending)
	if !strings.Contains(msg, "follows generation 1 of MemgraphCluster memgraph, which is at generation 2") {
		t.Errorf("message %q does not say which generations", msg)
	}
	if q := r.h.world.Queries(); len(q) != 0 {
		t.Errorf("with a stale copy the pass sent %d queries, first %q", len(q), q[0].Text)
	}
	r.h.sync()
	r.assertPhase(r.sync("app"), v1alpha1.UserReady, planner.ReasonUserInForce)
}

package hooks_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
)

// decoratedNode is a DecoratorController's v2 sync request for one Node.
func decoratedNode(t *testing.T, spec map[string]any, labels map[string]any) string {
	t.Helper()
	return mustJSON(t, map[string]any{
		"controller": map[string]any{"kind": "DecoratorController"},
		"object": map[string]any{"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": "worker-1", "labels": labels}, "spec": spec},
		"attachments": map[string]any{}, "related": map[string]any{}, "finalizing": false,
	})
}

// The Node decorator labels a cordoned Node — by spec.unschedulable or by the taint kubectl
// drain and cluster autoscalers set — and takes the label off any other, so that the clusters'
// customize rule selects exactly the cordoned Nodes.
func TestTheNodeDecoratorLabelsTheCordonedNodes(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	labelled := map[string]any{"memgraph.com/cordoned": "true", "kubernetes.io/hostname": "worker-1"}
	for _, tc := range []struct {
		name   string
		spec   map[string]any
		labels map[string]any
		want   string
	}{
		{"cordoned", map[string]any{"unschedulable": true}, nil,
			`{"labels":{"memgraph.com/cordoned":"true"},"attachments":[]}`},
		{"tainted unschedulable", map[string]any{"taints": []any{map[string]any{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}}}, nil,
			`{"labels":{"memgraph.com/cordoned":"true"},"attachments":[]}`},
		{"schedulable", map[string]any{}, nil,
			`{"labels":{"memgraph.com/cordoned":null},"attachments":[]}`},
		{"uncordoned, still labelled", map[string]any{"unschedulable": false}, labelled,
			`{"labels":{"memgraph.com/cordoned":null},"attachments":[]}`},
		{"another taint", map[string]any{"taints": []any{map[string]any{"key": "dedicated", "value": "memgraph", "effect": "NoSchedule"}}}, nil,
			`{"labels":{"memgraph.com/cordoned":null},"attachments":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := serve(t, handler, http.MethodPost, "/nodes/sync", decoratedNode(t, tc.spec, tc.labels))
			if code != http.StatusOK {
				t.Fatalf("%d %s", code, body)
			}
			var got, want any
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

// A request that is not a decorator's sync of an object is refused with a 400 naming the
// problem; Metacontroller then changes nothing on the Node.
func TestTheNodeDecoratorRefusesBadRequests(t *testing.T) {
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	for _, tc := range []struct{ name, body, want string }{
		{"empty", "", "empty request body"},
		{"no object", `{"attachments":{}}`, "no object"},
		{"object not an object", `{"object":"worker-1"}`, "object"},
		{"unschedulable not a bool", `{"object":{"metadata":{"name":"n"},"spec":{"unschedulable":"yes"}}}`, "unschedulable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := serve(t, handler, http.MethodPost, "/nodes/sync", tc.body)
			if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
				t.Errorf("got %d %s; want 400 naming %q", code, body, tc.want)
			}
		})
	}
}

package wire

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// The sync answer is one JSON document: the children's array as rendered with the appended children
// last, resyncAfterSeconds and plan only when set, messages unescaped for people.
func TestSyncResponseAppendTo(t *testing.T) {
	status := v1alpha1.MemgraphClusterStatus{Phase: "Running", Main: "instance_<0>"}
	cases := []struct {
		name string
		resp SyncResponse
		want string
	}{
		{"children alone", SyncResponse{Status: status, Children: []byte(`[{"a":1}]`)},
			`{"status":{"main":"instance_<0>","phase":"Running"},"children":[{"a":1}]}`},
		{"no children, one appended", SyncResponse{Status: status, Children: []byte("[]\n"), Appended: [][]byte{[]byte(`{"s":2}`)}},
			`{"status":{"main":"instance_<0>","phase":"Running"},"children":[{"s":2}]}`},
		{"children and one appended", SyncResponse{Status: status, Children: []byte(`[{"a":1},{"b":1}]` + "\n"), Appended: [][]byte{[]byte(`{"s":2}`)}},
			`{"status":{"main":"instance_<0>","phase":"Running"},"children":[{"a":1},{"b":1},{"s":2}]}`},
		{"no children, two appended", SyncResponse{Status: status, Children: []byte("[]"), Appended: [][]byte{[]byte(`{"s":2}`), []byte(`{"u":3}`)}},
			`{"status":{"main":"instance_<0>","phase":"Running"},"children":[{"s":2},{"u":3}]}`},
		{"children and two appended", SyncResponse{Status: status, Children: []byte(`[{"a":1}]`), Appended: [][]byte{[]byte(`{"s":2}`), []byte(`{"u":3}`)}},
			`{"status":{"main":"instance_<0>","phase":"Running"},"children":[{"a":1},{"s":2},{"u":3}]}`},
		{"resync and plan", SyncResponse{Status: status, Children: []byte(`[]`), ResyncAfterSeconds: 2.5, Plan: []string{"SET INSTANCE instance_1 TO MAIN"}},
			`{"status":{"main":"instance_<0>","phase":"Running"},"children":[],"resyncAfterSeconds":2.5,"plan":["SET INSTANCE instance_1 TO MAIN"]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.resp.AppendTo([]byte("prefix:"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("prefix:"+tc.want+"\n", string(got)); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if !json.Valid(got[len("prefix:"):]) {
				t.Errorf("%s is not JSON", got)
			}
		})
	}
}

// Children that are not a JSON array cannot take the appended children: an error, not a corrupt answer.
func TestSyncResponseRefusesChildrenThatAreNotAnArray(t *testing.T) {
	for _, children := range []string{"", "{}", "[", "null"} {
		r := SyncResponse{Children: []byte(children), Appended: [][]byte{[]byte(`{}`)}}
		if out, err := r.AppendTo(nil); err == nil {
			t.Errorf("children %q: answered %s, want an error", children, out)
		}
	}
}

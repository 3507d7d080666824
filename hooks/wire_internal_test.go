package hooks

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Metacontroller sends the parent before the children. A decode that has seen a parent that
// cannot be paused keeps nothing of the children but the fields it reads; one whose parent may be
// paused (the annotation's key spelled as it is or escaped), or whose children come first, keeps
// each child's bytes too. Either way the children are the same, and a paused pass decodes its
// body once and answers the same children whichever comes first.
func TestTheDecodeKeepsTheChildrensBytesOnlyForAParentThatMayBePaused(t *testing.T) {
	base, paused := baseRequest(t), pausedRequest(t, baseRequest(t))
	parentFirst, childrenFirst := []string{"parent", "children", "related"}, []string{"children", "parent", "related"}
	pausedKey := `"` + topology.AnnotationPaused + `"`
	for _, tc := range []struct {
		name string
		body []byte
		kept bool
	}{
		{"parent first, not paused", inOrder(t, base, parentFirst), false},
		{"parent first, paused", inOrder(t, paused, parentFirst), true},
		{"parent first, paused, the key's slash escaped",
			bytes.Replace(inOrder(t, paused, parentFirst), []byte(pausedKey), []byte(`"memgraph.com\/paused"`), 1), true},
		{"parent first, paused, a letter of the key escaped",
			bytes.Replace(inOrder(t, paused, parentFirst), []byte(pausedKey), []byte(`"memgraph.com/\u0070aused"`), 1), true},
		{"children first, not paused", inOrder(t, base, childrenFirst), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req syncRequest
			if err := req.decode(tc.body); err != nil {
				t.Fatal(err)
			}
			if kept := req.childBytes.bytes != nil; kept != tc.kept {
				t.Errorf("children's bytes kept: %v, want %v", kept, tc.kept)
			}
			var plain struct {
				Parent   json.RawMessage `json:"parent"`
				Children wire.Groups     `json:"children"`
			}
			if err := wire.DecodeBody(tc.body, &plain); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(plain.Children, req.Children); diff != "" || len(req.Children) == 0 {
				t.Errorf("children (-as decoded alone +as decoded):\n%s", diff)
			}
			if !bytes.Equal(plain.Parent, req.Parent) {
				t.Errorf("parent %s, want %s", req.Parent, plain.Parent)
			}
		})
	}
	var frozen [2][]map[string]any
	for i, order := range [][]string{parentFirst, childrenFirst} {
		before := wire.BodyDecodes()
		_, obs, err := decodeRequest(inOrder(t, paused, order), decodeParents)
		if err != nil {
			t.Fatal(err)
		}
		if decodes := wire.BodyDecodes() - before; decodes != 1 {
			t.Errorf("a paused pass decoded its body %d times, want once", decodes)
		}
		frozen[i] = obs.frozen
	}
	if diff := cmp.Diff(frozen[1], frozen[0]); diff != "" || len(frozen[0]) == 0 {
		t.Errorf("a paused pass's children, parent first (-children first +parent first):\n%s", diff)
	}
}

// inOrder encodes the request req with its fields in order.
func inOrder(t *testing.T, req map[string]any, order []string) []byte {
	t.Helper()
	out := []byte{'{'}
	for i, k := range order {
		raw, err := json.Marshal(req[k])
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(append(out, '"'), k...), `":`...)
		out = append(out, raw...)
	}
	return append(out, '}')
}

// A request with two parents, the children after one that is not paused and the last paused, is
// refused naming the problem: the children's bytes were not kept.
func TestTwoParentsAroundTheChildrenAreRefused(t *testing.T) {
	base, paused := baseRequest(t), pausedRequest(t, baseRequest(t))
	body := inOrder(t, base, []string{"parent", "children", "related"})
	second, err := json.Marshal(paused["parent"])
	if err != nil {
		t.Fatal(err)
	}
	body = append(append(append(body[:len(body)-1], `,"parent":`...), second...), '}')
	_, _, err = decodeRequest(body, decodeParents)
	checkDecodeError(t, body, err)
	if err == nil {
		t.Fatal("accepted")
	}
	t.Log(err)
}

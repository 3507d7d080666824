package hooks

import (
	"bytes"
	"encoding/json"

	kjson "sigs.k8s.io/json"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Wire types of Metacontroller's CompositeController hooks (Metacontroller v4.17,
// docs/src/api/compositecontroller.md). Identity is always read from each object's metadata,
// never from map keys, so hook versions v1 ("name") and v2 ("namespace/name") are both accepted.

// syncRequest is the part of the body Metacontroller POSTs to the sync hook that the hook reads,
// decoded once (decode): every child and related object straight into the fields the hook reads
// of it (object). The request also carries "controller" and "finalizing" (always false: no
// finalize hook is configured); like any other field the hook has no use for, they are not
// decoded.
//
// A paused cluster answers with its children as they are (observedChildren), which takes each
// child's bytes as sent: the decode keeps them (childBytes) unless a parent that cannot be paused
// came first. Metacontroller sends "parent" before "children" (v4.17.2
// pkg/controller/composite/api/v1/hooks.go 31–37, and api/v2 the same), so the sync of a cluster
// that is not paused keeps nothing but the fields it reads; children sent first are kept, which
// is correct either way.
type syncRequest struct {
	Parent   json.RawMessage `json:"-"` // as sent
	Children wire.Groups     `json:"-"`
	Related  wire.Groups     `json:"related"`
	// ParentInto and ChildrenInto are where the decode puts "parent" and "children" (decode):
	// Parent, and Children, with each child's bytes kept in childBytes until the parent says it
	// cannot be paused.
	ParentInto   parentInto `json:"parent"`
	ChildrenInto any        `json:"children"`
	childBytes   keptChildren
}

// decode decodes body into req, once.
func (req *syncRequest) decode(body []byte) error {
	req.ParentInto.req = req
	req.childBytes.into = &req.Children
	req.ChildrenInto = &req.childBytes
	return wire.DecodeBody(body, req)
}

// parentInto decodes a request's parent into its syncRequest's Parent and, when the parent
// cannot be paused, has the children that follow decoded without their bytes.
type parentInto struct{ req *syncRequest }

func (p *parentInto) UnmarshalJSON(raw []byte) error {
	p.req.Parent = append(p.req.Parent[:0], raw...)
	if !mayBePaused(raw) {
		p.req.ChildrenInto = &p.req.Children
	}
	return nil
}

// pausedKey is the annotation topology.AnnotationPaused as a JSON object key.
var pausedKey = []byte(`"` + topology.AnnotationPaused + `"`)

// mayBePaused says whether a parent as sent may carry the annotation memgraph.com/paused, with
// any value: the key is there as it is spelled, or with an escaped character, which JSON writes
// with \/ or \u.
func mayBePaused(raw []byte) bool {
	return bytes.Contains(raw, pausedKey) || bytes.Contains(raw, []byte(`\u`)) || bytes.Contains(raw, []byte(`\/`))
}

// keptChildren decodes a request's children into Groups (into) and keeps each child's bytes as
// sent, by type and key.
type keptChildren struct {
	into  *wire.Groups
	bytes map[string]map[string]json.RawMessage
}

func (k *keptChildren) UnmarshalJSON(raw []byte) error {
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &k.bytes); err != nil {
		return kjson.UnmarshalCaseSensitivePreserveInts(raw, k.into) // the error a decode without the bytes gives
	}
	groups := make(wire.Groups, len(k.bytes))
	for typeKey, objects := range k.bytes {
		if objects == nil {
			groups[typeKey] = nil
			continue
		}
		group := make(map[string]*wire.Object, len(objects))
		for key, object := range objects {
			var obj *wire.Object
			if err := kjson.UnmarshalCaseSensitivePreserveInts(object, &obj); err != nil {
				return err
			}
			group[key] = obj
		}
		groups[typeKey] = group
	}
	*k.into = groups
	return nil
}

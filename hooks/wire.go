package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Wire types of Metacontroller's CompositeController hooks (Metacontroller v4.17,
// docs/src/api/compositecontroller.md). Identity is always read from each object's metadata,
// never from map keys, so hook versions v1 ("name") and v2 ("namespace/name") are both accepted.

// syncRequest is the part of the body Metacontroller POSTs to the sync hook that the hook reads,
// decoded once (decodeRequest): every child and related object straight into the fields the hook
// reads of it (object). The request also carries "controller" and "finalizing" (always false: no
// finalize hook is configured); like any other field the hook has no use for, they are not
// decoded.
type syncRequest struct {
	Parent   json.RawMessage `json:"parent"`
	Children wire.Groups     `json:"children"`
	Related  wire.Groups     `json:"related"`
}

// syncResponse is the sync hook's answer. Children is a JSON array, never null and never
// holding a null; Appended, when not nil, is one more child (a JSON object) the answer's array
// ends with.
type syncResponse struct {
	Status             topology.MemgraphClusterStatus
	Children           []byte
	Appended           []byte
	ResyncAfterSeconds float64
	// Plan is only present on a dry run (POST /sync?dryRun=true): the queries the pass would run.
	Plan []string
}

// appendArray appends the JSON array list to out, with the JSON object last (nil: none) as its
// last element, copying both as they are.
func appendArray(out, list, last []byte) ([]byte, error) {
	if last == nil {
		return append(out, list...), nil
	}
	list = bytes.TrimRight(list, " \n")
	if len(list) < 2 || list[0] != '[' || list[len(list)-1] != ']' {
		return nil, fmt.Errorf("rendered children are not a JSON array")
	}
	out = append(out, list[:len(list)-1]...)
	if len(list) > 2 {
		out = append(out, ',')
	}
	return append(append(out, last...), ']'), nil
}

// appendTo appends the response as JSON — {"status", "children", "resyncAfterSeconds" unless 0,
// "plan" unless empty} and a newline — copying the encoded children as they are: encoding/json
// would scan and copy them again.
func (r *syncResponse) appendTo(out []byte) ([]byte, error) {
	status, err := wire.MarshalUnescaped(r.Status)
	if err != nil {
		return nil, err
	}
	out = append(append(out, `{"status":`...), status...)
	if out, err = appendArray(append(out, `,"children":`...), r.Children, r.Appended); err != nil {
		return nil, err
	}
	if r.ResyncAfterSeconds != 0 {
		resync, err := json.Marshal(r.ResyncAfterSeconds)
		if err != nil {
			return nil, err
		}
		out = append(append(out, `,"resyncAfterSeconds":`...), resync...)
	}
	if len(r.Plan) > 0 {
		plan, err := wire.MarshalUnescaped(r.Plan)
		if err != nil {
			return nil, err
		}
		out = append(append(out, `,"plan":`...), plan...)
	}
	return append(out, "}\n"...), nil
}

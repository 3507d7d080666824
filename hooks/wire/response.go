package wire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// SyncResponse is the sync hook's answer. Children is a JSON array, never null and never
// holding a null; Appended are more children (JSON objects) the answer's array ends with, in
// order.
type SyncResponse struct {
	Status             v1alpha1.MemgraphClusterStatus
	Children           []byte
	Appended           [][]byte
	ResyncAfterSeconds float64
	// Plan is only present on a dry run (POST /sync?dryRun=true): the queries the pass would run.
	Plan []string
}

// appendArray appends the JSON array list to out, with the JSON objects last as its last
// elements, copying all as they are.
func appendArray(out, list []byte, last [][]byte) ([]byte, error) {
	if len(last) == 0 {
		return append(out, list...), nil
	}
	list = bytes.TrimRight(list, " \n")
	if len(list) < 2 || list[0] != '[' || list[len(list)-1] != ']' {
		return nil, fmt.Errorf("rendered children are not a JSON array")
	}
	out = append(out, list[:len(list)-1]...)
	for i, obj := range last {
		if i > 0 || len(list) > 2 {
			out = append(out, ',')
		}
		out = append(out, obj...)
	}
	return append(out, ']'), nil
}

// AppendTo appends the response as JSON — {"status", "children", "resyncAfterSeconds" unless 0,
// "plan" unless empty} and a newline — copying the encoded children as they are: encoding/json
// would scan and copy them again.
func (r *SyncResponse) AppendTo(out []byte) ([]byte, error) {
	status, err := MarshalUnescaped(r.Status)
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
		plan, err := MarshalUnescaped(r.Plan)
		if err != nil {
			return nil, err
		}
		out = append(append(out, `,"plan":`...), plan...)
	}
	return append(out, "}\n"...), nil
}

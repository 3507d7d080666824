package hooks

import (
	"encoding/json"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
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

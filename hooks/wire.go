package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"

	kjson "sigs.k8s.io/json"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Wire types of Metacontroller's CompositeController hooks (Metacontroller v4.17,
// docs/src/api/compositecontroller.md). Identity is always read from each object's metadata,
// never from map keys, so hook versions v1 ("name") and v2 ("namespace/name") are both accepted.

// object is one Kubernetes object as JSON.
type object = map[string]any

// syncRequest is the part of the body Metacontroller POSTs to the sync hook that the hook reads.
// The request also carries "controller" (the CompositeController) and "finalizing" (always false:
// no finalize hook is configured); like any other field the hook has no use for, they are not
// decoded.
type syncRequest struct {
	Parent   json.RawMessage              `json:"parent"`
	Children map[string]map[string]object `json:"children"`
	Related  map[string]map[string]object `json:"related"`
}

// syncResponse is the sync hook's answer. Children is never nil and never holds a null.
type syncResponse struct {
	Status             map[string]any `json:"status"`
	Children           []object       `json:"children"`
	ResyncAfterSeconds float64        `json:"resyncAfterSeconds,omitempty"`
	// Plan is only present on a dry run (POST /sync?dryRun=true): the queries the pass would run.
	Plan []string `json:"plan,omitempty"`
}

// customizeRequest is the part of the customize hook's body the hook reads.
type customizeRequest struct {
	Parent json.RawMessage `json:"parent"`
}

type customizeResponse struct {
	RelatedResources []relatedRule `json:"relatedResources"`
}

// relatedRule selects related objects either by labelSelector or by names (Metacontroller
// refuses both at once).
type relatedRule struct {
	APIVersion    string         `json:"apiVersion"`
	Resource      string         `json:"resource"`
	Namespace     string         `json:"namespace,omitempty"`
	LabelSelector *labelSelector `json:"labelSelector,omitempty"`
	Names         []string       `json:"names,omitempty"`
}

type labelSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

// badRequest is a client error: the request is answered 400 and nothing changes.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badRequestf(format string, args ...any) error {
	return &badRequest{msg: fmt.Sprintf(format, args...)}
}

// decodeJSON decodes one JSON document from r into v, naming the problem on failure. Field
// names are matched case-sensitively, as the API server matches them: {"Parent": …} is an unknown
// field, not the parent, and a later "PARENT" cannot replace "parent". Numbers inside objects
// decode as int64 when they are integers and float64 otherwise, so a count is never rounded.
func decodeJSON(r io.Reader, v any) error {
	body, err := io.ReadAll(r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return badRequestf("request body larger than %d bytes", tooLarge.Limit)
		}
		return badRequestf("reading request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequestf("empty request body: expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var doc json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		return badRequestf("request body is not a valid hook request: %s", describeJSONError(err))
	}
	if dec.More() {
		return badRequestf("request body holds more than one JSON document")
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(doc, v); err != nil {
		return badRequestf("request body is not a valid hook request: %s", describeJSONError(err))
	}
	return nil
}

func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			field = "(top level)"
		}
		return fmt.Sprintf("field %s: expected %s, got JSON %s", topology.Clip(field), typeErr.Type, topology.Clip(typeErr.Value))
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Sprintf("malformed JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	}
	return topology.Clip(err.Error())
}

// entry is one object of a request and the key it was sent under.
type entry struct {
	key string
	obj object
}

// objectsOf returns the objects of one child/related type in a stable order (by their keys,
// namespace/name), each checked to carry metadata.name.
func objectsOf(group map[string]map[string]object, typeKey, what string) ([]entry, error) {
	entries := group[typeKey]
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]entry, 0, len(keys))
	for _, k := range keys {
		obj := entries[k]
		if obj == nil {
			return nil, badRequestf("%s is null: expected an object", entryPath(what, typeKey, k))
		}
		if _, ok := obj["metadata"].(map[string]any); !ok || metaString(obj, "name") == "" {
			return nil, badRequestf("%s has no metadata.name", entryPath(what, typeKey, k))
		}
		out = append(out, entry{key: k, obj: obj})
	}
	return out, nil
}

// entryPath names one object of a request, e.g. children["StatefulSet.apps/v1"]["ns/name"], with
// both keys bounded.
func entryPath(what, typeKey, key string) string {
	return fmt.Sprintf("%s[%q][%q]", what, topology.Clip(typeKey), topology.Clip(key))
}

func metaString(obj object, key string) string {
	meta, _ := obj["metadata"].(map[string]any)
	s, _ := meta[key].(string)
	return s
}

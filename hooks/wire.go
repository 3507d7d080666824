package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"

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
	// scanned is the body when the scan (decodeTyped) decoded it, keeping only the fields the
	// readers read; nil when it was decoded whole.
	scanned []byte
	// pods are the Pods among the related objects, by key (podEntries): the scan's, or read
	// from Related once podsRead.
	pods     []podEntry
	podsRead bool
}

// whole is the request with every field of every child and related object: itself unless it
// was scanned.
func (req *syncRequest) whole() (*syncRequest, error) {
	if req.scanned == nil {
		return req, nil
	}
	var whole syncRequest
	if err := decodeBody(req.scanned, &whole); err != nil {
		return nil, err
	}
	return &whole, nil
}

// syncResponse is the sync hook's answer. Children is a JSON array, never null and never
// holding a null.
type syncResponse struct {
	Status             topology.MemgraphClusterStatus
	Children           []byte
	ResyncAfterSeconds float64
	// Plan is only present on a dry run (POST /sync?dryRun=true): the queries the pass would run.
	Plan []string
}

// appendTo appends the response as JSON — {"status", "children", "resyncAfterSeconds" unless 0,
// "plan" unless empty} and a newline — copying the encoded children as they are: encoding/json
// would scan and copy them again.
func (r *syncResponse) appendTo(out []byte) ([]byte, error) {
	status, err := json.Marshal(r.Status)
	if err != nil {
		return nil, err
	}
	out = append(append(out, `{"status":`...), status...)
	out = append(append(out, `,"children":`...), r.Children...)
	if r.ResyncAfterSeconds != 0 {
		resync, err := json.Marshal(r.ResyncAfterSeconds)
		if err != nil {
			return nil, err
		}
		out = append(append(out, `,"resyncAfterSeconds":`...), resync...)
	}
	if len(r.Plan) > 0 {
		plan, err := json.Marshal(r.Plan)
		if err != nil {
			return nil, err
		}
		out = append(append(out, `,"plan":`...), plan...)
	}
	return append(out, "}\n"...), nil
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
	body, err := readBody(r, 0)
	if err != nil {
		return err
	}
	return decodeBody(body, v)
}

// maxBodyPresize bounds the buffer a request's Content-Length may reserve before its body
// arrives.
const maxBodyPresize = 1 << 20

// readBody reads a request body that is not empty, into a buffer of the size the request
// announced (size; 0 when unknown), so that reading it costs one allocation, not a series.
func readBody(r io.Reader, size int64) ([]byte, error) {
	return readBodyInto(new(bytes.Buffer), r, size)
}

// readBodyInto is readBody into buf, whose bytes the body then is.
func readBodyInto(buf *bytes.Buffer, r io.Reader, size int64) ([]byte, error) {
	buf.Grow(int(min(max(size, 0), maxBodyPresize)) + bytes.MinRead)
	_, err := buf.ReadFrom(r)
	body := buf.Bytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, badRequestf("request body larger than %d bytes", tooLarge.Limit)
		}
		return nil, badRequestf("reading request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequestf("empty request body: expected a JSON object")
	}
	return body, nil
}

// decodeBody is decodeJSON of a body already read.
func decodeBody(body []byte, v any) error {
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

// named is the error of a reader that failed on the entry when it was read without its path
// (""): the reader runs again naming the entry. Readers are pure and only spell a path out in
// their errors, so a sync does not build the path of every field it reads.
func (e entry) named(what, typeKey string, unnamed error, read func(path string) error) error {
	if err := read(entryPath(what, typeKey, e.key)); err != nil {
		return err
	}
	return unnamed
}

// indexPath is path+field+"[i]", "" when path is (a read that names nothing, entry.named).
func indexPath(path, field string, i int) string {
	if path == "" {
		return ""
	}
	return path + field + "[" + strconv.Itoa(i) + "]"
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

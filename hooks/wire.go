package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	kjson "sigs.k8s.io/json"

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
	Children objectGroups    `json:"children"`
	Related  objectGroups    `json:"related"`
}

// objectGroups are the objects of a request by type ("StatefulSet.apps/v1") and key; a null
// object is nil.
type objectGroups map[string]map[string]*object

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
	status, err := marshalUnescaped(r.Status)
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
		plan, err := marshalUnescaped(r.Plan)
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

// badRequest is a client error: the request is answered 400 and nothing changes. cluster names
// the parent the request was about (namespace/name, bounded) when its metadata could be read,
// so that the rejection's log line names it.
type badRequest struct{ msg, cluster string }

// aboutParent names, in a bad request's error, the parent body is about: parent.metadata's
// namespace and name, read leniently (the request may be malformed anywhere else). Other errors
// are returned as they are.
func aboutParent(err error, body []byte) error {
	var bad *badRequest
	if !errors.As(err, &bad) || bad.cluster != "" {
		return err
	}
	var envelope struct {
		Parent struct {
			Metadata struct {
				Namespace any `json:"namespace"`
				Name      any `json:"name"`
			} `json:"metadata"`
		} `json:"parent"`
	}
	if json.Unmarshal(body, &envelope) != nil {
		return err
	}
	namespace, _ := envelope.Parent.Metadata.Namespace.(string)
	name, _ := envelope.Parent.Metadata.Name.(string)
	if name == "" {
		return err
	}
	return &badRequest{msg: bad.msg, cluster: objectKey(namespace, name)}
}

func (e *badRequest) Error() string { return e.msg }

func badRequestf(format string, args ...any) error {
	return &badRequest{msg: fmt.Sprintf(format, args...)}
}

// maxBodyPresize bounds the buffer a request's Content-Length may reserve before its body
// arrives.
const maxBodyPresize = 1 << 20

// readBody reads a request body that is not empty into buf, presized to what the request
// announced (size; 0 when unknown), so that reading it costs one allocation, not a series.
func readBody(buf *bytes.Buffer, r io.Reader, size int64) ([]byte, error) {
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

// decodeBody decodes one JSON document into v with sigs.k8s.io/json, as the API server decodes:
// field names are matched case-sensitively ({"Parent": …} is an unknown field, not the parent,
// and a later "PARENT" cannot replace "parent"), and integers are never rounded.
func decodeBody(body []byte, v any) error {
	err := kjson.UnmarshalCaseSensitivePreserveInts(body, v)
	if err == nil {
		return nil
	}
	if syntax, offset := kjson.SyntaxErrorOffset(err); syntax {
		if strings.Contains(err.Error(), "after top-level value") {
			return badRequestf("request body holds more than one JSON document")
		}
		return badRequestf("request body is not a valid hook request: malformed JSON at byte %d: %s", offset, topology.Clip(err.Error()))
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		what := "the request body"
		if typeErr.Field != "" {
			what = topology.Clip(strings.ReplaceAll(typeErr.Field, ".[", "["))
		}
		return badRequestf("request body is not a valid hook request: %s must be %s, got %s",
			what, expected(typeErr.Type), got(typeErr.Value))
	}
	return badRequestf("request body is not a valid hook request: %s", topology.Clip(err.Error()))
}

// entry is one object of a request and the key it was sent under.
type entry struct {
	key string
	obj *object
}

// entries are the objects of one child or related type in a stable order (by their keys,
// namespace/name), each checked to be an object with metadata.name.
func entries(groups objectGroups, what, typeKey string) ([]entry, error) {
	keys := sortedKeys(groups[typeKey])
	out := make([]entry, len(keys))
	for i, k := range keys {
		obj := groups[typeKey][k]
		switch {
		case obj == nil:
			return nil, badRequestf("%s is null: expected an object", entryPath(what, typeKey, k))
		case obj.Metadata.Name == "":
			return nil, badRequestf("%s has no metadata.name", entryPath(what, typeKey, k))
		}
		out[i] = entry{key: k, obj: obj}
	}
	return out, nil
}

// rawGroups are the children and related objects of a request as sent.
type rawGroups struct {
	Children map[string]map[string]json.RawMessage `json:"children"`
	Related  map[string]map[string]json.RawMessage `json:"related"`
}

// locate names the JSON path of a value of the wrong type among the children and related
// objects, which the decode of the whole request spells without the map keys
// ("children.spec.replicas"): each object is decoded again on its own, under its path. It is nil
// when no object holds one.
func locate(body []byte) error {
	var raw rawGroups
	if kjson.UnmarshalCaseSensitivePreserveInts(body, &raw) != nil {
		return nil
	}
	for _, g := range []struct {
		what   string
		groups map[string]map[string]json.RawMessage
	}{{"children", raw.Children}, {"related", raw.Related}} {
		for _, typeKey := range sortedKeys(g.groups) {
			for _, key := range sortedKeys(g.groups[typeKey]) {
				if err := decodeTyped(g.groups[typeKey][key], entryPath(g.what, typeKey, key), new(*objectOf[list[container], list[podCondition], list[taint], list[containerStatus]])); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// decodeTyped decodes raw, the object at path, into v, naming the path of a value of the wrong
// type in the error.
func decodeTyped(raw []byte, path string, v any) error {
	err := kjson.UnmarshalCaseSensitivePreserveInts(raw, v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		return badRequestf("%s must be %s, got %s", joinPath(path, typeErr.Field), expected(typeErr.Type), got(typeErr.Value))
	}
	return badRequestf("%s: %s", path, topology.Clip(err.Error()))
}

// joinPath appends a decoder's field path ("status.conditions.[0].type", list indices spelled
// by list.UnmarshalJSON) to path.
func joinPath(path, field string) string {
	field = strings.ReplaceAll(field, ".[", "[")
	switch {
	case field == "":
		return path
	case field[0] == '[':
		return path + field
	}
	return path + "." + field
}

// expected names what a Go type of the typed objects accepts.
func expected(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int32:
		return fmt.Sprintf("an integer between 0 and %d", int32(1<<31-1))
	case reflect.Int64:
		return fmt.Sprintf("an integer between 0 and %d", int64(1<<63-1))
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a JSON value" // json.RawMessage
		}
		return "a list"
	case reflect.Pointer:
		return expected(t.Elem())
	case reflect.Map:
		return "an object whose every value is " + expected(t.Elem())
	}
	return "an object"
}

// got names the JSON value a decoder refused: a number by its value (bounded), anything else
// by its kind.
func got(value string) string {
	if number, ok := strings.CutPrefix(value, "number "); ok {
		if _, err := strconv.ParseInt(number, 10, 64); err == nil {
			return topology.Clip(number)
		}
		if f, err := strconv.ParseFloat(number, 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return topology.Clip(number)
	}
	return map[string]string{"string": "a string", "number": "a number", "bool": "a boolean", "array": "a list", "object": "an object"}[value]
}

// list is a JSON list whose decode errors name the element's index.
type list[T any] []T

func (l *list[T]) UnmarshalJSON(raw []byte) error {
	err := kjson.UnmarshalCaseSensitivePreserveInts(raw, (*[]T)(l))
	var elems []json.RawMessage
	if err == nil || kjson.UnmarshalCaseSensitivePreserveInts(raw, &elems) != nil {
		return err
	}
	for i, elem := range elems {
		var v T
		if elemErr := kjson.UnmarshalCaseSensitivePreserveInts(elem, &v); elemErr != nil {
			var typeErr *json.UnmarshalTypeError
			if errors.As(elemErr, &typeErr) {
				typeErr.Field = joinPath("["+strconv.Itoa(i)+"]", typeErr.Field)
			}
			return elemErr
		}
	}
	return err
}

// entryPath names one object of a request, e.g. children["StatefulSet.apps/v1"]["ns/name"], with
// both keys bounded.
func entryPath(what, typeKey, key string) string {
	return fmt.Sprintf("%s[%q][%q]", what, topology.Clip(typeKey), topology.Clip(key))
}

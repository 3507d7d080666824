// Package wire is the JSON of Metacontroller's hooks as the hook reads and writes it: each
// request decoded once with sigs.k8s.io/json into the fields the hook reads of its objects
// (Object), a value of the wrong type or a malformed body refused as a BadRequest naming its JSON
// path, and the answers encoded for people to read. It knows no cluster and decides nothing.
package wire

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
	"sync/atomic"

	kjson "sigs.k8s.io/json"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// Groups are the objects of a request by type ("StatefulSet.apps/v1") and key; a null
// object is nil.
type Groups map[string]map[string]*Object

// BadRequest is a client error: the request is answered 400 and nothing changes. Cluster names
// the parent the request was about (namespace/name, bounded) when its metadata could be read,
// so that the rejection's log line names it.
type BadRequest struct{ Msg, Cluster string }

// AboutParent names, in a bad request's error, the parent body is about: parent.metadata's
// namespace and name, read leniently (the request may be malformed anywhere else). Other errors
// are returned as they are.
func AboutParent(err error, body []byte) error {
	var bad *BadRequest
	if !errors.As(err, &bad) || bad.Cluster != "" {
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
	return &BadRequest{Msg: bad.Msg, Cluster: ObjectKey(namespace, name)}
}

func (e *BadRequest) Error() string { return e.Msg }

func Badf(format string, args ...any) error {
	return &BadRequest{Msg: fmt.Sprintf(format, args...)}
}

// maxBodyPresize bounds the buffer a request's Content-Length may reserve before its body
// arrives.
const maxBodyPresize = 1 << 20

// ReadBody reads a request body that is not empty into buf, presized to what the request
// announced (size; 0 when unknown), so that reading it costs one allocation, not a series.
func ReadBody(buf *bytes.Buffer, r io.Reader, size int64) ([]byte, error) {
	buf.Grow(int(min(max(size, 0), maxBodyPresize)) + bytes.MinRead)
	_, err := buf.ReadFrom(r)
	body := buf.Bytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, Badf("request body larger than %d bytes", tooLarge.Limit)
		}
		return nil, Badf("reading request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, Badf("empty request body: expected a JSON object")
	}
	return body, nil
}

// DecodeBody decodes one JSON document into v with sigs.k8s.io/json, as the API server decodes:
// field names are matched case-sensitively ({"Parent": …} is an unknown field, not the parent,
// and a later "PARENT" cannot replace "parent"), and integers are never rounded.
func DecodeBody(body []byte, v any) error {
	bodyDecodes.Add(1)
	err := kjson.UnmarshalCaseSensitivePreserveInts(body, v)
	if err == nil {
		return nil
	}
	if syntax, offset := kjson.SyntaxErrorOffset(err); syntax {
		if strings.Contains(err.Error(), "after top-level value") {
			return Badf("request body holds more than one JSON document")
		}
		return Badf("request body is not a valid hook request: malformed JSON at byte %d: %s", offset, v1alpha1.Clip(err.Error()))
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		what := "the request body"
		if typeErr.Field != "" {
			what = v1alpha1.Clip(strings.ReplaceAll(typeErr.Field, ".[", "["))
		}
		return Badf("request body is not a valid hook request: %s must be %s, got %s",
			what, expected(typeErr.Type), got(typeErr.Value))
	}
	return Badf("request body is not a valid hook request: %s", v1alpha1.Clip(err.Error()))
}

// bodyDecodes counts DecodeBody's calls (BodyDecodes).
var bodyDecodes atomic.Uint64

// BodyDecodes is how many bodies DecodeBody has decoded in this process, for a test to prove
// that a request is decoded once.
func BodyDecodes() uint64 { return bodyDecodes.Load() }

// Entry is one object of a request and the key it was sent under.
type Entry struct {
	Key string
	Obj *Object
}

// Entries are the objects of one child or related type in a stable order (by their keys,
// namespace/name), each checked to be an object with metadata.name.
func Entries(groups Groups, what, typeKey string) ([]Entry, error) {
	keys := SortedKeys(groups[typeKey])
	out := make([]Entry, len(keys))
	for i, k := range keys {
		obj := groups[typeKey][k]
		switch {
		case obj == nil:
			return nil, Badf("%s is null: expected an object", EntryPath(what, typeKey, k))
		case obj.Metadata.Name == "":
			return nil, Badf("%s has no metadata.name", EntryPath(what, typeKey, k))
		}
		out[i] = Entry{Key: k, Obj: obj}
	}
	return out, nil
}

// RawGroups are the children and related objects of a request as sent.
type RawGroups struct {
	Children map[string]map[string]json.RawMessage `json:"children"`
	Related  map[string]map[string]json.RawMessage `json:"related"`
}

// CompositeRequest is a CompositeController hook request as sent: the parent, its children and
// related objects, and whether Metacontroller calls the finalize hook.
type CompositeRequest struct {
	Parent json.RawMessage `json:"parent"`
	RawGroups
	Finalizing bool `json:"finalizing"`
}

// DecodeRequest reads a hook request's body into req.
func DecodeRequest(r *http.Request, req *CompositeRequest) error {
	body, err := ReadBody(new(bytes.Buffer), r.Body, r.ContentLength)
	if err != nil {
		return err
	}
	return DecodeBody(body, req)
}

// Locate names the JSON path of a value of the wrong type among the children and related
// objects, which the decode of the whole request spells without the map keys
// ("children.spec.replicas"): each object is decoded again on its own, under its path. It is nil
// when no object holds one.
func Locate(body []byte) error {
	var raw RawGroups
	if kjson.UnmarshalCaseSensitivePreserveInts(body, &raw) != nil {
		return nil
	}
	for _, g := range []struct {
		what   string
		groups map[string]map[string]json.RawMessage
	}{{"children", raw.Children}, {"related", raw.Related}} {
		for _, typeKey := range SortedKeys(g.groups) {
			for _, key := range SortedKeys(g.groups[typeKey]) {
				if err := DecodeAt(g.groups[typeKey][key], EntryPath(g.what, typeKey, key), new(*objectOf[list[Container], list[PodCondition], list[Taint], list[ContainerStatus], list[ServicePort], list[Ingress], list[NodeAddress]])); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// DecodeAt decodes raw, the object at path, into v, naming the path of a value of the wrong
// type in the error.
func DecodeAt(raw []byte, path string, v any) error {
	err := kjson.UnmarshalCaseSensitivePreserveInts(raw, v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		return Badf("%s must be %s, got %s", joinPath(path, typeErr.Field), expected(typeErr.Type), got(typeErr.Value))
	}
	return Badf("%s: %s", path, v1alpha1.Clip(err.Error()))
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
			return v1alpha1.Clip(number)
		}
		if f, err := strconv.ParseFloat(number, 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return v1alpha1.Clip(number)
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

// EntryPath names one object of a request, e.g. children["StatefulSet.apps/v1"]["ns/name"], with
// both keys bounded.
func EntryPath(what, typeKey, key string) string {
	return fmt.Sprintf("%s[%q][%q]", what, v1alpha1.Clip(typeKey), v1alpha1.Clip(key))
}

// ObjectKey is namespace/name, bounded for messages and logs.
func ObjectKey(namespace, name string) string {
	return v1alpha1.Clip(namespace) + "/" + v1alpha1.Clip(name)
}

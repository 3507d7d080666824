package wire

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// ErrorBody is the body of every refusal: what is wrong, for a person.
type ErrorBody struct {
	Error string `json:"error"`
}

// maxErrorBytes bounds an error message a response or a log line carries: each echoed value
// is already bounded (v1alpha1.Clip), this is the backstop for a message listing many.
const maxErrorBytes = 4096

func BoundError(msg string) string {
	if len(msg) <= maxErrorBytes {
		return msg
	}
	return v1alpha1.Clip(msg[:maxErrorBytes-v1alpha1.MaxEchoBytes]) + "… (error truncated)"
}

// WriteJSON writes body as JSON with code (500 when body does not encode) and returns the code
// sent.
func WriteJSON(w http.ResponseWriter, code int, body any) int {
	raw, err := MarshalUnescaped(body)
	if err != nil {
		code, raw = http.StatusInternalServerError, []byte(`{"error":"encoding response"}`)
	}
	WriteBody(w, code, append(raw, '\n'))
	return code
}

// MarshalUnescaped is json.Marshal without its HTML escaping: messages are read by people, in
// logs, kubectl and curl, where "instance_<n>" must not read "instance_\u003cn\u003e". The
// bodies go to Metacontroller and HTTP clients, never into HTML.
func MarshalUnescaped(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// WriteBody writes raw, a JSON document ending in a newline, with code.
func WriteBody(w http.ResponseWriter, code int, raw []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(raw)
}

// CustomizeRequest is the part of the customize hook's body the hook reads.
// DecoratorRequest is what the hook reads of a DecoratorController's v2 sync request: the
// object it decorates.
type DecoratorRequest struct {
	Object json.RawMessage `json:"object"`
}

// DecoratorResponse is a DecoratorController's v2 sync answer: labels to set on the object (a
// null value removes the label), no attachments, and a null status, which leaves the object's
// status as it is.
type DecoratorResponse struct {
	Labels      map[string]*string `json:"labels"`
	Attachments []any              `json:"attachments"`
}

type CustomizeRequest struct {
	Parent json.RawMessage `json:"parent"`
}

type CustomizeResponse struct {
	RelatedResources []RelatedRule `json:"relatedResources"`
}

// RelatedRule selects related objects either by LabelSelector or by names (Metacontroller
// refuses both at once).
type RelatedRule struct {
	APIVersion    string         `json:"apiVersion"`
	Resource      string         `json:"resource"`
	Namespace     string         `json:"namespace,omitempty"`
	LabelSelector *LabelSelector `json:"labelSelector,omitempty"`
	Names         []string       `json:"names,omitempty"`
}

type LabelSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

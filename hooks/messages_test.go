package hooks_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
)

// A user reads a 400 in the hook's log, in Metacontroller's events or in curl: it names the JSON
// path and what was expected in words — never a Go type — and its text is not HTML-escaped.
func TestBadRequestMessagesAreInWords(t *testing.T) {
	goType := regexp.MustCompile(`hooks\.|interface \{\}|map\[|\[\]|topology\.|\*`)
	parent := `{"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphCluster","metadata":{"name":"memgraph","namespace":"default","uid":"u","generation":1}`
	for _, tc := range []struct {
		name, body, want string
	}{
		{"array body", `[]`, "the request body must be an object, got a list"},
		{"string body", `"sync"`, "the request body must be an object, got a string"},
		{"children a list", `{"parent":` + parent + `,"spec":{}},"children":[]}`, "children must be an object whose every value is an object whose every value is an object, got a list"},
		{"children type a string", `{"parent":` + parent + `,"spec":{}},"children":{"Pod.v1":"x"}}`, `children must be an object whose every value is an object, got a string`},
		{"related a number", `{"parent":` + parent + `,"spec":{}},"related":7}`, "related must be an object whose every value is an object whose every value is an object, got a number"},
		{"a rule's <", `{"parent":` + parent + `,"spec":{"preferredMain":"main"}}}`, "instance_<n>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := serve(t, hooks.NewHandler(hooks.Config{}), http.MethodPost, "/sync", tc.body)
			if code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", code, body)
			}
			if !strings.Contains(body, tc.want) {
				t.Errorf("400 %s does not say %q", body, tc.want)
			}
			if m := goType.FindString(body); m != "" {
				t.Errorf("400 %s names a Go type (%q)", body, m)
			}
			if strings.Contains(body, `\u003c`) || strings.Contains(body, `\u003e`) || strings.Contains(body, `\u0026`) {
				t.Errorf("400 %s is HTML-escaped", body)
			}
		})
	}
}

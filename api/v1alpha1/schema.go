package v1alpha1

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/manifests"
)

// The OpenAPI half of the CRD, enforced in Go from the generated CRD itself (embedded by package
// manifests), so the hook admits exactly what the API server admits whatever the markers say:
// structural defaulting of absent and null fields, then types, int32/int64 ranges, required
// fields, enums, bounds on numbers, lengths, item and property counts, patterns and list
// uniqueness. The CEL half is mirrored by hand in validate.go. schema_test.go fails when the CRD
// uses a keyword this file does not enforce.

// schemaNode is one node of a structural schema, as controller-gen writes it.
// +kubebuilder:object:generate=false
type schemaNode struct {
	Type                 string                 `json:"type"`
	Format               string                 `json:"format"`
	Properties           map[string]*schemaNode `json:"properties"`
	AdditionalProperties *schemaNode            `json:"additionalProperties"`
	Items                *schemaNode            `json:"items"`
	Required             []string               `json:"required"`
	Enum                 []any                  `json:"enum"`
	Default              json.RawMessage        `json:"default"`
	Minimum              *float64               `json:"minimum"`
	Maximum              *float64               `json:"maximum"`
	MinLength            *int                   `json:"minLength"`
	MaxLength            *int                   `json:"maxLength"`
	MinItems             *int                   `json:"minItems"`
	MaxItems             *int                   `json:"maxItems"`
	MinProperties        *int                   `json:"minProperties"`
	MaxProperties        *int                   `json:"maxProperties"`
	Pattern              string                 `json:"pattern"`
	Nullable             bool                   `json:"nullable"`
	IntOrString          bool                   `json:"x-kubernetes-int-or-string"`
	ListType             string                 `json:"x-kubernetes-list-type"`
	ListMapKeys          []string               `json:"x-kubernetes-list-map-keys"`

	pattern *regexp.Regexp
}

// embeddedSchema returns the openAPIV3Schema of the embedded CRD, parsed once.
var embeddedSchema = sync.OnceValues(func() (*schemaNode, error) {
	return parseCRDSchema(manifests.CRD)
})

func parseCRDSchema(crd []byte) (*schemaNode, error) {
	var doc struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema *schemaNode `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(crd, &doc); err != nil {
		return nil, fmt.Errorf("the embedded CRD: %w", err)
	}
	for _, v := range doc.Spec.Versions {
		if v.Name == Version && v.Schema.OpenAPIV3Schema != nil {
			root := v.Schema.OpenAPIV3Schema
			return root, root.compile()
		}
	}
	return nil, fmt.Errorf("the embedded CRD has no %s schema", Version)
}

func (s *schemaNode) compile() error {
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return fmt.Errorf("CRD pattern %q: %w", s.Pattern, err)
		}
		s.pattern = re
	}
	for _, child := range s.children() {
		if err := child.compile(); err != nil {
			return err
		}
	}
	return nil
}

func (s *schemaNode) children() []*schemaNode {
	var out []*schemaNode
	for _, p := range s.Properties {
		out = append(out, p)
	}
	for _, c := range []*schemaNode{s.AdditionalProperties, s.Items} {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// applyDefaults is the API server's structural defaulting of v in place: a property that is
// absent, or null and not nullable, gets its default; a null without a default (a property's or a
// map value's) is dropped; then defaulting descends into every object, list item and map value.
func (s *schemaNode) applyDefaults(v any) {
	switch x := v.(type) {
	case map[string]any:
		for name, prop := range s.Properties {
			val, present := x[name]
			switch {
			case (!present || val == nil && !prop.Nullable) && len(prop.Default) > 0:
				var def any
				_ = kjson.UnmarshalCaseSensitivePreserveInts(prop.Default, &def) // the CRD's own JSON
				x[name] = def
			case present && val == nil && !prop.Nullable:
				delete(x, name)
			}
		}
		if ap := s.AdditionalProperties; ap != nil && !ap.Nullable {
			for name, val := range x {
				if val == nil && s.Properties[name] == nil {
					delete(x, name)
				}
			}
		}
		for name, val := range x {
			if prop := s.Properties[name]; prop != nil {
				prop.applyDefaults(val)
			} else if s.AdditionalProperties != nil {
				s.AdditionalProperties.applyDefaults(val)
			}
		}
	case []any:
		if s.Items != nil {
			for _, item := range x {
				s.Items.applyDefaults(item)
			}
		}
	}
}

// maxSchemaViolations bounds the violations one object reports (a list of a million bad items
// reports its length, not a million lines).
const maxSchemaViolations = 20

type schemaCheck struct {
	vs      violations
	dropped int
}

func (c *schemaCheck) fail(path, format string, args ...any) {
	if len(c.vs) >= maxSchemaViolations {
		c.dropped++
		return
	}
	field := strings.TrimPrefix(path, "spec.")
	c.vs = append(c.vs, Violation{Field: path, Message: field + " " + fmt.Sprintf(format, args...)})
}

func (c *schemaCheck) violations() []Violation {
	if c.dropped > 0 {
		c.vs = append(c.vs, Violation{Field: "spec", Message: fmt.Sprintf("and %d more violations", c.dropped)})
	}
	return c.vs
}

// validate checks v (JSON decoded with integers as int64) against s at path.
func (s *schemaNode) validate(c *schemaCheck, path string, v any) {
	if v == nil {
		if !s.Nullable {
			c.fail(path, "must not be null")
		}
		return
	}
	if !s.checkType(c, path, v) {
		return
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return sameJSON(e, v) }) {
		c.fail(path, "must be %s", oneOf(s.Enum))
	}
	switch x := v.(type) {
	case map[string]any:
		s.validateObject(c, path, x)
	case []any:
		s.validateList(c, path, x)
	case string:
		s.validateString(c, path, x)
	case int64:
		s.validateNumber(c, path, float64(x))
	case float64:
		s.validateNumber(c, path, x)
	}
}

// checkType reports whether v has the node's JSON type (an int64 or a string for
// int-or-string; a number within the format's range for integers).
func (s *schemaNode) checkType(c *schemaCheck, path string, v any) bool {
	want, ok := s.Type, true
	switch x := v.(type) {
	case int64:
		ok = s.IntOrString || s.Type == "integer" || s.Type == "number"
		if ok && s.Format == "int32" && (x < math.MinInt32 || x > math.MaxInt32) {
			c.fail(path, "must be a 32-bit integer (between %d and %d)", math.MinInt32, math.MaxInt32)
			return false
		}
	case float64:
		ok = s.Type == "number"
		if s.Type == "integer" {
			want = "an integer"
		}
	case string:
		ok = s.IntOrString || s.Type == "string"
	case bool:
		ok = s.Type == "boolean"
	case map[string]any:
		ok = s.Type == "object"
	case []any:
		ok = s.Type == "array"
	}
	if s.IntOrString {
		want = "an integer or a string"
	}
	if !ok {
		c.fail(path, "must be %s, got %s", article(want), JSONKind(v))
	}
	return ok
}

func (s *schemaNode) validateObject(c *schemaCheck, path string, x map[string]any) {
	for _, name := range s.Required {
		if _, ok := x[name]; !ok {
			c.fail(path+"."+name, "is required")
		}
	}
	if s.MaxProperties != nil && len(x) > *s.MaxProperties {
		c.fail(path, "must have at most %d entries, got %d", *s.MaxProperties, len(x))
		return
	}
	if s.MinProperties != nil && len(x) < *s.MinProperties {
		c.fail(path, "must have at least %d entries, got %d", *s.MinProperties, len(x))
	}
	for _, name := range slices.Sorted(maps.Keys(x)) {
		switch {
		case s.Properties[name] != nil:
			s.Properties[name].validate(c, path+"."+name, x[name])
		case s.AdditionalProperties != nil:
			s.AdditionalProperties.validate(c, fmt.Sprintf("%s[%q]", path, Clip(name)), x[name])
		}
		// Any other field is unknown to the schema: the API server prunes it, the hook ignores it.
	}
}

func (s *schemaNode) validateList(c *schemaCheck, path string, x []any) {
	if s.MaxItems != nil && len(x) > *s.MaxItems {
		c.fail(path, "must have at most %d items, got %d", *s.MaxItems, len(x))
		return
	}
	if s.MinItems != nil && len(x) < *s.MinItems {
		c.fail(path, "must have at least %d items, got %d", *s.MinItems, len(x))
	}
	if s.Items != nil {
		for i, item := range x {
			s.Items.validate(c, fmt.Sprintf("%s[%d]", path, i), item)
		}
	}
	seen := map[string]int{}
	for i, item := range x {
		key, ok := s.listKey(item)
		if !ok {
			continue
		}
		if first, dup := seen[key]; dup {
			c.fail(fmt.Sprintf("%s[%d]", path, i), "duplicates item %d: the list's items must be unique%s", first, s.keyNote())
			continue
		}
		seen[key] = i
	}
}

// listKey is the identity of a list item under x-kubernetes-list-type set (the whole item) or
// map (its key fields); ok is false for atomic lists.
func (s *schemaNode) listKey(item any) (string, bool) {
	var identity any
	switch s.ListType {
	case "set":
		identity = item
	case "map":
		obj, isObj := item.(map[string]any)
		if !isObj {
			return "", false
		}
		keys := make([]any, len(s.ListMapKeys))
		for i, k := range s.ListMapKeys {
			keys[i] = obj[k]
		}
		identity = keys
	default:
		return "", false
	}
	raw, err := json.Marshal(identity)
	return string(raw), err == nil
}

func (s *schemaNode) keyNote() string {
	if s.ListType == "map" {
		return " by " + strings.Join(s.ListMapKeys, " and ")
	}
	return ""
}

func (s *schemaNode) validateString(c *schemaCheck, path, x string) {
	n := utf8.RuneCountInString(x)
	if s.MaxLength != nil && n > *s.MaxLength {
		c.fail(path, "must be at most %d characters long, got %d", *s.MaxLength, n)
	}
	switch {
	case s.MinLength != nil && *s.MinLength == 1 && n == 0:
		c.fail(path, "must not be empty")
	case s.MinLength != nil && n < *s.MinLength:
		c.fail(path, "must be at least %d characters long, got %d", *s.MinLength, n)
	}
	if s.pattern != nil && !s.pattern.MatchString(x) {
		c.fail(path, "must match the regular expression %s", s.Pattern)
	}
}

func (s *schemaNode) validateNumber(c *schemaCheck, path string, x float64) {
	if s.Minimum != nil && x < *s.Minimum {
		c.fail(path, "must be at least %s", strconv.FormatFloat(*s.Minimum, 'f', -1, 64))
	}
	if s.Maximum != nil && x > *s.Maximum {
		c.fail(path, "must be at most %s", strconv.FormatFloat(*s.Maximum, 'f', -1, 64)) // 4294967295, not 4.294967295e+09
	}
}

// sameJSON compares two decoded JSON values by their encoding, so 3 and 3.0 are equal.
func sameJSON(a, b any) bool {
	ra, errA := json.Marshal(a)
	rb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ra) == string(rb)
}

func oneOf(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

func article(typ string) string {
	switch typ {
	case "object", "integer", "array":
		return "an " + typ
	case "an integer", "an integer or a string":
		return typ
	}
	return "a " + typ
}

// JSONKind names the kind of a decoded JSON value ("a string", "an integer", "a list", …).
func JSONKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

package v1alpha1_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/manifests"
)

// schemaKeywords are the keywords of a structural schema that schema.go enforces, or that do
// not constrain a value (descriptions, the map type, the CEL rules mirrored in validate.go).
var schemaKeywords = map[string]bool{
	"type": true, "format": true, "properties": true, "additionalProperties": true, "items": true,
	"required": true, "enum": true, "default": true, "minimum": true, "maximum": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"minProperties": true, "maxProperties": true, "pattern": true, "nullable": true,
	"x-kubernetes-int-or-string": true, "x-kubernetes-list-type": true, "x-kubernetes-list-map-keys": true,
	// No effect on what is admitted:
	"description": true, "x-kubernetes-map-type": true,
	// Enforced by hand (validate.go), checked by TestCRDRulesMatchGoValidation:
	"x-kubernetes-validations": true,
	// Only as controller-gen writes int-or-string (checked below):
	"anyOf": true,
}

// Every keyword the generated CRD uses in the spec is one the Go validation enforces, so a new
// marker cannot loosen the hook's validation behind the CRD's back.
func TestSchemaEnforcesEveryKeywordOfTheCRD(t *testing.T) {
	var crd map[string]any
	if err := yaml.Unmarshal(manifests.CRD, &crd); err != nil {
		t.Fatal(err)
	}
	versions := crd["spec"].(map[string]any)["versions"].([]any)
	root := versions[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
	spec := root["properties"].(map[string]any)["spec"].(map[string]any)
	var problems []string
	var walk func(path string, node map[string]any)
	walk = func(path string, node map[string]any) {
		for key, val := range node {
			if !schemaKeywords[key] {
				problems = append(problems, fmt.Sprintf("%s uses %s", path, key))
			}
			switch key {
			case "format":
				if val != "int32" && val != "int64" {
					problems = append(problems, fmt.Sprintf("%s has format %v", path, val))
				}
			case "anyOf":
				if node["x-kubernetes-int-or-string"] != true {
					problems = append(problems, path+" uses anyOf outside int-or-string")
				}
			case "additionalProperties":
				if _, ok := val.(map[string]any); !ok {
					problems = append(problems, path+" has a non-schema additionalProperties")
				}
			case "x-kubernetes-list-type":
				if val != "atomic" && val != "set" && val != "map" {
					problems = append(problems, fmt.Sprintf("%s has list type %v", path, val))
				}
			}
		}
		if props, ok := node["properties"].(map[string]any); ok {
			for name, p := range props {
				walk(path+"."+name, p.(map[string]any))
			}
		}
		for _, key := range []string{"items", "additionalProperties"} {
			if child, ok := node[key].(map[string]any); ok {
				walk(path+"."+key, child)
			}
		}
	}
	walk("spec", spec)
	sort.Strings(problems)
	if len(problems) > 0 {
		t.Errorf("the CRD constrains the spec in ways schema.go does not enforce:\n%s", strings.Join(problems, "\n"))
	}
}

// The embedded CRD parses, and its spec schema carries the limits the hook relies on.
func TestEmbeddedSchemaHasTheSpec(t *testing.T) {
	root, err := v1alpha1.EmbeddedSchema()
	if err != nil {
		t.Fatal(err)
	}
	spec := root.Properties["spec"]
	if spec == nil || spec.Properties["clusterDomain"] == nil || spec.Properties["clusterDomain"].MaxLength == nil {
		t.Fatalf("the embedded CRD's spec schema lacks clusterDomain's maxLength: %+v", spec)
	}
}

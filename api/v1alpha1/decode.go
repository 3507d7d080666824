package v1alpha1

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	kjson "sigs.k8s.io/json"
)

// DecodeCluster decodes a MemgraphCluster from the JSON of a hook request's parent. It refuses, with
// an error naming the problem, anything that is not a JSON object, a wrong apiVersion or kind, a
// missing metadata.name or metadata.namespace, and a field of the wrong type. Field names are
// matched case-sensitively, as the API server does; unknown fields are tolerated, so a newer CRD
// does not break an older hook. Defaults are not applied: see Defaulted.
func DecodeCluster(obj []byte) (*MemgraphCluster, error) {
	if !json.Valid(obj) {
		var probe any
		return nil, fmt.Errorf("parent is not valid JSON: %v", json.Unmarshal(obj, &probe))
	}
	var head struct {
		APIVersion *string `json:"apiVersion"`
		Kind       *string `json:"kind"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(obj, &head); err != nil {
		return nil, describeDecodeError(err)
	}
	switch {
	case head.APIVersion == nil || *head.APIVersion == "":
		return nil, fmt.Errorf("parent has no apiVersion, want %s", APIVersion)
	case *head.APIVersion != APIVersion:
		return nil, fmt.Errorf("parent apiVersion is %q, want %s", Clip(*head.APIVersion), APIVersion)
	case head.Kind == nil || *head.Kind == "":
		return nil, fmt.Errorf("parent has no kind, want %s", Kind)
	case *head.Kind != Kind:
		return nil, fmt.Errorf("parent kind is %q, want %s", Clip(*head.Kind), Kind)
	}
	var mc MemgraphCluster
	if err := kjson.UnmarshalCaseSensitivePreserveInts(obj, &mc); err != nil {
		return nil, describeDecodeError(err)
	}
	switch {
	case mc.Name == "":
		return nil, errors.New("parent has no metadata.name")
	case mc.Namespace == "":
		return nil, errors.New("parent has no metadata.namespace")
	}
	return &mc, nil
}

// describeDecodeError rewrites encoding/json's errors into ones that name the field and the
// expected JSON type the way a user wrote the object.
func describeDecodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field == "" {
			return fmt.Errorf("parent must be a JSON object, got a JSON %s", typeErr.Value)
		}
		if k := typeErr.Type.Kind(); strings.HasPrefix(typeErr.Value, "number ") && k >= reflect.Int && k <= reflect.Uint64 {
			return fmt.Errorf("parent field %s must be a %d-bit integer, got %s",
				Clip(jsonPath(typeErr.Field)), typeErr.Type.Bits(), Clip(typeErr.Value))
		}
		return fmt.Errorf("parent field %s has the wrong type: got a JSON %s, want %s",
			Clip(jsonPath(typeErr.Field)), typeErr.Value, jsonTypeName(typeErr.Type.Kind().String()))
	}
	if strings.Contains(err.Error(), "quantities must match") {
		return fmt.Errorf("parent has a malformed quantity (a storage size or a resource request or limit), want e.g. 1Gi or 500m: %v", err)
	}
	return fmt.Errorf("parent is not a valid MemgraphCluster: %s", Clip(err.Error()))
}

// jsonPath drops the Go names of embedded structs (PodOptions) from encoding/json's field path,
// leaving the path as it appears in the object.
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	kept := parts[:0]
	for _, p := range parts {
		if p != "" && !unicode.IsUpper(rune(p[0])) {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ".")
}

func jsonTypeName(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"):
		return "an integer"
	case strings.HasPrefix(goKind, "float"):
		return "a number"
	case goKind == "string":
		return "a string"
	case goKind == "bool":
		return "a boolean"
	case goKind == "slice", goKind == "array":
		return "a list"
	case goKind == "map", goKind == "struct":
		return "an object"
	default:
		return goKind
	}
}

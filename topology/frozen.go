package topology

import (
	"errors"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	kjson "sigs.k8s.io/json"
)

// LastAppliedAnnotation is where Metacontroller's default "dynamic apply" keeps, on each child,
// the desired object it last applied; its 3-way merge diffs a new desired object against it.
const LastAppliedAnnotation = "metacontroller.k8s.io/last-applied-configuration"

// metaSystemFields are the read-only ObjectMeta fields the API server fills in.
var metaSystemFields = []string{
	"selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "managedFields",
}

// FrozenChild is the desired object that makes Metacontroller leave an observed child exactly as
// it is (a paused cluster): the object Metacontroller last applied, with every value it sets
// taken from the observed child. Metacontroller's 3-way merge then sets no field to anything the
// child does not already hold and removes none, and, when nobody edited the child since, the
// desired object equals the last-applied one, so not even the annotation changes: no write.
// A field someone changed by hand keeps that change (the annotation then records it, one write
// that changes nothing else). A child without the annotation is returned as observed, without
// status and server-filled metadata.
func FrozenChild(observed map[string]any) (map[string]any, error) {
	if observed == nil {
		return nil, errors.New("no observed child to freeze")
	}
	meta, _ := observed["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	raw, _ := annotations[LastAppliedAnnotation].(string)
	if raw == "" {
		return asObserved(observed), nil
	}
	var applied map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts([]byte(raw), &applied); err != nil || applied == nil {
		name, _ := meta["name"].(string)
		return nil, fmt.Errorf("child %s: annotation %s is not a JSON object: %v", v1alpha1.Clip(name), LastAppliedAnnotation, err)
	}
	frozen, _ := project(applied, observed).(map[string]any)
	return frozen, nil
}

// project keeps the shape of applied with the values of observed: a field applied set and the
// child no longer has is dropped, a list whose length changed is taken as observed.
func project(applied, observed any) any {
	switch a := applied.(type) {
	case map[string]any:
		o, ok := observed.(map[string]any)
		if !ok {
			return deepCopyJSON(observed)
		}
		out := make(map[string]any, len(a))
		for k, av := range a {
			if ov, present := o[k]; present && ov != nil {
				out[k] = project(av, ov)
			}
		}
		return out
	case []any:
		o, ok := observed.([]any)
		if !ok || len(o) != len(a) {
			return deepCopyJSON(observed)
		}
		out := make([]any, len(a))
		for i := range a {
			out[i] = project(a[i], o[i])
		}
		return out
	}
	return observed
}

// asObserved is a child as observed, without what only the API server writes.
func asObserved(observed map[string]any) map[string]any {
	out := deepCopyJSON(observed).(map[string]any)
	delete(out, "status")
	if meta, ok := out["metadata"].(map[string]any); ok {
		for _, f := range metaSystemFields {
			delete(meta, f)
		}
		if annotations, ok := meta["annotations"].(map[string]any); ok {
			delete(annotations, LastAppliedAnnotation)
		}
	}
	return out
}

func deepCopyJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = deepCopyJSON(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopyJSON(x)
		}
		return out
	}
	return v
}

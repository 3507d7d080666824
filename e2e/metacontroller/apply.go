package metacontroller

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// LastAppliedAnnotation holds the desired object Metacontroller last applied to a child; its
// 3-way merge ("dynamic apply") diffs the new desired object against it.
const LastAppliedAnnotation = "metacontroller.k8s.io/last-applied-configuration"

// listMergeKeys are the field names dynamic apply guesses as list-map keys, highest precedence
// first. A list is merged by key only when every item (observed, last applied and desired) is
// an object carrying the key; any other list is replaced whole.
var listMergeKeys = []string{"containerPort", "port", "mountPath", "name", "uid", "ip", "path"}

// metaSystemFields are read-only ObjectMeta fields that an update always takes from the
// observed object, so that a desired object can never produce a diff through them.
var metaSystemFields = []string{
	"selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds",
}

func setLastApplied(obj map[string]any, applied map[string]any) error {
	data, err := json.Marshal(applied)
	if err != nil {
		return fmt.Errorf("marshal last-applied configuration: %w", err)
	}
	u := &unstructured.Unstructured{Object: obj}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[LastAppliedAnnotation] = string(data)
	u.SetAnnotations(ann)
	return nil
}

func lastApplied(obj map[string]any) (map[string]any, error) {
	raw := (&unstructured.Unstructured{Object: obj}).GetAnnotations()[LastAppliedAnnotation]
	if raw == "" {
		return nil, nil
	}
	var out map[string]any
	if err := unmarshalPreservingInts([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", LastAppliedAnnotation, err)
	}
	return out, nil
}

// applyUpdate computes the object an update would write: the observed child with the change
// from last-applied to desired merged in, system metadata and status reverted to observed, and
// the last-applied annotation set to desired. The caller compares it with observed; equal means
// no write.
func applyUpdate(observed, desired map[string]any) (map[string]any, error) {
	last, err := lastApplied(observed)
	if err != nil {
		return nil, err
	}
	desired = runtime.DeepCopyJSON(desired)
	// A desired object never carries a previous last-applied value into the merge.
	if u := (&unstructured.Unstructured{Object: desired}); u.GetAnnotations()[LastAppliedAnnotation] != "" {
		ann := u.GetAnnotations()
		ann[LastAppliedAnnotation] = ""
		u.SetAnnotations(ann)
	}
	merged, err := mergeValue("", runtime.DeepCopyJSON(observed), toJSONValue(last), desired)
	if err != nil {
		return nil, err
	}
	out, ok := merged.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("merged object is %T", merged)
	}
	for _, f := range metaSystemFields {
		revert(out, observed, "metadata", f)
	}
	revert(out, observed, "status")
	if err := setLastApplied(out, desired); err != nil {
		return nil, err
	}
	return out, nil
}

func toJSONValue(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func revert(dst, src map[string]any, path ...string) {
	v, found, err := unstructured.NestedFieldNoCopy(src, path...)
	if err != nil {
		return
	}
	if found {
		_ = unstructured.SetNestedField(dst, runtime.DeepCopyJSONValue(v), path...)
		return
	}
	unstructured.RemoveNestedField(dst, path...)
}

// mergeValue applies the change from last to desired onto dst and returns the new dst value.
// dst decides the shape: an object merges field by field, a list merges by key or is replaced,
// a scalar (or a missing value) takes desired.
func mergeValue(path string, dst, last, desired any) (any, error) {
	switch d := dst.(type) {
	case map[string]any:
		l, ok := last.(map[string]any)
		if !ok && last != nil {
			return nil, fmt.Errorf("last-applied%s: want an object, got %T", path, last)
		}
		w, ok := desired.(map[string]any)
		if !ok && desired != nil {
			return nil, fmt.Errorf("desired%s: want an object, got %T", path, desired)
		}
		return mergeObject(path, d, l, w)
	case []any:
		l, ok := last.([]any)
		if !ok && last != nil {
			return nil, fmt.Errorf("last-applied%s: want a list, got %T", path, last)
		}
		w, ok := desired.([]any)
		if !ok && desired != nil {
			return nil, fmt.Errorf("desired%s: want a list, got %T", path, desired)
		}
		return mergeList(path, d, l, w)
	default:
		return desired, nil
	}
}

func mergeObject(path string, dst, last, desired map[string]any) (map[string]any, error) {
	// A field the last apply set and the new desired object dropped is removed.
	for k := range last {
		if _, keep := desired[k]; !keep {
			delete(dst, k)
		}
	}
	for k, v := range desired {
		merged, err := mergeValue(path+"["+k+"]", dst[k], last[k], v)
		if err != nil {
			return nil, err
		}
		dst[k] = merged
	}
	return dst, nil
}

func mergeList(path string, dst, last, desired []any) (any, error) {
	key := listMapKey(dst, last, desired)
	if key == "" {
		return desired, nil
	}
	dstMap, lastMap, desMap := byKey(key, dst), byKey(key, last), byKey(key, desired)
	if _, err := mergeObject(path, dstMap, lastMap, desMap); err != nil {
		return nil, err
	}
	// Keep the observed order for surviving items, then append new desired items in order.
	out := make([]any, 0, len(dstMap))
	seen := map[string]bool{}
	for _, list := range [][]any{dst, desired} {
		for _, item := range list {
			k := keyString(item.(map[string]any)[key])
			if v, ok := dstMap[k]; ok && !seen[k] {
				out = append(out, v)
				seen[k] = true
			}
		}
	}
	return out, nil
}

func byKey(key string, list []any) map[string]any {
	m := make(map[string]any, len(list))
	for _, item := range list {
		m[keyString(item.(map[string]any)[key])] = item
	}
	return m
}

func keyString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprintf("%v", v)
}

// listMapKey returns the merge key shared by every item of every list, or "" when some item is
// not an object or no known key is common to all.
func listMapKey(lists ...[]any) string {
	var common map[string]bool
	for _, list := range lists {
		for _, item := range list {
			obj, ok := item.(map[string]any)
			if !ok {
				return ""
			}
			if common == nil {
				common = make(map[string]bool, len(obj))
				for k := range obj {
					common[k] = true
				}
				continue
			}
			for k := range common {
				if _, ok := obj[k]; !ok {
					delete(common, k)
				}
			}
		}
	}
	for _, k := range listMergeKeys {
		if common[k] {
			return k
		}
	}
	return ""
}

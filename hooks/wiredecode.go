package hooks

import (
	"encoding/json"
	"io"

	kjson "sigs.k8s.io/json"
)

// The children and related objects of a sync request are mostly what the hook never reads: the
// StatefulSets' pod templates, the pods' specs, managedFields. decodeSyncRequest decodes only
// the fields the hook reads (listed by the wire types below) into small typed structs, skipping
// the rest of each object without materialising it, and hands the readers (workloads.go,
// rollout_observe.go, bolttls.go) those fields in the generic form they always read.
//
// The typed decode is a fast path, never a second judge: whenever it fails — a value of an
// unexpected type in a field it types (an object or a list), anything that is not one well-formed
// JSON document, a duplicate key — the request is decoded exactly as it was before (decodeBody
// into syncRequest), so its answer, and a 400's message with the path, are what they always were.
// When it succeeds, the readers see the same values the generic decode would give them: leaf
// values are decoded as `any` with the same number rules, and an absent or null field is absent
// in both.

// decodeSyncRequest reads and decodes the body of a sync request.
func decodeSyncRequest(r io.Reader) (*syncRequest, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if req, ok := decodeTyped(body); ok {
		return req, nil
	}
	var req syncRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	return &req, nil
}

// decodeTyped is the fast path: false when the typed decode refuses body.
func decodeTyped(body []byte) (*syncRequest, bool) {
	var fast wireRequest
	if strict, err := kjson.UnmarshalStrict(body, &fast, kjson.DisallowDuplicateFields); err != nil || len(strict) > 0 {
		return nil, false
	}
	return fast.generic(), true
}

// readKeys are the child and related types the readers look at; the others are never read.
var readKeys = []string{statefulSetKey, podKey, secretKey}

type wireRequest struct {
	Parent   json.RawMessage                   `json:"parent"`
	Children map[string]map[string]*wireObject `json:"children"`
	Related  map[string]map[string]*wireObject `json:"related"`
}

// wireObject holds the fields the hook reads of a StatefulSet, a Pod or a Secret.
type wireObject struct {
	Metadata *wireMeta   `json:"metadata"`
	Spec     *wireSpec   `json:"spec"`
	Status   *wireStatus `json:"status"`
	Type     any         `json:"type"` // a Secret's
	Data     any         `json:"data"` // a Secret's
}

type wireMeta struct {
	Name              any              `json:"name"`
	Namespace         any              `json:"namespace"`
	Generation        any              `json:"generation"`
	CreationTimestamp any              `json:"creationTimestamp"`
	DeletionTimestamp any              `json:"deletionTimestamp"`
	Labels            *wireLabels      `json:"labels"`
	Annotations       *wireAnnotations `json:"annotations"`
}

// The keys are revisionLabel, topology.AnnotationTemplateHash and
// topology.AnnotationTemplateGeneration (TestWireKeys).
type wireLabels struct {
	Revision any `json:"controller-revision-hash"`
}

type wireAnnotations struct {
	TemplateHash       any `json:"memgraph.com/pod-template-hash"`
	TemplateGeneration any `json:"memgraph.com/pod-template-generation"`
}

type wireSpec struct {
	Replicas   any              `json:"replicas"`   // a StatefulSet's
	Containers []*wireContainer `json:"containers"` // a Pod's
}

type wireContainer struct {
	Name  any `json:"name"`
	Image any `json:"image"`
}

type wireStatus struct {
	Replicas           any              `json:"replicas"`
	ReadyReplicas      any              `json:"readyReplicas"`
	ObservedGeneration any              `json:"observedGeneration"`
	UpdateRevision     any              `json:"updateRevision"`
	CurrentRevision    any              `json:"currentRevision"`
	Conditions         []*wireCondition `json:"conditions"`
}

type wireCondition struct {
	Type   any `json:"type"`
	Status any `json:"status"`
}

// generic is the request as the readers read it.
func (w *wireRequest) generic() *syncRequest {
	return &syncRequest{Parent: w.Parent, Children: genericGroups(w.Children), Related: genericGroups(w.Related)}
}

func genericGroups(groups map[string]map[string]*wireObject) map[string]map[string]object {
	if groups == nil {
		return nil
	}
	out := make(map[string]map[string]object, len(readKeys))
	for _, typeKey := range readKeys {
		entries, ok := groups[typeKey]
		if !ok {
			continue
		}
		objs := make(map[string]object, len(entries))
		for key, o := range entries {
			objs[key] = o.generic()
		}
		out[typeKey] = objs
	}
	return out
}

// fields collects the present (non-nil) fields of one generic object.
type fields object

func (f fields) set(key string, v any) {
	if v != nil {
		f[key] = v
	}
}

func (o *wireObject) generic() object {
	if o == nil {
		return nil
	}
	f := fields{}
	if o.Metadata != nil {
		f["metadata"] = o.Metadata.generic()
	}
	if o.Spec != nil {
		f["spec"] = o.Spec.generic()
	}
	if o.Status != nil {
		f["status"] = o.Status.generic()
	}
	f.set("type", o.Type)
	f.set("data", o.Data)
	return object(f)
}

func (m *wireMeta) generic() object {
	f := fields{}
	f.set("name", m.Name)
	f.set("namespace", m.Namespace)
	f.set("generation", m.Generation)
	f.set("creationTimestamp", m.CreationTimestamp)
	f.set("deletionTimestamp", m.DeletionTimestamp)
	if m.Labels != nil {
		labels := fields{}
		labels.set(revisionLabel, m.Labels.Revision)
		f["labels"] = object(labels)
	}
	if m.Annotations != nil {
		annotations := fields{}
		annotations.set(wireTemplateHashKey, m.Annotations.TemplateHash)
		annotations.set(wireTemplateGenerationKey, m.Annotations.TemplateGeneration)
		f["annotations"] = object(annotations)
	}
	return object(f)
}

func (s *wireSpec) generic() object {
	f := fields{}
	f.set("replicas", s.Replicas)
	if s.Containers != nil {
		containers := make([]any, len(s.Containers))
		for i, c := range s.Containers {
			if c != nil { // a null element stays nil: not an object, as before
				container := fields{}
				container.set("name", c.Name)
				container.set("image", c.Image)
				containers[i] = object(container)
			}
		}
		f["containers"] = containers
	}
	return object(f)
}

func (s *wireStatus) generic() object {
	f := fields{}
	f.set("replicas", s.Replicas)
	f.set("readyReplicas", s.ReadyReplicas)
	f.set("observedGeneration", s.ObservedGeneration)
	f.set("updateRevision", s.UpdateRevision)
	f.set("currentRevision", s.CurrentRevision)
	if s.Conditions != nil {
		conditions := make([]any, len(s.Conditions))
		for i, c := range s.Conditions {
			if c != nil {
				cond := fields{}
				cond.set("type", c.Type)
				cond.set("status", c.Status)
				conditions[i] = object(cond)
			}
		}
		f["conditions"] = conditions
	}
	return object(f)
}

// The annotation keys of wireAnnotations' tags.
const (
	wireTemplateHashKey       = "memgraph.com/pod-template-hash"
	wireTemplateGenerationKey = "memgraph.com/pod-template-generation"
)

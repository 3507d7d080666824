package hooks

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The children and related objects of a sync request are mostly what the hook never reads: the
// StatefulSets' pod templates, the pods' specs, managedFields. decodeSyncRequest keeps only the
// fields the hook reads (entrySchema), in the generic form the readers (workloads.go,
// rollout_observe.go, bolttls.go) read, and validates and skips the rest of each object in one
// pass without materialising it (jsonscan.go).
//
// The scan is a fast path, never a second judge: whenever it gives up — anything that is not one
// well-formed JSON document, a typed object or list holding another type, a duplicate key it
// reads, a key it matches or a value it keeps that needs unescaping — the request is decoded
// exactly as it was before (decodeBody into syncRequest), so its answer, and a 400's message
// with the path, are what they always were. When it succeeds, the readers see the values the
// generic decode would give them (TestTypedDecodeChangesNothingButSpeed).

// decodeSyncRequest reads and decodes the body of a sync request of the announced size (0 when
// unknown).
func decodeSyncRequest(r io.Reader, size int64) (*syncRequest, error) {
	return decodeSyncRequestInto(new(bytes.Buffer), r, size)
}

// decodeSyncRequestInto is decodeSyncRequest reading the body into buf: the request it returns
// refers to buf until it is observed (observeRequest).
func decodeSyncRequestInto(buf *bytes.Buffer, r io.Reader, size int64) (*syncRequest, error) {
	body, err := readBodyInto(buf, r, size)
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

// readKeys are the child and related types the readers look at; the others are never read.
var readKeys = map[string]string{statefulSetKey: statefulSetKey, podKey: podKey, secretKey: secretKey}

// entrySchema is every field the readers read of a StatefulSet, a Pod or a Secret.
var entrySchema = objectOf(map[string]*schema{
	"metadata": objectOf(map[string]*schema{
		"name": leaf(), "namespace": leaf(), "generation": leaf(),
		"creationTimestamp": leaf(), "deletionTimestamp": leaf(),
		"labels":      objectOf(map[string]*schema{revisionLabel: leaf()}),
		"annotations": objectOf(map[string]*schema{topology.AnnotationTemplateHash: leaf(), topology.AnnotationTemplateGeneration: leaf()}),
	}),
	"spec": objectOf(map[string]*schema{
		"replicas":   leaf(),                                                                // a StatefulSet's
		"ordinals":   objectOf(map[string]*schema{"start": leaf()}),                         // a StatefulSet's
		"containers": listOf(objectOf(map[string]*schema{"name": leaf(), "image": leaf()})), // a Pod's
	}),
	"status": objectOf(map[string]*schema{
		"replicas": leaf(), "readyReplicas": leaf(), "observedGeneration": leaf(),
		"updateRevision": leaf(), "currentRevision": leaf(),
		"conditions": listOf(objectOf(map[string]*schema{"type": leaf(), "status": leaf()})),
	}),
	"type": leaf(), "data": leaf(), // a Secret's
})

// decodeTyped is the fast path: false when the scan gives up on body.
func decodeTyped(body []byte) (*syncRequest, bool) {
	s := &scanner{data: body, ok: true}
	if s.peek() != '{' {
		return nil, false
	}
	req := &syncRequest{}
	var seen [3]bool
	once := func(i int) bool {
		if seen[i] {
			return s.fail()
		}
		seen[i] = true
		return true
	}
	ok := s.members(func(key []byte, escaped bool) bool {
		switch {
		case escaped:
			return s.fail()
		case string(key) == "parent":
			s.space()
			start := s.pos
			ok := once(0) && s.skip(1)
			req.Parent = s.data[start:s.pos]
			return ok
		case string(key) == "children":
			var ok bool
			req.Children, ok = s.groups(false)
			return once(1) && ok
		case string(key) == "related":
			var ok bool
			req.Related, ok = s.groups(true)
			return once(2) && ok
		default:
			return s.skip(1)
		}
	})
	s.space()
	if !ok || !s.ok || s.pos != len(s.data) {
		return nil, false
	}
	req.scanned = body
	req.pods, req.podsRead = s.pods, s.podsScanned
	return req, true
}

// groups reads children or related: per type, per key, an object or null. The types the readers
// read keep their entries' read fields — the related Pods as podFacts (podscan.go); the others
// are only checked to have that shape, as the generic decode checks them.
func (s *scanner) groups(related bool) (map[string]map[string]object, bool) {
	s.numbers = true
	defer func() { s.numbers = false }()
	if s.null() {
		return nil, s.ok
	}
	if s.peek() != '{' {
		return nil, s.fail()
	}
	out := make(map[string]map[string]object, len(readKeys))
	ok := s.members(func(typeKey []byte, escaped bool) bool {
		if escaped {
			return s.fail()
		}
		name, read := readKeys[string(typeKey)]
		if !read {
			return s.unreadEntries()
		}
		if _, dup := out[name]; dup || related && name == podKey && s.podsScanned {
			return s.fail()
		}
		if related && name == podKey {
			var ok bool
			s.pods, ok = s.podEntries()
			s.podsScanned = true
			return ok
		}
		entries, ok := s.entries()
		out[name] = entries
		return ok
	})
	return out, ok
}

func (s *scanner) entries() (map[string]object, bool) {
	if s.null() {
		return nil, s.ok
	}
	if s.peek() != '{' {
		return nil, s.fail()
	}
	out := make(map[string]object, 16)
	ok := s.members(func(key []byte, escaped bool) bool {
		if _, dup := out[string(key)]; dup || escaped || !utf8.Valid(key) {
			return s.fail() // the generic decode would have replaced what is not UTF-8
		}
		obj, ok := s.object(entrySchema)
		out[string(key)] = obj
		return ok
	})
	return out, ok
}

func (s *scanner) unreadEntries() bool {
	if s.null() {
		return s.ok
	}
	if s.peek() != '{' {
		return s.fail()
	}
	return s.members(func([]byte, bool) bool {
		if s.null() {
			return s.ok
		}
		if s.peek() != '{' {
			return s.fail()
		}
		return s.skip(1)
	})
}

package hooks

import (
	"sort"
	"unicode/utf8"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The Pods are most of a request's objects, and a generic map per object, label set, container
// and condition is most of what scanning them would cost. The scan reads each Pod straight into
// podFacts instead, accepting only Pods whose read fields all have their expected JSON types
// (strings without escapes, objects, lists of objects; no nulls, no repeated read keys) and whose
// creationTimestamp parses: for anything else it gives up, and the generic decode and readers
// answer, with their messages and paths. What it computes is what podReady and rolloutFields
// compute (TestTypedDecodeChangesNothingButSpeed compares the two).

// podEntries reads the entries of the Pod group (or null), sorted by key as objectsOf sorts.
func (s *scanner) podEntries() ([]podEntry, bool) {
	if s.null() {
		return []podEntry{}, s.ok
	}
	if s.peek() != '{' {
		return nil, s.fail()
	}
	out := make([]podEntry, 0, 16)
	ok := s.members(func(key []byte, escaped bool) bool {
		if escaped || !utf8.Valid(key) {
			return s.fail()
		}
		for i := range out {
			if out[i].key == string(key) {
				return s.fail()
			}
		}
		facts, ok := s.pod()
		out = append(out, podEntry{entry: entry{key: string(key)}, facts: facts})
		return ok
	})
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, ok
}

// pod reads one Pod object.
func (s *scanner) pod() (podFacts, bool) {
	var f podFacts
	var seen [5]bool // metadata, spec, status, containers, conditions
	ok := s.fields(func(key []byte) bool {
		switch string(key) {
		case "metadata":
			return s.once(&seen[0]) && s.podMetadata(&f)
		case "spec":
			return s.once(&seen[1]) && s.fields(func(key []byte) bool {
				if string(key) != "containers" {
					return s.skip(1)
				}
				return s.once(&seen[3]) && s.podContainers(&f)
			})
		case "status":
			return s.once(&seen[2]) && s.fields(func(key []byte) bool {
				if string(key) != "conditions" {
					return s.skip(1)
				}
				return s.once(&seen[4]) && s.podConditions(&f)
			})
		}
		return s.skip(1)
	})
	if ok && f.name == "" {
		return f, s.fail() // objectsOf's 400: no metadata.name
	}
	f.ready = f.ready && !f.terminating
	return f, ok
}

func (s *scanner) podMetadata(f *podFacts) bool {
	var deleting, created string
	var seen [5]bool
	ok := s.fields(func(key []byte) bool {
		switch string(key) {
		case "name":
			return s.once(&seen[0]) && s.text(&f.name)
		case "namespace":
			return s.once(&seen[1]) && s.text(&f.namespace)
		case "deletionTimestamp":
			return s.once(&seen[2]) && s.text(&deleting)
		case "creationTimestamp":
			return s.once(&seen[3]) && s.text(&created)
		case "labels":
			var revision bool
			return s.once(&seen[4]) && s.fields(func(key []byte) bool {
				if string(key) != revisionLabel {
					return s.skip(1)
				}
				return s.once(&revision) && s.text(&f.revision)
			})
		}
		return s.skip(1)
	})
	if !ok {
		return false
	}
	at, err := parseCreated(created, "")
	if err != nil {
		return s.fail()
	}
	f.created, f.terminating = at, deleting != ""
	return true
}

// podContainers reads the image of the first container named memgraph, as memgraphImage does.
func (s *scanner) podContainers(f *podFacts) bool {
	image, ok := s.firstWith("name", topology.ContainerName, "image")
	f.image = image
	return ok
}

// podConditions reads readiness from the first condition of type Ready, as podReady does (pod
// then accounts for the deletion).
func (s *scanner) podConditions(f *podFacts) bool {
	status, ok := s.firstWith("type", "Ready", "status")
	f.ready = status == "True"
	return ok
}

// firstWith walks the list of objects next, each with string fields key and value (both may
// be absent), and returns value of the first whose key is want.
func (s *scanner) firstWith(key, want, value string) (got string, ok bool) {
	found := false
	ok = s.objects(func() bool {
		var k, v string
		var seen [2]bool
		ok := s.fields(func(field []byte) bool {
			switch string(field) {
			case key:
				return s.once(&seen[0]) && s.text(&k)
			case value:
				return s.once(&seen[1]) && s.text(&v)
			}
			return s.skip(1)
		})
		if ok && !found && k == want {
			got, found = v, true
		}
		return ok
	})
	return got, ok
}

// once fails the scan on a read key met twice (the generic decode would keep the last value).
func (s *scanner) once(seen *bool) bool {
	if *seen {
		return s.fail()
	}
	*seen = true
	return true
}

// fields walks the object next (not null), calling field with each key; it gives up on an
// escaped key, which might spell one it reads.
func (s *scanner) fields(field func(key []byte) bool) bool {
	if s.peek() != '{' {
		return s.fail()
	}
	return s.members(func(key []byte, escaped bool) bool {
		return !escaped && field(key) || s.fail()
	})
}

// objects walks the list of objects next (not null).
func (s *scanner) objects(object func() bool) bool {
	if s.peek() != '[' {
		return s.fail()
	}
	return s.elements(object)
}

// text reads the string next (not null), without escapes and valid UTF-8; the same text read
// again is the same string.
func (s *scanner) text(out *string) bool {
	if s.peek() != '"' {
		return s.fail()
	}
	raw, escaped := s.str()
	if escaped || !s.ok || !utf8.Valid(raw) {
		return s.fail()
	}
	if t, ok := s.texts[string(raw)]; ok {
		*out = t
		return true
	}
	if s.texts == nil {
		s.texts = make(map[string]string, 64)
	}
	*out = string(raw)
	s.texts[*out] = *out
	return true
}

package hooks_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A structure-aware mutator for FuzzHookRequestMutations. Requests are parsed into a tree whose
// objects keep their members in order and may repeat a key (jobj), so a mutation can produce
// what encoding/json's maps cannot: duplicate keys, invalid UTF-8 inside a string, numbers beyond
// float64 and nesting beyond the decoder's depth limit (jraw is written verbatim).

type jobj []jmember

type jmember struct {
	key   string
	value any
}

type jraw []byte

func parseDoc(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return fromJSON(v), nil
}

func fromJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		obj := make(jobj, 0, len(x))
		for _, k := range keys {
			obj = append(obj, jmember{k, fromJSON(x[k])})
		}
		return obj
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromJSON(e)
		}
		return out
	}
	return v
}

func encodeDoc(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v)
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		fmt.Fprint(b, x)
	case json.Number:
		b.WriteString(string(x))
	case string:
		raw, _ := json.Marshal(x)
		b.Write(raw)
	case jraw:
		b.Write(x)
	case jobj:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, m.key)
			b.WriteByte(':')
			writeJSON(b, m.value)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	default:
		panic(fmt.Sprintf("mutate: cannot encode %T", v))
	}
}

// slot is one node of the tree: how to read and replace it, and for an object member, the
// object's own slot and the member's index (for the mutations of keys).
type slot struct {
	get   func() any
	set   func(any)
	owner *slot
	index int
}

// slots lists every node of the tree rooted at *root in preorder.
func slots(root *any) []slot {
	var out []slot
	var walk func(s slot)
	walk = func(s slot) {
		out = append(out, s)
		switch x := s.get().(type) {
		case jobj:
			for i := range x {
				owner := s
				walk(slot{
					get:   func() any { return owner.get().(jobj)[i].value },
					set:   func(v any) { owner.get().(jobj)[i].value = v },
					owner: &owner, index: i,
				})
			}
		case []any:
			for i := range x {
				walk(slot{get: func() any { return s.get().([]any)[i] }, set: func(v any) { s.get().([]any)[i] = v }})
			}
		}
	}
	walk(slot{get: func() any { return *root }, set: func(v any) { *root = v }})
	return out
}

// The mutations. Each takes the node and the fuzzer's payload.
const (
	opNull = iota
	opString
	opNumber
	opBool
	opEmptyArray
	opEmptyObject
	opDeepNest
	opDuplicateKey
	opInvalidUTF8
	opLongString
	opMiscaseKey
	opDeleteKey
	opSwellArray
	numOps
)

// edgeNumbers are numbers at the edges of what JSON, float64, int32 and int64 can hold.
var edgeNumbers = []string{
	"0", "-0", "-1", "1.5", "1e2", "1E+2", "0.0000001", "1e-400", "1e308", "-1e308", "1e400",
	"2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296",
	"9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
	"123456789012345678901234567890", "100000000000000000000000e-23",
}

// mutate applies operation op to the node at path (modulo the node count).
func mutate(doc any, path uint32, op uint8, payload []byte) any {
	all := slots(&doc)
	s := all[int(path%uint32(len(all)))]
	n := payloadNumber(payload)
	switch int(op) % numOps {
	case opNull:
		s.set(nil)
	case opString:
		s.set(strings.ToValidUTF8(string(payload), "\uFFFD"))
	case opNumber:
		s.set(jraw(edgeNumbers[n%len(edgeNumbers)]))
	case opBool:
		s.set(n%2 == 0)
	case opEmptyArray:
		s.set([]any{})
	case opEmptyObject:
		s.set(jobj{})
	case opDeepNest:
		s.set(deepNest(s.get(), 1+n%20000))
	case opDuplicateKey:
		if s.owner != nil {
			obj := slices.Clone(s.owner.get().(jobj))
			dup := jmember{obj[s.index].key, strings.ToValidUTF8(string(payload), "\uFFFD")}
			at := s.index + n%2 // the duplicate before or after the original
			s.owner.set(slices.Insert(obj, at, dup))
		}
	case opInvalidUTF8:
		s.set(rawString(payload))
	case opLongString:
		if len(payload) == 0 {
			payload = []byte("m")
		}
		s.set(strings.Repeat(strings.ToValidUTF8(string(payload), "?"), 1+(64<<10)/len(payload)))
	case opMiscaseKey:
		if s.owner != nil {
			obj := slices.Clone(s.owner.get().(jobj))
			obj[s.index].key = strings.ToUpper(obj[s.index].key)
			s.owner.set(obj)
		}
	case opDeleteKey:
		if s.owner != nil {
			s.owner.set(slices.Delete(slices.Clone(s.owner.get().(jobj)), s.index, s.index+1))
		}
	case opSwellArray:
		if arr, ok := s.get().([]any); ok && len(arr) > 0 {
			s.set(slices.Repeat(arr[:1], 1000))
		}
	}
	return doc
}

// payloadNumber reads a small number from the payload's first bytes.
func payloadNumber(payload []byte) int {
	var buf [4]byte
	copy(buf[:], payload)
	return int(binary.LittleEndian.Uint32(buf[:]) & 0x7fffffff)
}

// deepNest wraps v in depth arrays or objects: past encoding/json's limit of 10000 levels at
// the high end.
func deepNest(v any, depth int) jraw {
	inner := encodeDoc(v)
	open, close := "[", "]"
	if depth%2 == 1 {
		open, close = `{"a":`, "}"
	}
	return jraw(strings.Repeat(open, depth) + string(inner) + strings.Repeat(close, depth))
}

// rawString is a JSON string of the payload's bytes as they are: quotes, backslashes and control
// bytes escaped, everything else, invalid UTF-8 included, left in place.
func rawString(payload []byte) jraw {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, c := range payload {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return jraw(b.Bytes())
}

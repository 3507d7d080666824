package hooks

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"unicode/utf8"

	kjson "sigs.k8s.io/json"
)

// scanner walks a sync request once, validating all of it as JSON and keeping only the fields a
// schema names: everything else is checked and skipped without being materialised. It gives up
// (ok false) on anything it does not handle exactly as the generic decode does — invalid JSON,
// a duplicate key it reads, a key or read string with escapes or invalid UTF-8, a typed object
// or list holding another type, a number out of range, nesting beyond maxScanDepth — and the
// request is then decoded the generic way (wiredecode.go).
type scanner struct {
	data []byte
	pos  int
	ok   bool
	// numbers: every number must fit a float64, as where the generic decode materialises them
	// (the children and related objects); elsewhere it skips them unchecked.
	numbers bool
	// strings holds every string leaf kept so far, boxed: the Pods of a request repeat their
	// namespace, revision, image, condition type and status, and each repeat then costs nothing.
	strings map[string]any
	// texts are the strings read into typed fields (podscan.go), likewise shared.
	texts map[string]string
	// pods are the related Pods, read into podFacts (podscan.go); podsScanned once read.
	pods        []podEntry
	podsScanned bool
}

// maxScanDepth is far below encoding/json's own limit, so the scanner never accepts what the
// generic decode refuses for depth.
const maxScanDepth = 1000

// schema names the fields of an object the scanner keeps: a field with a schema of its own is
// an object (fields) or a list of them (list) walked in turn, one with none a leaf decoded as the
// generic decode would (strings, int64 or float64, bools, and objects and lists as maps and
// slices).
type schema struct {
	fields map[string]*schema
	names  map[string]string // each field's name, so that a kept key costs no allocation
	list   *schema
	isList bool
}

func leaf() *schema { return nil }
func objectOf(fields map[string]*schema) *schema {
	names := make(map[string]string, len(fields))
	for name := range fields {
		names[name] = name
	}
	return &schema{fields: fields, names: names}
}

func listOf(elem *schema) *schema { return &schema{list: elem, isList: true} }

func (s *scanner) fail() bool { s.ok = false; return false }

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek is the next byte after white space, 0 at the end.
func (s *scanner) peek() byte {
	s.space()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *scanner) literal(word string) bool {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return s.fail()
	}
	s.pos += len(word)
	return true
}

// str scans a string and returns its content when it needs no unescaping (escaped false).
func (s *scanner) str() (raw []byte, escaped bool) {
	s.pos++ // the opening quote
	start := s.pos
	for {
		end := bytes.IndexByte(s.data[s.pos:], '"')
		if end < 0 {
			s.fail()
			return nil, true
		}
		special := indexSpecial(s.data[s.pos : s.pos+end])
		if special < 0 {
			s.pos += end + 1
			return s.data[start : s.pos-1], escaped
		}
		s.pos += special
		if s.data[s.pos] != '\\' || !s.escape() {
			s.fail()
			return nil, true
		}
		escaped = true
	}
}

// indexSpecial is the index of the first backslash or control character of b, -1 if none. It
// tests eight bytes at a time (a string is mostly plain text): for each byte x of a word, the
// high bit of (x - 0x20) &^ x is set when x < 0x20, and likewise with x ^ 0x5C for x == '\\';
// a borrow can only set bits above a byte that matched, so a word with no match yields no bit,
// and the first match is found by the byte loop.
func indexSpecial(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		y := x ^ ('\\' * ones)
		if ((x-0x20*ones)&^x|(y-ones)&^y)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '\\' {
			return i
		}
	}
	return -1
}

func (s *scanner) escape() bool {
	s.pos++
	if s.pos >= len(s.data) {
		return s.fail()
	}
	switch s.data[s.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return true
	case 'u':
		if s.pos+5 > len(s.data) {
			return s.fail()
		}
		for _, h := range s.data[s.pos+1 : s.pos+5] {
			if !isHex(h) {
				return s.fail()
			}
		}
		s.pos += 5
		return true
	}
	return s.fail()
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number scans a number by JSON's grammar and returns its text.
func (s *scanner) number() []byte {
	start := s.pos
	if s.pos < len(s.data) && s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case s.pos < len(s.data) && isDigit(s.data[s.pos]):
		s.digits()
	default:
		s.fail()
		return nil
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if !s.digits() {
			return nil
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if !s.digits() {
			return nil
		}
	}
	return s.data[start:s.pos]
}

func (s *scanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && isDigit(s.data[s.pos]) {
		s.pos++
	}
	if s.pos == start {
		return s.fail()
	}
	return true
}

// skip validates and passes over one value.
func (s *scanner) skip(depth int) bool {
	if depth > maxScanDepth {
		return s.fail()
	}
	switch s.peek() {
	case '{':
		return s.members(func([]byte, bool) bool { return s.skip(depth + 1) })
	case '[':
		return s.elements(func() bool { return s.skip(depth + 1) })
	case '"':
		s.str()
		return s.ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		text := s.number()
		if text == nil || !s.numbers || len(text) < 300 && !bytes.ContainsAny(text, "eE") {
			return text != nil
		}
		_, ok := convertNumber(string(text))
		return ok || s.fail()
	}
}

// members walks an object whose opening brace is next, calling value with each key (its raw
// text, and whether that holds escapes) once the scanner stands on its value.
func (s *scanner) members(value func(key []byte, escaped bool) bool) bool {
	s.pos++
	if s.peek() == '}' {
		s.pos++
		return true
	}
	for {
		if s.peek() != '"' {
			return s.fail()
		}
		key, escaped := s.str()
		if !s.ok || s.peek() != ':' {
			return s.fail()
		}
		s.pos++
		if !value(key, escaped) {
			return s.fail()
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return true
		default:
			return s.fail()
		}
	}
}

// elements walks an array whose opening bracket is next.
func (s *scanner) elements(value func() bool) bool {
	s.pos++
	if s.peek() == ']' {
		s.pos++
		return true
	}
	for {
		if !value() {
			return s.fail()
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return true
		default:
			return s.fail()
		}
	}
}

// null consumes a null if one is next.
func (s *scanner) null() bool {
	if s.peek() != 'n' {
		return false
	}
	return s.literal("null")
}

// object keeps the fields sc names of the object (or null, giving nil) that is next.
func (s *scanner) object(sc *schema) (object, bool) {
	if s.null() {
		return nil, s.ok
	}
	if s.peek() != '{' {
		return nil, s.fail()
	}
	out := make(object, len(sc.fields))
	ok := s.members(func(key []byte, escaped bool) bool {
		if escaped {
			return s.fail() // it might spell a field it names
		}
		name, named := sc.names[string(key)]
		if !named {
			return s.skip(1)
		}
		if _, dup := out[name]; dup {
			return s.fail()
		}
		v, ok := s.value(sc.fields[name])
		out[name] = v // null included, as the generic decode keeps it
		return ok
	})
	return out, ok
}

// value reads the value next by sc: an object or list walked, or a leaf.
func (s *scanner) value(sc *schema) (any, bool) {
	switch {
	case sc == nil:
		return s.leaf()
	case sc.isList:
		return s.list(sc.list)
	default:
		obj, ok := s.object(sc)
		if obj == nil {
			return nil, ok
		}
		return obj, ok
	}
}

// list reads a list of objects (or null); a null element stays nil.
func (s *scanner) list(elem *schema) (any, bool) {
	if s.null() {
		return nil, s.ok
	}
	if s.peek() != '[' {
		return nil, s.fail()
	}
	out := []any{}
	ok := s.elements(func() bool {
		obj, ok := s.object(elem)
		if obj == nil {
			out = append(out, nil)
		} else {
			out = append(out, obj)
		}
		return ok
	})
	return out, ok
}

// leaf decodes the value next as the generic decode would.
func (s *scanner) leaf() (any, bool) {
	switch c := s.peek(); {
	case c == '"':
		raw, escaped := s.str()
		if escaped || !s.ok || !utf8.Valid(raw) {
			return nil, s.fail()
		}
		return s.intern(raw), true
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == 'n':
		return nil, s.literal("null")
	case c == '{' || c == '[':
		start := s.pos
		if !s.skip(1) {
			return nil, false
		}
		var v any
		if err := kjson.UnmarshalCaseSensitivePreserveInts(s.data[start:s.pos], &v); err != nil {
			return nil, s.fail()
		}
		return v, true
	default:
		text := s.number()
		if text == nil {
			return nil, false
		}
		return convertNumber(string(text))
	}
}

// intern returns raw as a string in an interface, the same one for the same text.
func (s *scanner) intern(raw []byte) any {
	if v, ok := s.strings[string(raw)]; ok {
		return v
	}
	if s.strings == nil {
		s.strings = make(map[string]any, 64)
	}
	str := string(raw)
	var v any = str
	s.strings[str] = v
	return v
}

// convertNumber is the generic decode's rule: an int64 for an integer without a '.', else a
// float64; a number no float64 holds is refused.
func convertNumber(text string) (any, bool) {
	if !strings.Contains(text, ".") {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, true
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	return f, err == nil
}

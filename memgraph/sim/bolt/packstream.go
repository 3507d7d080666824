// Package bolt is the server side of the Bolt protocol as Memgraph 3.12 speaks it: handshake
// (1.0, 4.0, 4.1, 4.3, 4.4, 5.2), chunked framing, PackStream v1 and the request state machine
// (FAILURE → IGNORED until RESET, pipelining, explicit transactions). It knows nothing about
// Memgraph queries: a Handler answers RUN.
package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Structure is a decoded PackStream struct (a Bolt message or a graph value).
type Structure struct {
	Tag    byte
	Fields []any
}

// encoder appends PackStream values to a buffer.
type encoder struct{ buf []byte }

func (e *encoder) value(v any) {
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, 0xC0)
	case bool:
		if x {
			e.buf = append(e.buf, 0xC3)
		} else {
			e.buf = append(e.buf, 0xC2)
		}
	case int:
		e.int(int64(x))
	case int32:
		e.int(int64(x))
	case int64:
		e.int(x)
	case uint32:
		e.int(int64(x))
	case float64:
		e.buf = append(e.buf, 0xC1)
		e.buf = binary.BigEndian.AppendUint64(e.buf, math.Float64bits(x))
	case string:
		e.header(len(x), 0x80, 0xD0, 0xD1, 0xD2)
		e.buf = append(e.buf, x...)
	case []byte:
		e.sized(len(x), 0xCC, 0xCD, 0xCE)
		e.buf = append(e.buf, x...)
	case []string:
		e.header(len(x), 0x90, 0xD4, 0xD5, 0xD6)
		for _, s := range x {
			e.value(s)
		}
	case []any:
		e.header(len(x), 0x90, 0xD4, 0xD5, 0xD6)
		for _, item := range x {
			e.value(item)
		}
	case map[string]any:
		e.header(len(x), 0xA0, 0xD8, 0xD9, 0xDA)
		for _, k := range sortedKeys(x) {
			e.value(k)
			e.value(x[k])
		}
	case Structure:
		if len(x.Fields) > 15 {
			panic("bolt: struct with more than 15 fields")
		}
		e.buf = append(e.buf, 0xB0|byte(len(x.Fields)), x.Tag)
		for _, f := range x.Fields {
			e.value(f)
		}
	default:
		panic(fmt.Sprintf("bolt: cannot encode %T", v))
	}
}

func (e *encoder) int(v int64) {
	switch {
	case v >= -16 && v <= 127:
		e.buf = append(e.buf, byte(int8(v)))
	case v >= math.MinInt8 && v <= math.MaxInt8:
		e.buf = append(e.buf, 0xC8, byte(int8(v)))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		e.buf = append(e.buf, 0xC9)
		e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(int16(v)))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		e.buf = append(e.buf, 0xCA)
		e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(int32(v)))
	default:
		e.buf = append(e.buf, 0xCB)
		e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v))
	}
}

// header writes a string/list/map size marker: tiny form below 16, then 8/16/32-bit sizes.
func (e *encoder) header(n int, tiny, m8, m16, m32 byte) {
	if n < 16 {
		e.buf = append(e.buf, tiny|byte(n))
		return
	}
	e.sized(n, m8, m16, m32)
}

func (e *encoder) sized(n int, m8, m16, m32 byte) {
	switch {
	case n <= math.MaxUint8:
		e.buf = append(e.buf, m8, byte(n))
	case n <= math.MaxUint16:
		e.buf = append(e.buf, m16)
		e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(n))
	default:
		e.buf = append(e.buf, m32)
		e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(n))
	}
}

// decoder reads PackStream values from one reassembled message.
type decoder struct {
	buf []byte
	pos int
}

var errShort = errors.New("bolt: truncated PackStream value")

func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || d.pos+n > len(d.buf) {
		return nil, errShort
	}
	b := d.buf[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

func (d *decoder) size(width int) (int, error) {
	b, err := d.take(width)
	if err != nil {
		return 0, err
	}
	switch width {
	case 1:
		return int(b[0]), nil
	case 2:
		return int(binary.BigEndian.Uint16(b)), nil
	default:
		return int(binary.BigEndian.Uint32(b)), nil
	}
}

func (d *decoder) value() (any, error) {
	mb, err := d.take(1)
	if err != nil {
		return nil, err
	}
	m := mb[0]
	switch {
	case m <= 0x7F || m >= 0xF0:
		return int64(int8(m)), nil
	case m >= 0x80 && m <= 0x8F:
		return d.str(int(m & 0x0F))
	case m >= 0x90 && m <= 0x9F:
		return d.list(int(m & 0x0F))
	case m >= 0xA0 && m <= 0xAF:
		return d.dict(int(m & 0x0F))
	case m >= 0xB0 && m <= 0xBF:
		return d.structure(int(m & 0x0F))
	}
	switch m {
	case 0xC0:
		return nil, nil
	case 0xC2:
		return false, nil
	case 0xC3:
		return true, nil
	case 0xC1:
		b, err := d.take(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
	case 0xC8, 0xC9, 0xCA, 0xCB:
		return d.integer(m)
	case 0xCC, 0xCD, 0xCE:
		n, err := d.size(1 << (m - 0xCC))
		if err != nil {
			return nil, err
		}
		b, err := d.take(n)
		return append([]byte(nil), b...), err
	case 0xD0, 0xD1, 0xD2:
		n, err := d.size(1 << (m - 0xD0))
		if err != nil {
			return nil, err
		}
		return d.str(n)
	case 0xD4, 0xD5, 0xD6:
		n, err := d.size(1 << (m - 0xD4))
		if err != nil {
			return nil, err
		}
		return d.list(n)
	case 0xD8, 0xD9, 0xDA:
		n, err := d.size(1 << (m - 0xD8))
		if err != nil {
			return nil, err
		}
		return d.dict(n)
	}
	return nil, fmt.Errorf("bolt: unknown PackStream marker 0x%02X", m)
}

func (d *decoder) integer(m byte) (any, error) {
	b, err := d.take(1 << (m - 0xC8))
	if err != nil {
		return nil, err
	}
	switch m {
	case 0xC8:
		return int64(int8(b[0])), nil
	case 0xC9:
		return int64(int16(binary.BigEndian.Uint16(b))), nil
	case 0xCA:
		return int64(int32(binary.BigEndian.Uint32(b))), nil
	default:
		return int64(binary.BigEndian.Uint64(b)), nil
	}
}

func (d *decoder) str(n int) (any, error) {
	b, err := d.take(n)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func (d *decoder) list(n int) (any, error) {
	out := make([]any, 0, min(n, 1024))
	for range n {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (d *decoder) dict(n int) (any, error) {
	out := make(map[string]any, min(n, 1024))
	for range n {
		k, err := d.value()
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("bolt: map key of type %T", k)
		}
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		out[ks] = v
	}
	return out, nil
}

func (d *decoder) structure(n int) (any, error) {
	tag, err := d.take(1)
	if err != nil {
		return nil, err
	}
	s := Structure{Tag: tag[0], Fields: make([]any, 0, n)}
	for range n {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, v)
	}
	return s, nil
}

// decodeMessage decodes one whole Bolt message, which must be exactly one struct.
func decodeMessage(b []byte) (Structure, error) {
	d := &decoder{buf: b}
	v, err := d.value()
	if err != nil {
		return Structure{}, err
	}
	s, ok := v.(Structure)
	if !ok {
		return Structure{}, fmt.Errorf("bolt: message is %T, not a struct", v)
	}
	if d.pos != len(b) {
		return Structure{}, errors.New("bolt: trailing bytes after message")
	}
	return s, nil
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

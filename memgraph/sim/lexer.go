package sim

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind classifies the lexemes of the Cypher subset the coordinator grammar needs.
type tokenKind int

const (
	tokEOF    tokenKind = iota
	tokWord             // bare identifier or keyword (keywords are matched case-insensitively)
	tokQuoted           // back-quoted symbolic name; never a keyword
	tokString           // '…' or "…" with escapes decoded
	tokInt
	tokFloat
	tokParam // $name or $0
	tokPunct // any other single character
)

type token struct {
	kind tokenKind
	text string // decoded value for strings/quoted names, raw text otherwise
	i    int64
	f    float64
	col  int // 1-based column of the token's first character (line-relative)
	line int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "<EOF>"
	case tokString:
		return strconv.Quote(t.text)
	case tokQuoted:
		return "`" + t.text + "`"
	case tokParam:
		return "$" + t.text
	}
	return t.text
}

// syntaxError mirrors Memgraph's ANTLR-based SyntaxException shape ("line L:C …"); the exact
// wording of ANTLR's expectation lists is not reproduced.
type syntaxError struct {
	line, col int
	msg       string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("line %d:%d %s", e.line, e.col, e.msg) }

type lexer struct {
	src       string
	pos       int
	line      int
	lineStart int
}

func lex(src string) ([]token, error) {
	l := &lexer{src: src, line: 1}
	var out []token
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if t.kind == tokEOF {
			return out, nil
		}
	}
}

func (l *lexer) errAt(pos int, format string, args ...any) error {
	return &syntaxError{line: l.line, col: pos - l.lineStart, msg: fmt.Sprintf(format, args...)}
}

func (l *lexer) skipSpaceAndComments() error {
	for l.pos < len(l.src) {
		r, w := utf8.DecodeRuneInString(l.src[l.pos:])
		switch {
		case r == '\n':
			l.pos++
			l.line++
			l.lineStart = l.pos
		case unicode.IsSpace(r):
			l.pos += w
		case strings.HasPrefix(l.src[l.pos:], "//"):
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return l.errAt(l.pos, "unterminated comment")
			}
			for _, c := range l.src[l.pos : l.pos+2+end+2] {
				if c == '\n' {
					l.line++
				}
			}
			l.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

func (l *lexer) next() (token, error) {
	if err := l.skipSpaceAndComments(); err != nil {
		return token{}, err
	}
	start := l.pos
	t := token{col: start - l.lineStart, line: l.line}
	if l.pos >= len(l.src) {
		return t, nil
	}
	r, w := utf8.DecodeRuneInString(l.src[l.pos:])
	switch {
	case r == '_' || unicode.IsLetter(r):
		l.pos += w
		l.pos += identLen(l.src[l.pos:])
		t.kind, t.text = tokWord, l.src[start:l.pos]
	case r == '`':
		s, err := l.backQuoted()
		if err != nil {
			return t, err
		}
		t.kind, t.text = tokQuoted, s
	case r == '\'' || r == '"':
		s, err := l.quoted(byte(r))
		if err != nil {
			return t, err
		}
		t.kind, t.text = tokString, s
	case r >= '0' && r <= '9':
		return l.number(t)
	case r == '$':
		l.pos++
		n := identLen(l.src[l.pos:])
		if n == 0 {
			return t, l.errAt(start, "mismatched input '$' expecting a parameter name")
		}
		l.pos += n
		t.kind, t.text = tokParam, l.src[start+1:l.pos]
	default:
		l.pos += w
		t.kind, t.text = tokPunct, string(r)
	}
	return t, nil
}

func identLen(s string) int {
	n := 0
	for n < len(s) {
		r, w := utf8.DecodeRuneInString(s[n:])
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		n += w
	}
	return n
}

func (l *lexer) backQuoted() (string, error) {
	start := l.pos
	l.pos++
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		if c == '`' {
			if l.pos+1 < len(l.src) && l.src[l.pos+1] == '`' {
				b.WriteByte('`')
				l.pos += 2
				continue
			}
			l.pos++
			if b.Len() == 0 {
				return "", l.errAt(start, "empty back-quoted name")
			}
			return b.String(), nil
		}
		b.WriteByte(c)
		l.pos++
	}
	return "", l.errAt(start, "token recognition error at: '%s'", l.src[start:])
}

// quoted decodes a Cypher string literal: backslash escapes \\ \' \" \b \f \n \r \t \uXXXX \UXXXXXXXX.
func (l *lexer) quoted(q byte) (string, error) {
	start := l.pos
	l.pos++
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == q:
			l.pos++
			return b.String(), nil
		case c == '\\':
			if err := l.escape(&b, start); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
			l.pos++
		}
	}
	return "", l.errAt(start, "token recognition error at: '%s'", l.src[start:])
}

func (l *lexer) escape(b *strings.Builder, start int) error {
	if l.pos+1 >= len(l.src) {
		return l.errAt(start, "token recognition error at: '%s'", l.src[start:])
	}
	simple := map[byte]byte{'\\': '\\', '\'': '\'', '"': '"', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
	e := l.src[l.pos+1]
	if v, ok := simple[e]; ok {
		b.WriteByte(v)
		l.pos += 2
		return nil
	}
	digits := map[byte]int{'u': 4, 'U': 8}[e]
	if digits == 0 || l.pos+2+digits > len(l.src) {
		return l.errAt(l.pos, "token recognition error at: '%s'", l.src[l.pos:min(l.pos+2, len(l.src))])
	}
	v, err := strconv.ParseUint(l.src[l.pos+2:l.pos+2+digits], 16, 32)
	if err != nil || !utf8.ValidRune(rune(v)) {
		return l.errAt(l.pos, "token recognition error at: '%s'", l.src[l.pos:l.pos+2+digits])
	}
	b.WriteRune(rune(v))
	l.pos += 2 + digits
	return nil
}

func (l *lexer) number(t token) (token, error) {
	start := l.pos
	s := l.src
	if strings.HasPrefix(s[l.pos:], "0x") || strings.HasPrefix(s[l.pos:], "0X") {
		l.pos += 2
		for l.pos < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[l.pos]) >= 0 {
			l.pos++
		}
	} else {
		for l.pos < len(s) && (s[l.pos] >= '0' && s[l.pos] <= '9') {
			l.pos++
		}
		if l.pos+1 < len(s) && s[l.pos] == '.' && s[l.pos+1] >= '0' && s[l.pos+1] <= '9' {
			l.pos++
			for l.pos < len(s) && (s[l.pos] >= '0' && s[l.pos] <= '9') {
				l.pos++
			}
			t.kind = tokFloat
		}
		if l.pos < len(s) && (s[l.pos] == 'e' || s[l.pos] == 'E') {
			l.pos++
			if l.pos < len(s) && (s[l.pos] == '+' || s[l.pos] == '-') {
				l.pos++
			}
			for l.pos < len(s) && (s[l.pos] >= '0' && s[l.pos] <= '9') {
				l.pos++
			}
			t.kind = tokFloat
		}
	}
	t.text = s[start:l.pos]
	if t.kind == tokFloat {
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return t, l.errAt(start, "invalid number '%s'", t.text)
		}
		t.f = f
		return t, nil
	}
	i, err := strconv.ParseInt(t.text, 0, 64)
	if err != nil {
		return t, l.errAt(start, "invalid integer literal '%s'", t.text)
	}
	t.kind, t.i = tokInt, i
	return t, nil
}
